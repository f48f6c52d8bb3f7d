"""BaseController: self-healing workers, rate-limited requeue, drop after max retries, bounded drain, pod handlers."""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry

from apis.fake import FakeClientset
from apis.resources import ELASTIC_AI_JOBS
from globalmanager.runtime.controller import BaseController
from informers import SharedInformerFactory
from workqueue import ItemExponentialFailureRateLimiter


class ScriptedController(BaseController):
    kind = "ElasticAIJob"

    def __init__(self, behaviour, **kw):
        cs = FakeClientset()
        self.factory = SharedInformerFactory(cs)
        super().__init__("Scripted", cs, self.factory, ELASTIC_AI_JOBS, kw.pop("workers", 1),
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


def test_failing_sync_is_retried_then_succeeds_and_the_worker_survives():
    def behaviour(c, key):
        if len(c.seen) < 3:
            raise RuntimeError("transient")
        c.done.set()
        return True

    c = ScriptedController(behaviour)
    stop, t = run_controller(c)
    try:
        c.queue.add("ns/a")
        assert c.done.wait(5)
    finally:
        stop_controller(c, stop, t)
    assert c.seen == ["ns/a"] * 3
    assert c.count("error") == 2 and c.count("success") == 1
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
    c.queue.add("ns/slow")
    c.queue.add("ns/never")  # queued behind: not taken once stopping
    assert entered.wait(5)
    assert c.shutdown(timeout=0.2) is False  # still busy: gives up after the bound
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
