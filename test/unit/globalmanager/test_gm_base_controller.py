"""BaseController: self-healing workers, rate-limited requeue without a retry limit (or a drop after ``max_retries``
when one is set), bounded drain, pod handlers."""

from __future__ import annotations

import threading

import pytest
from prometheus_client import CollectorRegistry
from testkit import wait_for

from apis import meta
from apis.fake import FakeClientset
from apis.resources import DEPLOYMENTS, ELASTIC_AI_JOBS, PODS, SERVICES
from globalmanager.runtime.controller import BaseController
from informers import DeletedFinalStateUnknown, SharedInformerFactory
from workqueue import ItemExponentialFailureRateLimiter


class ScriptedController(BaseController):
    def __init__(self, behaviour, **kw):
        cs = FakeClientset()
        self.factory = SharedInformerFactory(cs)
        super().__init__("Scripted", cs, self.factory, ELASTIC_AI_JOBS, kw.pop("workers", 1), owns=(PODS,),
                         registry=CollectorRegistry(), rate_limiter=ItemExponentialFailureRateLimiter(0.001, 0.01), **kw)
        self.behaviour = behaviour
        self.seen: list[str] = []
        self.done = threading.Event()

    def sync(self, key):
        self.seen.append(key)
        return self.behaviour(self, key)

    def count(self, result):
        return self.metrics.sync_total.labels(controller=self.name, result=result)._value.get()


def run_controller(c):
    stop = threading.Event()
    c.factory.start(stop)
    t = threading.Thread(target=c.run, args=(stop,))
    t.start()
    assert c.synced.wait(5)
    return stop, t


def stop_controller(c, stop, t):
    stop.set()
    t.join(15)
    c.factory.shutdown()
    assert not t.is_alive()


@pytest.mark.parametrize("failures", [2, 40])  # 40: far beyond the 15 after which a key used to be dropped for good
def test_a_failing_sync_is_retried_until_it_works_and_the_worker_survives(failures):
    def behaviour(c, key):
        if len(c.seen) <= failures:
            raise RuntimeError("transient")
        c.done.set()
        return True

    c = ScriptedController(behaviour)
    stop, t = run_controller(c)
    try:
        c.queue.add("ns/a")
        assert c.done.wait(10)
    finally:
        stop_controller(c, stop, t)
    assert c.seen == ["ns/a"] * (failures + 1)
    assert c.count("error") == failures and c.count("success") == 1 and c.count("dropped") == 0
    assert c.queue.num_requeues("ns/a") == 0  # forgotten after success


def test_key_dropped_after_max_retries():
    def behaviour(c, key):
        if len(c.seen) == 3:
            c.done.set()
        raise ValueError("always")

    c = ScriptedController(behaviour, max_retries=2)
    stop, t = run_controller(c)
    try:
        c.queue.add("ns/a")
        assert c.done.wait(5)
    finally:
        stop_controller(c, stop, t)
    assert c.count("dropped") == 1 and c.count("error") == 2


def test_invalid_keys_are_forgotten_without_calling_sync():
    c = ScriptedController(lambda c, k: True)
    c.queue.add("no-namespace")
    assert c.process_next_work_item() is True
    assert c.seen == []
    c.queue.shut_down()
    assert c.process_next_work_item() is False


def test_shutdown_waits_for_in_flight_work_but_is_bounded():
    release = threading.Event()
    entered = threading.Event()

    def behaviour(c, key):
        entered.set()
        release.wait(10)
        return True

    c = ScriptedController(behaviour, drain_timeout=0.2)
    stop, t = run_controller(c)
    try:
        c.queue.add("ns/slow")
        c.queue.add("ns/never")  # queued behind: not taken once stopping
        assert entered.wait(5)
        assert c.shutdown(timeout=0.2) is False  # still busy: gives up after the bound
    finally:
        release.set()
        stop_controller(c, stop, t)
    assert "ns/never" not in c.seen


