"""``JobController`` running a small ``Kind`` declared here: self-healing workers, rate-limited requeue without a
retry limit (or a drop after ``max_retries`` when one is set), bounded drain, handlers, per-job state, edge hooks, the
``Kind`` hooks (``replaces_workers_on_new_generation``, ``job_of``, ``should_recreate``, ``recreate``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from testkit import wait_for

from apis import meta
from apis.fake import FakeClientset
from apis.resources import DEPLOYMENTS, ELASTIC_AI_JOBS, PODS, SERVICES
from globalmanager.controllers.elasticdl.controller import KIND as ELASTICDL
from globalmanager.runtime import JobController, Kind, KindContext
from globalmanager.runtime.edge import RecordingEdgeLink
from globalmanager.runtime.pods import pod_update_matters
from informers import DeletedFinalStateUnknown, SharedInformerFactory
from reconcile import Result
from workqueue import ItemExponentialFailureRateLimiter

API_VERSION = "elasticdl.org/v1alpha1"


def _job(name: str, uid: str = "", ns: str = "ns", rv: str = "1") -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": "ElasticAIJob",
            "metadata": {"name": name, "namespace": ns, "uid": uid, "resourceVersion": rv}}


def _owned(kind: str, name: str, owner: dict[str, Any], rv: str = "1") -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv, "ownerReferences": [
        {"apiVersion": API_VERSION, "kind": "ElasticAIJob", "name": meta.name(owner),
         "uid": meta.uid(owner), "controller": True}]}}


# -- a scripted kind: its sync does what the test says --------------------------------------------------------------------
class Script:
    """The rules of the ``Scripted`` kind: ``behaviour(script, key)`` is its sync; every synced key is in ``seen``."""

    def __init__(self, behaviour: Callable[[Script, str], Result | None]) -> None:
        self.behaviour = behaviour
        self.seen: list[str] = []
        self.done = threading.Event()

    def sync(self, ctx: KindContext[None], key: str, job: dict[str, Any]) -> Result | None:
        self.seen.append(key)
        return self.behaviour(self, key)


def scripted(behaviour: Callable[[Script, str], Result | None], *jobs: str, cached: bool = False,
             **kw: Any) -> tuple[JobController[None], Script]:
    """A ``JobController`` of the ``Scripted`` kind whose jobs ``namespace/name`` exist in the API server (and in
    the job cache when ``cached``; else the informer, once started, lists them and its add events queue them)."""
    script = Script(behaviour)
    cs = FakeClientset(*(_job(key.split("/")[1], f"u-{key}", key.split("/")[0]) for key in jobs))
    kind: Kind[None] = Kind(name="Scripted", resource=ELASTIC_AI_JOBS, sync=script.sync, owns=(PODS,))
    c = JobController(kind, cs, SharedInformerFactory(cs), kw.pop("workers", 1), registry=CollectorRegistry(),
                      rate_limiter=ItemExponentialFailureRateLimiter(0.001, 0.01), **kw)
    for key in jobs if cached else ():
        ns, name = key.split("/")
        c.job_informer.informer().get_indexer().add(cs.resource(ELASTIC_AI_JOBS, ns).get(name))
    return c, script


def count(c: JobController[Any], result: str) -> float:
    return c.metrics.sync_total.labels(controller=c.name, result=result)._value.get()


def run_controller(c: JobController[Any]) -> tuple[threading.Event, threading.Thread]:
    stop = threading.Event()
    c.informer_factory.start(stop)
    t = threading.Thread(target=c.run, args=(stop,))
    t.start()
    wait_for("the controller's caches to sync", c.synced.is_set)  # the suite's bound: a loaded machine is slow
    return stop, t


def stop_controller(c: JobController[Any], stop: threading.Event, t: threading.Thread) -> None:
    stop.set()
    t.join(15)
    c.informer_factory.shutdown()
    assert not t.is_alive()


@pytest.mark.parametrize("failures", [2, 40])  # 40: far beyond the 15 after which a key used to be dropped for good
def test_a_failing_sync_is_retried_until_it_works_and_the_worker_survives(failures):
    def behaviour(s: Script, key: str) -> None:
        if len(s.seen) <= failures:
            raise RuntimeError("transient")
        s.done.set()

    c, s = scripted(behaviour, "ns/a")
    stop, t = run_controller(c)  # the informer's add event queues ns/a
    try:
        assert s.done.wait(10)
    finally:
        stop_controller(c, stop, t)
    assert s.seen == ["ns/a"] * (failures + 1)
    assert count(c, "error") == failures and count(c, "success") == 1 and count(c, "dropped") == 0
    assert c.queue.num_requeues("ns/a") == 0  # forgotten after success


def test_a_requeue_result_keeps_the_rate_limit_history_and_none_forgets_it():
    results: list[Result | None] = [Result(requeue=True), Result(requeue=True), None]
    c, s = scripted(lambda s, key: results[len(s.seen) - 1], "ns/a", cached=True)
    for expected in (1, 2, 0):
        c.loop.process("ns/a")
        assert c.queue.num_requeues("ns/a") == expected
    assert count(c, "error") == 0
    c.queue.shut_down()


def test_key_dropped_after_max_retries():
    def behaviour(s: Script, key: str) -> None:
        if len(s.seen) == 3:
            s.done.set()
        raise ValueError("always")

    c, s = scripted(behaviour, "ns/a", max_retries=2)
    stop, t = run_controller(c)  # the informer's add event queues ns/a (once: a second add could sync it again)
    try:
        wait_for("the third sync", s.done.is_set)
        wait_for("the key dropped after its third failed sync", lambda: count(c, "dropped") == 1)
    finally:
        stop_controller(c, stop, t)
    assert s.seen == ["ns/a"] * 3
    assert count(c, "dropped") == 1 and count(c, "error") == 2


def test_invalid_keys_are_forgotten_without_calling_sync():
    c, s = scripted(lambda s, k: None)
    c.queue.add("no-namespace")
    assert c.process_next_work_item() is True
    assert s.seen == []
    c.queue.shut_down()
    assert c.process_next_work_item() is False


def test_a_job_gone_from_the_cache_never_reaches_the_kinds_sync_and_its_state_is_dropped():
    c, s = scripted(lambda s, k: None, "ns/a", cached=True)
    job = c.ctx.get_job("ns/a")
    assert job is not None
    c.ctx.job_state(job).note_slot_created("ns/a-worker")
    c.ctx.prevent_recreation.add("ns/a")
    c.job_informer.informer().get_indexer().delete(job)  # its delete event not handled (a missed watch event)
    assert c.sync("ns/a") is None
    assert s.seen == [] and len(c.job_states) == 0 and "ns/a" not in c.ctx.prevent_recreation
    c.queue.shut_down()


def test_shutdown_waits_for_in_flight_work_but_is_bounded():
    release = threading.Event()
    entered = threading.Event()

    def behaviour(s: Script, key: str) -> None:
        entered.set()
        release.wait(10)

    c, s = scripted(behaviour, "ns/slow", "ns/never", cached=True, drain_timeout=0.2)  # queued by the test only
    stop, t = run_controller(c)
    try:
        c.queue.add("ns/slow")
        c.queue.add("ns/never")  # queued behind: not taken once stopping
        assert entered.wait(5)
        assert c.shutdown(timeout=0.2) is False  # still busy: gives up after the bound
    finally:
        release.set()
        stop_controller(c, stop, t)
    assert "ns/never" not in s.seen


def test_pod_handlers_resolve_the_controller_ref_with_uid_check():
    c, _ = scripted(lambda s, k: None)
    job = _job("j", "u1")
    c.job_informer.informer().get_indexer().add(job)

    def pod(uid: str, kind: str = "ElasticAIJob", rv: str = "1", phase: str = "Running") -> dict[str, Any]:
        return {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "resourceVersion": rv, "ownerReferences": [
            {"apiVersion": API_VERSION, "kind": kind, "name": "j", "uid": uid, "controller": True}]},
            "status": {"phase": phase}}

    c.add_pod(pod("other-uid"))
    c.add_pod(pod("u1", kind="Job"))
    c.update_pod(pod("u1"), pod("u1"))  # same resourceVersion: ignored
    assert c.queue.len() == 0
    c.add_pod(pod("u1"))
    assert c.queue.len() == 1
    c.queue.shut_down()


def test_a_shutdown_racing_with_the_workers_start_still_waits_for_them(monkeypatch):
    """The workers are registered before they start: a shutdown right after a start sees them."""
    release, entered, results = threading.Event(), threading.Event(), []

    def behaviour(s: Script, key: str) -> None:
        entered.set()
        release.wait(10)

    c, _ = scripted(behaviour, "ns/slow", cached=True, drain_timeout=0.2)
    real_thread = threading.Thread

    class RacingStart(real_thread):  # type: ignore[misc,valid-type]
        def start(self) -> None:
            super().start()
            if self.name.startswith("Scripted-worker"):
                entered.wait(5)
                results.append(c.shutdown(timeout=0.2))  # before run() has done anything else

    monkeypatch.setattr(threading, "Thread", RacingStart)
    c.queue.add("ns/slow")
    stop, t = run_controller(c)
    try:
        wait_for("the racing shutdown", lambda: results, timeout=10)
        assert results == [False]  # it waited (bounded) for the busy worker
    finally:
        release.set()
        stop_controller(c, stop, t)


# -- owned objects, per-job state, edge hooks, Kind hooks ------------------------------------------------------------------
def _done(ctx: KindContext[None], key: str, job: dict[str, Any]) -> None:
    return None


def owning(cs: FakeClientset, factory: SharedInformerFactory | None = None, **kind_fields: Any) -> JobController[None]:
    """A controller of a kind that owns pods, Deployments and Services of ElasticAIJobs and recreates Deployments."""
    kind: Kind[None] = Kind(name="Owning", resource=ELASTIC_AI_JOBS, sync=_done, owns=(PODS, DEPLOYMENTS, SERVICES),
                            recreates=(DEPLOYMENTS,), **kind_fields)
    edge = kind_fields.get("to_edge") or kind_fields.get("from_edge")
    return JobController(kind, cs, factory or SharedInformerFactory(cs), 1, registry=CollectorRegistry(),
                         edge=RecordingEdgeLink() if edge else None)


def test_kind_comes_from_the_job_resource_and_get_job_is_typed():
    cs = FakeClientset()
    c = owning(cs)
    assert (c.kind, c.ctx.kind, c.ctx.gvk.api_version) == ("ElasticAIJob", "ElasticAIJob", API_VERSION)
    c.job_informer.informer().get_indexer().add({"metadata": {"name": "j", "namespace": "ns", "uid": "u"}})
    job = c.ctx.get_job("ns/j")
    assert job is not None and job["kind"] == "ElasticAIJob" and job["apiVersion"] == API_VERSION
    assert c.ctx.get_job("ns/other") is None
    with pytest.raises(ValueError, match="must also be owned"):
        Kind(name="x", resource=ELASTIC_AI_JOBS, sync=_done, recreates=(PODS,))
    with pytest.raises(ValueError, match="workers must be >= 1"):
        JobController(Kind(name="x", resource=ELASTIC_AI_JOBS, sync=_done), cs, SharedInformerFactory(cs), 0)
    c.queue.shut_down()


def test_owned_objects_are_found_by_index_and_mapped_back_with_the_uid_check():
    cs = FakeClientset()
    factory = SharedInformerFactory(cs)
    c = owning(cs, factory)
    other = owning(cs, factory)  # a second controller over the same shared informers
    job, stranger = _job("j", "u1"), _job("k", "u2")
    c.job_informer.informer().get_indexer().add(job)
    deployments = factory.apps_v1().deployments().informer().get_indexer()
    deployments.add(_owned("Deployment", "d1", job))
    deployments.add(_owned("Deployment", "d2", stranger))
    assert [meta.name(d) for d in c.ctx.owned(DEPLOYMENTS, job)] == ["d1"]
    c.add_deployment(_owned("Deployment", "d2", stranger))  # its job is not cached
    c.add_deployment(_owned("Deployment", "d3", _job("j", "old-uid")))  # a former job of the same name
    c.update_deployment(_owned("Deployment", "d1", job), _owned("Deployment", "d1", job))  # resync: same RV
    assert c.queue.len() == 0
    relabelled = _owned("Deployment", "d1", job, rv="2")
    relabelled["metadata"]["labels"] = {"changed": "yes"}
    c.update_deployment(_owned("Deployment", "d1", job), relabelled)
    c.add_pod(_owned("Pod", "p", job))
    assert c.queue.len() == 1  # both woke ns/j once
    c.queue.shut_down()
    other.queue.shut_down()


def _deployment(job: dict[str, Any], rv: str, available: str, **status: Any) -> dict[str, Any]:
    d = _owned("Deployment", "d1", job, rv=rv)
    d["spec"] = {"replicas": 1, "template": {"spec": {"containers": [{"name": "w", "image": "i"}]}}}
    d["status"] = {"conditions": [{"type": "Available", "status": available, "lastUpdateTime": f"t{rv}"}], **status}
    return d


def test_a_deployment_update_wakes_its_job_only_when_a_sync_could_act_on_it():
    cs = FakeClientset()
    c = owning(cs, SharedInformerFactory(cs))
    job = _job("j", "u1")
    c.job_informer.informer().get_indexer().add(job)
    first = _deployment(job, "1", "False")
    # the deployment controller's bookkeeping: counts, observedGeneration, a condition's timestamp
    counted = _deployment(job, "2", "False", replicas=1, updatedReplicas=1, observedGeneration=1)
    c.update_deployment(first, counted)
    assert c.queue.len() == 0
    available = _deployment(job, "3", "True", replicas=1, availableReplicas=1)  # its health changed
    c.update_deployment(counted, available)
    assert c.queue.len() == 1
    assert c.queue.get() == ("ns/j", False)
    c.queue.done("ns/j")
    rescaled = _deployment(job, "4", "True", replicas=1, availableReplicas=1)
    rescaled["spec"]["replicas"] = 2  # its spec changed (a sync restores what the job says)
    c.update_deployment(available, rescaled)
    assert c.queue.len() == 1
    assert c.queue.get() == ("ns/j", False)
    c.queue.done("ns/j")
    annotated = _deployment(job, "5", "True", replicas=1, availableReplicas=1)
    annotated["spec"]["replicas"] = 2
    annotated["metadata"]["annotations"] = {"sedna.io/spec-hash": "other"}  # what the sync compares with the job
    c.update_deployment(rescaled, annotated)
    assert c.queue.len() == 1
    c.queue.shut_down()


def _pod(job: dict[str, Any], rv: str, phase: str, **status: Any) -> dict[str, Any]:
    pod = _owned("Pod", "p", job, rv=rv)
    pod["status"] = {"phase": phase, **status}
    return pod


def test_a_kind_that_reads_pod_phases_sleeps_through_the_kubelets_updates_within_a_phase():
    cs = FakeClientset()
    c = owning(cs, owned_update_matters=lambda gvr, old, cur: pod_update_matters(old, cur))
    job = _job("j", "u1")
    c.job_informer.informer().get_indexer().add(job)
    created = _pod(job, "1", "Pending")
    bound = _pod(job, "2", "Pending")
    bound["spec"] = {"nodeName": "edge-1"}  # the scheduler's binding
    creating = _pod(job, "3", "Pending", conditions=[{"type": "PodScheduled", "status": "True"}],
                    containerStatuses=[{"name": "w", "state": {"waiting": {"reason": "ContainerCreating"}}}])
    c.update_pod(created, bound)
    c.update_pod(bound, creating)
    assert c.queue.len() == 0
    running = _pod(job, "4", "Running", podIP="10.0.0.1")
    c.update_pod(creating, running)
    assert c.queue.get() == ("ns/j", False)
    c.queue.done("ns/j")
    ready = _pod(job, "5", "Running", podIP="10.0.0.1", conditions=[{"type": "Ready", "status": "True"}])
    c.update_pod(running, ready)
    assert c.queue.len() == 0
    relabelled = _pod(job, "6", "Running")
    relabelled["metadata"]["labels"] = {"elasticdl-replica-type": "master"}  # what a sync reads of its metadata
    c.update_pod(ready, relabelled)
    assert c.queue.len() == 1
    c.queue.shut_down()


def test_without_a_predicate_every_pod_update_wakes_its_job():
    cs = FakeClientset()
    c = owning(cs)
    job = _job("j", "u1")
    c.job_informer.informer().get_indexer().add(job)
    c.update_pod(_pod(job, "1", "Pending"), _pod(job, "2", "Pending", podIP="10.0.0.1"))
    assert c.queue.len() == 1
    c.queue.shut_down()


def test_the_elasticaijob_kind_reads_pod_phases_and_metadata_only():
    pending = {"metadata": {"labels": {"a": "b"}, "resourceVersion": "1"}, "status": {"phase": "Pending"}}
    creating = {"metadata": {"labels": {"a": "b"}, "resourceVersion": "2"}, "spec": {"nodeName": "n"},
                "status": {"phase": "Pending", "containerStatuses": [{"name": "w"}]}}
    matters = ELASTICDL.owned_update_matters
    assert matters is not None
    assert not matters(PODS, pending, creating)
    assert matters(PODS, creating, {**creating, "status": {"phase": "Running"}})
    assert matters(PODS, creating, {**creating, "metadata": {"labels": {}, "resourceVersion": "3"}})
    assert matters(PODS, creating, {**creating, "metadata": {**creating["metadata"], "deletionTimestamp": "t"}})


def test_per_job_state_is_dropped_when_the_job_goes():
    cs = FakeClientset(_job("j", "u1"))
    c = owning(cs)
    job = cs.elasticdl_v1alpha1().elastic_ai_jobs("ns").get("j")
    state = c.ctx.job_state(job)
    c.ctx.prevent_recreation.add("ns/j")
    state.note_slot_created("ns/j-worker")
    assert c.ctx.mark_recreated(job, PODS, "p") and "ns/p" in c.ctx.recreated_pods
    c.delete_job(DeletedFinalStateUnknown("ns/j", job))
    assert "ns/j" not in c.ctx.prevent_recreation and len(c.job_states) == 0
    assert "ns/p" not in c.ctx.recreated_pods  # dropped with the job, not only after the TTL
    assert c.ctx.job_state(job) is not state and c.ctx.job_state(job).slots_created == {}
    c.ctx.forget_job("ns/j")  # sync found it gone: the same one place
    assert len(c.job_states) == 0
    c.queue.shut_down()


def _gone_deployment(job: dict[str, Any]) -> dict[str, Any]:
    gone = {**_owned("Deployment", "d", job), "apiVersion": "apps/v1", "spec": {"replicas": 1},
            "status": {"replicas": 1}}
    gone["metadata"]["uid"] = "old"
    return gone


def _cached_job(cs: FakeClientset, c: JobController[Any]) -> dict[str, Any]:
    job = cs.elasticdl_v1alpha1().elastic_ai_jobs("ns").get("j")
    c.job_informer.informer().get_indexer().add(job)
    return job


def test_a_deleted_deployment_is_recreated_unless_its_job_is_being_updated():
    cs = FakeClientset(_job("j"))
    c = owning(cs)
    job = _cached_job(cs, c)
    gone = _gone_deployment(job)
    c.ctx.prevent_recreation.add("ns/j")
    c.delete_deployment(gone)
    assert cs.apps_v1().deployments("ns").list()["items"] == []
    c.ctx.prevent_recreation.discard("ns/j")
    c.delete_deployment(DeletedFinalStateUnknown("ns/d", gone))
    (created,) = cs.apps_v1().deployments("ns").list()["items"]
    assert meta.name(created) == "d" and meta.uid(created) != "old" and "status" not in created
    assert c.ctx.creations_pending(job, DEPLOYMENTS) == 1  # expected until the informer shows it
    assert "ns/d" not in c.ctx.recreated_pods  # a Deployment, not a pod
    c.add_deployment(created)
    assert c.ctx.creations_pending(job, DEPLOYMENTS) == 0
    assert [e["reason"] for e in cs.core_v1().events("ns").list()["items"]] == ["Recreated"]
    c.queue.shut_down()


def test_a_new_generation_prevents_recreation_only_for_a_kind_that_replaces_its_workers():
    cs = FakeClientset(_job("j"))
    plain, replacing = owning(cs), owning(cs, replaces_workers_on_new_generation=True)
    old = cs.elasticdl_v1alpha1().elastic_ai_jobs("ns").get("j")
    new = {**old, "metadata": {**old["metadata"], "generation": 2, "resourceVersion": "9"}}
    old["metadata"]["generation"] = 1
    for c in (plain, replacing):
        c.update_job(old, new)
    assert "ns/j" not in plain.ctx.prevent_recreation and "ns/j" in replacing.ctx.prevent_recreation
    _cached_job(cs, replacing)
    replacing.delete_deployment(_gone_deployment(old))  # replaced on purpose: not a recreation
    assert cs.apps_v1().deployments("ns").list()["items"] == []
    plain.queue.shut_down()
    replacing.queue.shut_down()


def test_the_echo_of_its_own_status_write_wakes_a_job_only_when_its_kind_wants_a_second_pass():
    cs = FakeClientset(_job("j", "u1"))
    for ignores, echo_queued in ((False, 1), (True, 0)):
        c = owning(cs, ignores_own_status_writes=ignores)
        job = _cached_job(cs, c)
        phase = f"P{ignores}"
        written = c.ctx.update_job_status(job, lambda obj, p=phase: obj.setdefault("status", {}).update(phase=p) is None)
        assert written is not None
        c.update_job(job, written)  # the informer's event for that very write
        assert c.queue.len() == echo_queued
        other = {**written, "metadata": {**written["metadata"], "resourceVersion": "99"}}
        c.update_job(written, other)  # anybody else's change always wakes it
        assert c.queue.len() == 1
        c.queue.shut_down()


def test_the_echo_wakes_the_job_after_all_when_a_sync_ran_on_a_cache_without_the_write():
    """A sync between the write and its echo compares against the older status (and may leave the written one
    alone: the master pod went Running meanwhile, the cache still says Running): the echo must sync again."""
    cs = FakeClientset(_job("j", "u1"))
    c = owning(cs, ignores_own_status_writes=True)
    job = _cached_job(cs, c)
    written = c.ctx.update_job_status(job, lambda obj: obj.setdefault("status", {}).update(phase="Pending") is None)
    assert written is not None
    assert c.sync("ns/j") is None  # the cache still holds the job as it was before the write
    c.update_job(job, written)
    assert c.queue.len() == 1
    c.queue.shut_down()


def test_should_recreate_and_recreate_refine_the_delete_handlers_self_healing():
    asked: list[tuple[str, str]] = []

    def should_recreate(ctx: KindContext[None], gvr: Any, job: dict[str, Any], obj: dict[str, Any]) -> bool:
        asked.append((gvr.resource, meta.name(obj)))
        return False

    cs = FakeClientset(_job("j"))
    c = owning(cs, should_recreate=should_recreate)
    job = _cached_job(cs, c)
    c.delete_deployment(_gone_deployment(job))
    assert asked == [("deployments", "d")] and cs.apps_v1().deployments("ns").list()["items"] == []
    replaced: list[str] = []
    own = owning(cs, recreate=lambda ctx, gvr, obj: replaced.append(meta.name(obj)) or True)
    _cached_job(cs, own)
    own.delete_deployment(_gone_deployment(job))
    assert replaced == ["d"] and cs.apps_v1().deployments("ns").list()["items"] == []  # the kind's own way
    c.queue.shut_down()
    own.queue.shut_down()


def test_job_of_maps_an_object_its_controller_reference_does_not():
    """ElasticDL's worker pods are owned by their master pod: ``job_of`` finds their job."""
    cs = FakeClientset()

    def job_of(ctx: KindContext[None], obj: dict[str, Any]) -> dict[str, Any] | None:
        return ctx.get_job(f"ns/{meta.labels(obj).get('job', '')}")

    c = owning(cs, job_of=job_of)
    c.job_informer.informer().get_indexer().add(_job("j", "u1"))
    c.add_pod({"kind": "Pod", "metadata": {"name": "w", "namespace": "ns", "resourceVersion": "1",
                                           "labels": {"job": "other"}}})
    assert c.queue.len() == 0
    c.add_pod({"kind": "Pod", "metadata": {"name": "w", "namespace": "ns", "resourceVersion": "1",
                                           "labels": {"job": "j"}}})
    assert c.queue.len() == 1 and c.queue.get()[0] == "ns/j"
    c.queue.shut_down()


def test_edge_hooks_never_raise_into_their_callers():
    calls: list[Any] = []

    def broken_to_edge(ctx: KindContext[None], operation: str, job: dict[str, Any], old: Any) -> None:
        raise RuntimeError("downstream bug")

    def broken_from_edge(ctx: KindContext[None], msg: Any) -> None:
        calls.append(msg)
        raise KeyError("upstream bug")

    c = owning(FakeClientset(), to_edge=broken_to_edge, from_edge=broken_from_edge)
    assert isinstance(c.edge, RecordingEdgeLink)
    c.add_job(_job("j", "u1"))  # logged, not raised
    c.edge.report("n1", "ns", "ElasticAIJob", "j", {"phase": "x"})
    assert len(calls) == 1 and c.queue.len() == 1
    c.queue.shut_down()
