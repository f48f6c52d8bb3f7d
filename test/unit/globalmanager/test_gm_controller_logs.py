"""JobController log lines and metric help: what an operator reads must be true and name the object."""

from __future__ import annotations

import threading
from typing import Any

import structlog
from prometheus_client import CollectorRegistry

from apis.fake import FakeClientset
from apis.resources import ELASTIC_AI_JOBS, PODS
from globalmanager.runtime import JobController, Kind, KindContext
from globalmanager.runtime.metrics import ControllerMetrics
from informers import DeletedFinalStateUnknown, SharedInformerFactory


def _sync_nothing(ctx: KindContext[None], key: str, job: dict[str, Any]) -> None:
    return None


QUIET: Kind[None] = Kind(name="Quiet", resource=ELASTIC_AI_JOBS, sync=_sync_nothing, owns=(PODS,))


def quiet() -> JobController[None]:
    cs = FakeClientset()
    return JobController(QUIET, cs, SharedInformerFactory(cs), 1, registry=CollectorRegistry())


def test_metric_help_lists_only_results_that_are_emitted():
    registry = CollectorRegistry()
    ControllerMetrics(registry)
    help_text = {m.name: m.documentation for m in registry.collect()}["sedna_gm_controller_sync"]
    assert "requeue" not in help_text
    for result in ("success", "error", "dropped"):
        assert result in help_text


SECRET_VALUE = "c2VjcmV0LXRva2Vu"


def test_an_object_without_a_key_is_named_by_kind_and_type_never_by_content():
    c = quiet()
    with structlog.testing.capture_logs() as logs:
        c.enqueue_controller({"kind": "Secret", "data": {"token": SECRET_VALUE}})  # no metadata at all
    c.queue.shut_down()
    warning = [entry for entry in logs if entry["event"] == "cannot get key for object; not queued"]
    assert len(warning) == 1
    assert warning[0]["kind"] == "Secret" and warning[0]["type"] == "dict"
    assert SECRET_VALUE not in str(logs)


def test_a_delete_of_another_kind_is_logged_with_its_key_and_type_never_its_content():
    c = quiet()
    secret = {"kind": "Secret", "metadata": {"namespace": "ns", "name": "s3"}, "data": {"token": SECRET_VALUE}}
    with structlog.testing.capture_logs() as logs:
        c._delete_owned(PODS, DeletedFinalStateUnknown("ns/s3", secret))
        c._delete_owned(PODS, ["not", "an", "object", SECRET_VALUE])
    c.queue.shut_down()
    warnings = [e for e in logs if e["event"] == "delete handler of pods: not a Pod; ignored"]
    assert [(e.get("key"), e.get("kind"), e["type"]) for e in warnings] == [("ns/s3", "Secret", "dict"),
                                                                            (None, None, "list")]
    assert SECRET_VALUE not in str(logs)
    assert len(c.queue) == 0


def test_stopping_before_the_caches_synced_is_not_an_error():
    c = quiet()  # informers never started: the caches never sync
    stop = threading.Event()
    stop.set()
    with structlog.testing.capture_logs() as logs:
        c.run(stop)
    assert [e for e in logs if e["log_level"] == "error"] == []
    assert any(e["event"] == "stopped before the caches synced" for e in logs)
