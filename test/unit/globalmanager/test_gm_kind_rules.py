"""A kind's rules are plain functions over a ``KindContext``: they can be tested by calling them, with no
``JobController``, no queue and no informer. The context is built here over a FakeClientset, a job cache filled by
hand (an ``Indexer``, no informer) and a recorder of the wake-ups the rules ask for (instead of a queue)."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry
from sedna_test_helpers import NOW, FakeTimer

from apis import meta
from apis import resources as r
from apis.fake import FakeClientset
from apis.record import EventRecorder
from globalmanager.controllers.reid import KIND as REID
from globalmanager.runtime import Kind, KindContext, RecordingEdgeLink, UpstreamMessage
from globalmanager.runtime.context import MAX_CREATED_NAMED, created_message
from globalmanager.runtime.jobstate import JobStates
from globalmanager.runtime.metrics import controller_metrics
from globalmanager.runtime.selfheal import RECREATION_TTL
from informers import Indexer, Lister

NS = "default"


class WakeUps:
    """Stands in for the queue: the only thing rules reach through it is ``ctx.requeue_after``."""

    def __init__(self) -> None:
        self.after: list[tuple[str, float]] = []

    def add_after(self, key: str, delay: float) -> None:
        self.after.append((key, delay))


def rule_context(kind: Kind[Any], cs: FakeClientset, wake_ups: WakeUps) -> KindContext[Any]:
    """The ``KindContext`` of ``kind`` over ``cs``, its jobs cached as the API server has them now."""
    jobs = Indexer()
    for job in cs.resource(kind.resource, "").list()["items"]:
        jobs.add(job)
    ctx: KindContext[Any] = KindContext(
        kind, clientset=cs, job_lister=Lister(jobs, kind.resource), owned_informers={}, listers={}, nodes=None,
        job_states=JobStates(RECREATION_TTL, FakeTimer()), queue=wake_ups,  # type: ignore[arg-type]
        recorder=EventRecorder(cs, "sedna-gm"), metrics=controller_metrics(CollectorRegistry()),
        edge=RecordingEdgeLink(), now=lambda: NOW, lc_server="http://lc:9100", kb_server="http://kb:9020",
    )
    ctx.state = kind.state(ctx)
    return ctx


def reid_job(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "ReidJob", "metadata": {"name": "r", "namespace": NS},
            "spec": spec}


def events(cs: FakeClientset) -> list[tuple[str, str]]:
    return [(e["type"], e["reason"]) for e in cs.core_v1().events(NS).list()["items"]]


def test_reids_sync_fails_a_job_without_template_with_no_queue_and_no_informer():
    cs = FakeClientset(reid_job(backoffLimit=2))
    wake_ups = WakeUps()
    ctx = rule_context(REID, cs, wake_ups)
    job = ctx.get_job(f"{NS}/r")
    assert job is not None
    assert REID.sync(ctx, f"{NS}/r", job) is None  # final: nothing to retry
    status = cs.resource(r.REID_JOBS, NS).get("r")["status"]
    assert status["phase"] == "Failed"
    (failed,) = status["conditions"]
    assert (failed["type"], failed["reason"], failed["message"]) == ("Failed", "InvalidSpec", "spec.template is required")
    assert events(cs) == [("Warning", "InvalidSpec")] and wake_ups.after == []
    assert not [a for a in cs.actions() if a.verb == "create" and a.resource == "pods"]


def test_reids_edge_hook_turns_a_report_into_a_condition():
    cs = FakeClientset(reid_job())
    ctx = rule_context(REID, cs, WakeUps())
    assert REID.from_edge is not None
    REID.from_edge(ctx, UpstreamMessage("edge-1", NS, "reidjob", "r", "status", {"phase": "inference",
                                                                                  "status": "running"}))
    (cond,) = cs.resource(r.REID_JOBS, NS).get("r")["status"]["conditions"]
    assert (cond["type"], cond["reason"], cond["lastHeartbeatTime"]) == ("Running", "ReportedByEdge", NOW)
    assert cond["message"] == "reported by the edge (node edge-1, phase inference)"


def test_a_rule_that_asks_for_a_wake_up_and_creates_an_owned_object():
    """A rule of a small kind declared here: a job with ``spec.waitSeconds`` gets a ConfigMap and a wake-up."""

    def sync(ctx: KindContext[None], key: str, job: dict[str, Any]) -> None:
        wait = float((job.get("spec") or {}).get("waitSeconds", 0))
        if wait:
            ctx.create_owned(r.CONFIG_MAPS, job, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                "name": f"{meta.name(job)}-waiting", "namespace": meta.namespace(job),
                "ownerReferences": [meta.new_controller_ref(job)]}})
            ctx.requeue_after(key, wait)

    waiting: Kind[None] = Kind(name="Waiting", resource=r.REID_JOBS, sync=sync, owns=(r.CONFIG_MAPS,))
    cs = FakeClientset(reid_job(waitSeconds=30))
    wake_ups = WakeUps()
    ctx = rule_context(waiting, cs, wake_ups)
    job = ctx.get_job(f"{NS}/r")
    assert job is not None
    waiting.sync(ctx, f"{NS}/r", job)
    assert wake_ups.after == [(f"{NS}/r", 30.0)]
    (created,) = cs.core_v1().config_maps(NS).list()["items"]
    assert meta.name(created) == "r-waiting" and meta.is_controlled_by(created, job)
    assert events(cs) == [("Normal", "SuccessfulCreate")]



def test_a_sync_asks_the_api_server_once_whether_its_job_is_live():
    cs = FakeClientset(reid_job())
    ctx = rule_context(REID, cs, WakeUps())
    job = ctx.get_job(f"{NS}/r")
    assert job is not None

    def live_checks() -> int:
        return len([a for a in cs.actions() if a.verb == "get" and a.resource == "reidjobs"])

    with ctx.sync_scope(job):  # e.g. a sync creating three workers
        assert [ctx.job_is_live(job) for _ in range(3)] == [True, True, True]
    assert live_checks() == 1
    assert ctx.job_is_live(job) and live_checks() == 2  # outside a sync: asked every time
    cs.resource(r.REID_JOBS, NS).delete("r")
    with ctx.sync_scope(job):  # the next sync asks again: the cache still shows the job, the API server has none
        assert not ctx.job_is_live(job) and not ctx.job_is_live(job)
    assert live_checks() == 4


def test_a_syncs_creations_are_told_in_one_bounded_event():
    assert created_message(["pod a"]) == "created pod a"
    assert created_message(["pod a", "service b", "pod c"]) == "created pod a, service b and pod c"
    many = [f"pod p{i}" for i in range(MAX_CREATED_NAMED + 5)]
    assert created_message(many) == f"created {', '.join(many[:MAX_CREATED_NAMED])} and 5 more"
