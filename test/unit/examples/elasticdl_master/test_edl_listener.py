"""The event listener: a real informer over the FakeClientset, filtered to the job's workers by label selector."""

from __future__ import annotations

import threading

from testkit import wait_for

from apis.fake import FakeClientset
from examples.elasticdl_master.listener import EventListener, worker_informer_factory
from examples.elasticdl_master.state import DELETED, FAILED, PENDING, RUNNING, WorkerTable
from informers import DeletedFinalStateUnknown


def pod(name: str, job: str, role: str, index: str, phase: str = "Pending") -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default",
                         "labels": {"app": "elasticdl", "elasticdl-job-name": job, "elasticdl-replica-type": role,
                                    "elasticdl-replica-index": index}},
            "spec": {"containers": [{"name": "c", "image": "img"}]}, "status": {"phase": phase}}


def test_only_the_jobs_worker_pods_reach_the_table_and_every_event_is_reported():
    cs = FakeClientset(pod("elasticdl-mnist-worker-0", "mnist", "worker", "0", "Running"),
                       pod("mnist-ps-0", "mnist", "ps", "0", "Running"),
                       pod("other-worker-0", "other", "worker", "0", "Running"))
    table = WorkerTable()
    changed: list[int] = []
    factory = worker_informer_factory(cs, "default", "mnist")
    listener = EventListener(factory, table, changed.append)
    stop = threading.Event()
    factory.start(stop)
    try:
        assert all(factory.wait_for_cache_sync(stop).values())
        assert [p["metadata"]["name"] for p in listener.lister.list()] == ["elasticdl-mnist-worker-0"]
        lists = [a for a in cs.actions() if a.verb in ("list", "watch")]
        assert lists and all(a.options.label_selector == "elasticdl-job-name=mnist,elasticdl-replica-type=worker"
                             for a in lists)
        wait_for("the initial add", lambda: changed == [0])
        assert table.get(0).phase == RUNNING

        pods = cs.core_v1().pods("default")
        pods.create(pod("elasticdl-mnist-worker-1", "mnist", "worker", "1"))
        wait_for("worker 1 pending", lambda: (s := table.get(1)) is not None and s.phase == PENDING)
        failed = pods.get("elasticdl-mnist-worker-0")
        failed["status"] = {"phase": "Failed", "containerStatuses": [
            {"name": "c", "state": {"terminated": {"exitCode": 3, "reason": "Error"}}}]}
        pods.update_status(failed)
        wait_for("worker 0 failed", lambda: table.get(0).phase == FAILED)
        assert (table.get(0).exit_code, table.get(0).reason) == (3, "Error")
        pods.delete("elasticdl-mnist-worker-0")
        wait_for("worker 0 deleted", lambda: table.get(0).phase == DELETED)
        assert changed[-1] == 0 and 1 in changed
        assert table.get(0).phase == DELETED  # a finished worker never moves backwards
    finally:
        stop.set()
        factory.shutdown()


def test_a_deletion_known_only_by_its_key_names_the_worker():
    table = WorkerTable()
    table.register(4, "elasticdl-mnist-worker-4")
    changed: list[int] = []
    cs = FakeClientset()
    listener = EventListener(worker_informer_factory(cs, "default", "mnist"), table, changed.append)
    listener.on_pod_deleted(DeletedFinalStateUnknown("default/elasticdl-mnist-worker-4", None))
    assert changed == [4] and table.get(4).phase == DELETED


def test_a_state_never_moves_backwards():
    table = WorkerTable()
    table.observe(pod("w", "mnist", "worker", "2", "Succeeded"))
    table.observe(pod("w", "mnist", "worker", "2", "Running"))  # a stale event
    assert table.get(2).phase == "succeeded"
    unschedulable = pod("w", "mnist", "worker", "3")
    unschedulable["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                              "message": "no nodes"}]
    assert table.observe(unschedulable).unschedulable == "no nodes"
    assert table.counts()["unschedulable"] == 1