def test_pod_handlers_resolve_the_controller_ref_with_uid_check():
    c = ScriptedController(lambda c, k: True)
    job = {"apiVersion": "elasticdl.org/v1alpha1", "kind": "ElasticAIJob",
           "metadata": {"name": "j", "namespace": "ns", "uid": "u1", "resourceVersion": "1"}}
    c.job_informer.informer().get_indexer().add(job)

    def pod(uid, kind="ElasticAIJob", rv="1", phase="Running"):
        return {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "resourceVersion": rv, "ownerReferences": [
            {"apiVersion": "elasticdl.org/v1alpha1", "kind": kind, "name": "j", "uid": uid, "controller": True}]},
            "status": {"phase": phase}}

    c.add_pod(pod("other-uid"))
    c.add_pod(pod("u1", kind="Job"))
    c.update_pod(pod("u1"), pod("u1"))  # same resourceVersion: ignored
    assert c.queue.len() == 0
    c.add_pod(pod("u1"))
    assert c.queue.len() == 1
    c.queue.shut_down()


# -- owned objects, per-job state, edge hooks ----------------------------------------------------------------------------
class OwningController(BaseController):
    """Owns pods and deployments of ElasticAIJobs; recreates deployments."""

    def __init__(self, cs, factory, **kw):
        super().__init__("Owning", cs, factory, ELASTIC_AI_JOBS, 1, owns=(PODS, DEPLOYMENTS, SERVICES),
                         recreates=(DEPLOYMENTS,), registry=CollectorRegistry(), **kw)

    def sync(self, key):
        return True


def _job(name, uid):
    return {"apiVersion": "elasticdl.org/v1alpha1", "kind": "ElasticAIJob",
            "metadata": {"name": name, "namespace": "ns", "uid": uid, "resourceVersion": "1"}}


def _owned(kind, name, owner, rv="1"):
    return {"kind": kind, "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv, "ownerReferences": [
        {"apiVersion": "elasticdl.org/v1alpha1", "kind": "ElasticAIJob", "name": meta.name(owner),
         "uid": meta.uid(owner), "controller": True}]}}


def test_kind_comes_from_the_job_resource_and_get_job_is_typed():
    cs = FakeClientset()
    c = OwningController(cs, SharedInformerFactory(cs))
    assert (c.kind, c.gvk.api_version) == ("ElasticAIJob", "elasticdl.org/v1alpha1")
    c.job_informer.informer().get_indexer().add({"metadata": {"name": "j", "namespace": "ns", "uid": "u"}})
    assert c.get_job("ns/j")["kind"] == "ElasticAIJob" and c.get_job("ns/j")["apiVersion"] == "elasticdl.org/v1alpha1"
    assert c.get_job("ns/other") is None
    with pytest.raises(ValueError):
        BaseController("x", cs, SharedInformerFactory(cs), ELASTIC_AI_JOBS, recreates=(PODS,))
    c.queue.shut_down()


def test_owned_objects_are_found_by_index_and_mapped_back_with_the_uid_check():
    cs = FakeClientset()
    factory = SharedInformerFactory(cs)
    c = OwningController(cs, factory)
    other = OwningController(cs, factory)  # a second controller over the same shared informers
    job, stranger = _job("j", "u1"), _job("k", "u2")
    c.job_informer.informer().get_indexer().add(job)
    deployments = factory.apps_v1().deployments().informer().get_indexer()
    deployments.add(_owned("Deployment", "d1", job))
    deployments.add(_owned("Deployment", "d2", stranger))
    assert [meta.name(d) for d in c.owned(DEPLOYMENTS, job)] == ["d1"]
    c.add_deployment(_owned("Deployment", "d2", stranger))  # its job is not cached
    c.add_deployment(_owned("Deployment", "d3", _job("j", "old-uid")))  # a former job of the same name
    c.update_deployment(_owned("Deployment", "d1", job), _owned("Deployment", "d1", job))  # resync: same RV
    assert c.queue.len() == 0
    c.update_deployment(_owned("Deployment", "d1", job), _owned("Deployment", "d1", job, rv="2"))
    c.add_pod(_owned("Pod", "p", job))
    assert c.queue.len() == 1  # both woke ns/j once
    c.queue.shut_down()
    other.queue.shut_down()


