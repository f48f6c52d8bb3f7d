"""How a failed sync is logged and counted, the same for the job kinds (``JobController``) and for Dataset and Model
(the same ``reconcile.Controller``): an answer of the API server is an expected failure (controller, key, status code, reason and message,
no traceback); anything else is a bug and is logged with its traceback. Every sync of either is counted and timed in
``sedna_gm_controller_sync_total`` / ``sedna_gm_controller_sync_duration_seconds``."""

from __future__ import annotations

from typing import Any

import pytest
import structlog
from prometheus_client import CollectorRegistry

from apis import errors
from apis.fake import FakeClientset
from apis.record import EventRecorder
from apis.resources import ELASTIC_AI_JOBS
from globalmanager.controllers.context import ControllerContext
from globalmanager.controllers.dataset import DatasetController
from globalmanager.controllers.model import model_router
from globalmanager.runtime import JobController, Kind, KindContext
from globalmanager.runtime.edge import RecordingEdgeLink
from informers import SharedInformerFactory
from reconcile import MAX_RETRY_DELAY, controller_rate_limiter

FORBIDDEN = ('pods is forbidden: User "system:serviceaccount:sedna:sedna" cannot create resource "pods" in API '
             'group "" in the namespace "ns"')
API_ANSWERS = [
    errors.ForbiddenError(403, "Forbidden", FORBIDDEN),
    errors.NotFoundError(404, "NotFound", 'secrets "s3" not found'),
    errors.ConflictError(409, "Conflict", 'Operation cannot be fulfilled on pods "p": the object has been modified'),
    errors.InvalidError(422, "Invalid", 'Pod "p" is invalid: spec.containers: Required value'),
]


class Failing:
    """A ``JobController`` of a kind whose sync raises ``error`` (``None``: it works) for its one job ``ns/job``."""

    def __init__(self, registry: CollectorRegistry, error: Exception | None, max_retries: int | None = None) -> None:
        self.error = error
        cs = FakeClientset({"apiVersion": "elasticdl.org/v1alpha1", "kind": "ElasticAIJob",
                            "metadata": {"name": "job", "namespace": "ns"}})
        kind: Kind[None] = Kind(name="Failing", resource=ELASTIC_AI_JOBS, sync=self.sync)
        self.controller = JobController(kind, cs, SharedInformerFactory(cs), 1, registry=registry,
                                        max_retries=max_retries)
        self.controller.job_informer.informer().get_indexer().add(cs.resource(ELASTIC_AI_JOBS, "ns").get("job"))
        self.loop, self.queue = self.controller.loop, self.controller.queue

    def sync(self, ctx: KindContext[None], key: str, job: dict[str, Any]) -> None:
        if self.error is not None:
            raise self.error


@pytest.fixture
def logs(monkeypatch):
    """The log lines of the controllers built in the test (fresh loggers, bound under ``capture_logs``: a logger
    cached by an earlier test's logging set-up would write elsewhere)."""
    import globalmanager.controllers.dataset.controller as dataset_module
    import globalmanager.runtime.jobcontroller as controller_module

    with structlog.testing.capture_logs() as captured:
        for module in (controller_module, dataset_module):
            monkeypatch.setattr(module, "log", structlog.get_logger(module.__name__))
        yield captured


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


def failures(logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in logs if e["event"].startswith("sync failed")]


@pytest.mark.parametrize("error", API_ANSWERS, ids=lambda e: str(e.status))
def test_an_api_servers_answer_is_logged_with_its_code_reason_and_message_and_no_traceback(error, logs):
    registry = CollectorRegistry()
    c = Failing(registry, error)
    c.loop.process("ns/job")
    (line,) = failures(logs)
    assert line["event"] == "sync failed, requeueing" and line["log_level"] == "warning"
    assert (line["controller"], line["key"], line["failures"], line["suppressed"]) == ("Failing", "ns/job", 1, 0)
    assert line["retry_in"] == 0.005
    assert (line["status_code"], line["reason"], line["error"]) == (error.status, error.reason, error.message)
    assert "exc_info" not in line
    assert c.queue.num_requeues("ns/job") == 1
    assert sample(registry, "sedna_gm_controller_sync_total", controller="Failing", result="error") == 1
    c.queue.shut_down()


def test_a_key_dropped_after_its_retries_is_logged_the_same_way(logs):
    registry = CollectorRegistry()
    c = Failing(registry, API_ANSWERS[0], max_retries=1)
    c.loop.process("ns/job")
    c.loop.process("ns/job")
    assert [(e["event"], e["log_level"]) for e in failures(logs)] == [
        ("sync failed, requeueing", "warning"), ("sync failed too often, dropping key", "error")]
    dropped = failures(logs)[1]
    assert (dropped["status_code"], dropped["reason"], dropped["error"]) == (403, "Forbidden", FORBIDDEN)
    assert "exc_info" not in dropped
    assert c.queue.num_requeues("ns/job") == 0
    assert sample(registry, "sedna_gm_controller_sync_total", controller="Failing", result="dropped") == 1
    c.queue.shut_down()