def test_per_job_state_is_dropped_when_the_job_goes():
    cs = FakeClientset(_job("j", "u1"))
    c = OwningController(cs, SharedInformerFactory(cs))
    job = cs.elasticdl_v1alpha1().elastic_ai_jobs("ns").get("j")
    state = c.job_state(job)
    c.prevent_recreation.add("ns/j")
    state.note_slot_created("ns/j-worker")
    assert c.mark_recreated(job, PODS, "p") and "ns/p" in c.recreated_pods
    c.delete_job(DeletedFinalStateUnknown("ns/j", job))
    assert "ns/j" not in c.prevent_recreation and len(c.job_states) == 0
    assert "ns/p" not in c.recreated_pods  # dropped with the job, not only after the TTL
    assert c.job_state(job) is not state and c.job_state(job).slots_created == {}
    c.forget_job("ns/j")  # sync found it gone: the same one place
    assert len(c.job_states) == 0
    c.queue.shut_down()


def test_a_deleted_deployment_is_recreated_unless_its_job_is_being_updated():
    job = _job("j", "")
    cs = FakeClientset(job)
    job = cs.elasticdl_v1alpha1().elastic_ai_jobs("ns").get("j")
    c = OwningController(cs, SharedInformerFactory(cs))
    c.job_informer.informer().get_indexer().add(job)
    gone = {**_owned("Deployment", "d", job), "apiVersion": "apps/v1", "spec": {"replicas": 1},
            "status": {"replicas": 1}}
    gone["metadata"]["uid"] = "old"
    c.prevent_recreation.add("ns/j")
    c.delete_deployment(gone)
    assert cs.apps_v1().deployments("ns").list()["items"] == []
    c.prevent_recreation.discard("ns/j")
    c.delete_deployment(DeletedFinalStateUnknown("ns/d", gone))
    (created,) = cs.apps_v1().deployments("ns").list()["items"]
    assert meta.name(created) == "d" and meta.uid(created) != "old" and "status" not in created
    assert c.creations_pending(job, DEPLOYMENTS) == 1  # expected until the informer shows it
    assert "ns/d" not in c.recreated_pods  # a Deployment, not a pod
    c.add_deployment(created)
    assert c.creations_pending(job, DEPLOYMENTS) == 0
    assert [e["reason"] for e in cs.core_v1().events("ns").list()["items"]] == ["Recreated"]
    c.queue.shut_down()


def test_edge_hooks_never_raise_into_their_callers():
    from globalmanager.runtime.edge import RecordingEdgeLink

    class Broken(OwningController):
        def sync_to_edge(self, operation, job, old=None):
            raise RuntimeError("downstream bug")

    cs = FakeClientset()
    edge = RecordingEdgeLink()
    c = Broken(cs, SharedInformerFactory(cs), edge=edge)
    calls = []

    def handler(msg):
        calls.append(msg)
        raise KeyError("upstream bug")

    c.register_upstream(handler)
    c.add_job(_job("j", "u1"))  # logged, not raised
    edge.report("n1", "ns", "ElasticAIJob", "j", {"phase": "x"})
    assert len(calls) == 1 and c.queue.len() == 1
    c.queue.shut_down()


def test_a_shutdown_racing_with_the_workers_start_still_waits_for_them(monkeypatch):
    """The workers are registered before they start: a shutdown right after a start sees them."""
    import globalmanager.runtime.controller as controller_module

    release, entered, results = threading.Event(), threading.Event(), []

    def behaviour(c, key):
        entered.set()
        release.wait(10)
        return True

    c = ScriptedController(behaviour, drain_timeout=0.2)
    real_thread = threading.Thread

    class RacingStart(real_thread):
        def start(self):
            super().start()
            if self.name.startswith("Scripted-worker"):
                entered.wait(5)
                results.append(c.shutdown(timeout=0.2))  # before run() has done anything else

    monkeypatch.setattr(controller_module.threading, "Thread", RacingStart)
    c.queue.add("ns/slow")
    stop, t = run_controller(c)
    try:
        wait_for("the racing shutdown", lambda: results, timeout=10)
        assert results == [False]  # it waited (bounded) for the busy worker
    finally:
        release.set()
        stop_controller(c, stop, t)