class FakeTime:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_job_kind_never_drops_a_failing_key_and_logs_it_at_a_bounded_rate(logs):
    """Go Sedna: AddRateLimited with no retry limit. A dropped key would never come back (resyncs are ignored)."""
    registry = CollectorRegistry()
    c = Failing(registry, API_ANSWERS[0])
    c.loop.failure_log.clock = clock = FakeTime()
    for _ in range(30):
        c.loop.process("ns/job")
    assert c.loop.failures("ns/job") == 30 and c.queue.num_requeues("ns/job") == 30
    assert sample(registry, "sedna_gm_controller_sync_total", controller="Failing", result="error") == 30
    assert sample(registry, "sedna_gm_controller_sync_total", controller="Failing", result="dropped") == 0
    assert [(e["failures"], e["suppressed"]) for e in failures(logs)] == [(1, 0)]  # the first failure only
    clock.now += c.loop.failure_log.interval
    c.loop.process("ns/job")
    line = failures(logs)[-1]
    assert (line["failures"], line["suppressed"], line["retry_in"]) == (31, 29, 360.0)  # the capped backoff
    assert (line["status_code"], line["key"]) == (403, "ns/job")
    c.error = None  # the quota was raised
    c.loop.process("ns/job")
    recovered = [e for e in logs if e["event"] == "sync succeeded after failures"]
    assert [(e["key"], e["failures"]) for e in recovered] == [("ns/job", 31)]
    assert c.loop.failures("ns/job") == 0 and c.queue.num_requeues("ns/job") == 0
    c.queue.shut_down()


def test_the_job_kinds_backoff_starts_fast_and_is_capped_at_a_few_minutes():
    limiter = controller_rate_limiter()
    delays = [limiter.when("ns/job") for _ in range(30)]
    assert delays[:3] == [0.005, 0.01, 0.02]
    assert max(delays) == delays[-1] == MAX_RETRY_DELAY == 360.0


def test_a_lost_connection_is_expected_too(logs):
    c = Failing(CollectorRegistry(), ConnectionRefusedError("connection refused: https://10.0.0.1:6443"))
    c.loop.process("ns/job")
    (line,) = failures(logs)
    assert line["error_type"] == "ConnectionRefusedError" and "exc_info" not in line and "status_code" not in line
    c.queue.shut_down()


def test_an_unexpected_exception_carries_its_traceback(logs):
    bug = KeyError("spec")
    c = Failing(CollectorRegistry(), bug)
    c.loop.process("ns/job")
    (line,) = failures(logs)
    assert line["exc_info"] is bug and "status_code" not in line
    c.queue.shut_down()


# -- Dataset and Model ----------------------------------------------------------------------------------------
def context(cs: FakeClientset, registry: CollectorRegistry) -> ControllerContext:
    return ControllerContext(clientset=cs, informer_factory=SharedInformerFactory(cs),
                             recorder=EventRecorder(cs, "sedna-gm"), edge=RecordingEdgeLink(), registry=registry)


def test_dataset_and_model_syncs_are_counted_and_timed():
    registry = CollectorRegistry()
    cs = FakeClientset()
    ctx = context(cs, registry)
    datasets, models = DatasetController(ctx), model_router(ctx)
    datasets.loop.process("ns/d1")  # gone: nothing to do, a success
    models.loop.process("ns/m1")
    for name in ("Dataset", "Model"):
        assert sample(registry, "sedna_gm_controller_sync_total", controller=name, result="success") == 1
        assert sample(registry, "sedna_gm_controller_sync_duration_seconds_count", controller=name) == 1
    datasets.loop.queue.shut_down()
    models.loop.queue.shut_down()


def test_a_dataset_whose_secret_is_forbidden_is_retried_and_logged_without_a_traceback(logs):
    registry = CollectorRegistry()
    message = 'secrets "s3" is forbidden: User "system:serviceaccount:sedna:sedna" cannot get resource "secrets"'
    cs = FakeClientset()
    cs.prepend_reactor("get", "secrets", lambda action: (True, None, errors.ForbiddenError(403, "Forbidden", message)))
    controller = DatasetController(context(cs, registry))
    dataset = cs.sedna_v1alpha1().datasets("ns").create({
        "apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"namespace": "ns", "name": "d1"},
        "spec": {"url": "s3://b/d1.txt", "format": "txt", "nodeName": "edge-1", "credentialName": "s3"}})
    controller.informer.get_indexer().add(dataset)
    controller.loop.process("ns/d1")
    (line,) = failures(logs)
    assert (line["controller"], line["key"], line["status_code"], line["reason"], line["error"]) == (
        "Dataset", "ns/d1", 403, "Forbidden", message)
    assert "exc_info" not in line
    assert controller.loop.queue.num_requeues("ns/d1") == 1
    assert sample(registry, "sedna_gm_controller_sync_total", controller="Dataset", result="error") == 1
    controller.loop.queue.shut_down()
