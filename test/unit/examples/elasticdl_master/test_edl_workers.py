"""The worker manager's rules, over a FakeClientset and a FakeClock (pod events delivered by hand)."""

from __future__ import annotations

import pytest

from apis import errors
from examples.elasticdl_master.tasks import TaskError


def test_scale_up_creates_elasticdl_worker_pods_owned_by_the_master(harness):
    h = harness(3).started()
    assert h.creates() == ["elasticdl-mnist-worker-0", "elasticdl-mnist-worker-1", "elasticdl-mnist-worker-2"]
    pod = h.cs.core_v1().pods("default").get("elasticdl-mnist-worker-1")
    assert pod["metadata"]["labels"] == {"app": "elasticdl", "elasticdl-job-name": "mnist",
                                         "elasticdl-replica-type": "worker", "elasticdl-replica-index": "1"}
    master = h.cs.core_v1().pods("default").get("elasticdl-mnist-master")
    assert pod["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": master["metadata"]["name"],
                                                   "uid": master["metadata"]["uid"], "blockOwnerDeletion": True}]
    env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
    assert env["MASTER_ADDR"] == "10.0.0.1:50001" and env["WORKER_ID"] == "1" and env["WORKER_NUM"] == "3"

    assert h.manager.set_threshold(5) == 3
    h.settle()
    assert h.worker_ids() == [0, 1, 2, 3, 4]
    h.settle()
    assert len(h.creates()) == 5  # nothing more: every slot holds a pending worker


def test_scale_down_deletes_the_highest_slots_and_requeues_their_tasks_without_a_failure(harness):
    h = harness(3).started()
    h.run(0, 1, 2)
    held = h.dispatcher.get(2)
    h.manager.set_threshold(1)
    h.settle()
    assert sorted(h.deletes()) == ["elasticdl-mnist-worker-1", "elasticdl-mnist-worker-2"]
    assert h.worker_ids() == [0]
    assert not h.dispatcher.is_registered(2)
    again = h.dispatcher.get(0)  # the taken-back task comes back, no failure counted
    tasks = [again] + [h.dispatcher.get(0) for _ in range(3)]
    assert held.unit in {t.unit for t in tasks}
    assert h.dispatcher._failures == {}
    h.step(600)
    assert len(h.creates()) == 3  # no relaunch of what was scaled down
    assert [s["slot"] for s in h.manager.slots()] == [0]


def test_unschedulable_worker_is_relaunched_with_exponential_backoff(harness):
    h = harness(1, base_delay=1.0, max_delay=60.0).started()
    assert h.creates() == ["elasticdl-mnist-worker-0"]

    h.unschedulable(0)
    h.settle()
    assert h.deletes() == ["elasticdl-mnist-worker-0"]
    h.step(0.9)
    assert h.creates() == ["elasticdl-mnist-worker-0"]  # still backing off
    h.step(0.2)
    assert h.creates() == ["elasticdl-mnist-worker-0", "elasticdl-mnist-worker-1"]

    h.unschedulable(1)  # again: the delay doubles
    h.settle()
    h.step(1.5)
    assert len(h.creates()) == 2
    h.step(0.6)
    assert h.creates()[-1] == "elasticdl-mnist-worker-2"
    assert h.manager.slots()[0]["relaunches"] == 2

    h.run(2)  # scheduled and running, but backoff is only forgotten once the worker makes progress
    h.settle()
    assert h.manager.slots()[0]["relaunches"] == 2
    h.manager.on_progress(2)
    assert h.manager.slots()[0]["relaunches"] == 0


def test_unschedulable_deleted_pod_event_does_not_bypass_the_backoff(harness):
    h = harness(1, base_delay=5.0).started()
    h.unschedulable(0)
    h.settle()  # deletes the pod; the deletion event arrives in the same settle
    h.settle()
    assert h.creates() == ["elasticdl-mnist-worker-0"]
    h.step(5)
    assert h.creates() == ["elasticdl-mnist-worker-0", "elasticdl-mnist-worker-1"]


def test_failed_worker_is_relaunched_and_its_task_requeued_as_a_failed_attempt(harness):
    h = harness(2, relaunch_limit=3).started()
    h.run(0, 1)
    task = h.dispatcher.get(0)
    h.manager.on_progress(0)
    h.fail(0, exit_code=137)
    h.settle()
    assert "elasticdl-mnist-worker-0" in h.deletes()
    assert not h.dispatcher.is_registered(0)
    with pytest.raises(TaskError):
        h.dispatcher.report(0, task.task_id, True)  # the dead worker's late report is refused
    assert h.dispatcher._failures[(task.epoch, task.unit)] == 1
    h.step(1.0)
    assert h.creates()[-1] == "elasticdl-mnist-worker-2"
    h.run(2)
    units = [h.dispatcher.get(1).unit for _ in range(4)]
    assert task.unit in units  # handed out again


def test_a_slot_whose_workers_keep_failing_without_progress_is_given_up(harness):
    h = harness(1, relaunch_limit=1).started()
    h.run(0)
    h.fail(0)
    h.settle()
    h.step(1.0)
    assert h.creates()[-1] == "elasticdl-mnist-worker-1"
    h.run(1)
    h.fail(1)
    h.settle()
    h.step(600)
    assert h.creates() == ["elasticdl-mnist-worker-0", "elasticdl-mnist-worker-1"]
    assert h.manager.all_given_up()
    h.manager.set_threshold(1)  # a new threshold gives the slot a new chance
    h.settle()
    assert h.creates()[-1] == "elasticdl-mnist-worker-2"


def test_progress_between_failures_keeps_the_slot_alive(harness):
    h = harness(1, relaunch_limit=1).started()
    for worker_id in range(4):
        h.run(worker_id)
        h.manager.on_progress(worker_id)
        h.fail(worker_id)
        h.settle()
        h.step(1.0)
    assert not h.manager.all_given_up()
    assert h.creates()[-1] == "elasticdl-mnist-worker-4"


def test_worker_without_progress_for_too_long_is_removed_and_replaced(harness):
    h = harness(1, progress_timeout=30.0).started()
    h.run(0)
    task = h.dispatcher.get(0)
    h.step(20)
    h.manager.on_progress(0)  # progress moves the deadline
    h.step(29)
    assert h.deletes() == []
    h.step(1.5)
    assert h.deletes() == ["elasticdl-mnist-worker-0"]
    assert h.dispatcher._failures[(task.epoch, task.unit)] == 1  # ElasticDL counts a timeout as a failed attempt
    h.step(1.0)
    assert h.creates() == ["elasticdl-mnist-worker-0", "elasticdl-mnist-worker-1"]


def test_pending_worker_is_never_considered_stuck(harness):
    h = harness(1, progress_timeout=30.0).started()
    h.step(120)
    assert h.deletes() == []


def test_task_of_a_worker_deleted_by_someone_else_goes_to_another_worker(harness):
    h = harness(2).started()
    h.run(0, 1)
    first = h.dispatcher.get(0)
    h.cs.core_v1().pods("default").delete("elasticdl-mnist-worker-0")  # kubectl delete pod
    h.settle()
    assert not h.dispatcher.is_registered(0)
    handed = [h.dispatcher.get(1) for _ in range(4)]
    assert (first.epoch, first.unit) in {(t.epoch, t.unit) for t in handed}
    h.step(1.0)
    assert h.creates()[-1] == "elasticdl-mnist-worker-2"


def test_worker_exiting_before_the_data_is_consumed_is_replaced(harness):
    h = harness(1).started()
    h.set_status(0, {"phase": "Succeeded"})
    h.settle()
    h.step(1.0)
    assert h.creates() == ["elasticdl-mnist-worker-0", "elasticdl-mnist-worker-1"]


def test_drain_leaves_live_workers_until_they_exit_then_finish_deletes_the_rest(harness):
    h = harness(2).started()
    h.run(0, 1)
    h.manager.drain()
    h.settle()
    assert h.deletes() == [] and h.manager.live_workers() == 2
    h.set_status(0, {"phase": "Succeeded"})
    h.settle()
    assert h.deletes() == ["elasticdl-mnist-worker-0"] and h.manager.live_workers() == 1
    h.step(600)
    assert len(h.creates()) == 2  # nothing relaunched while draining
    h.manager.finish()
    h.settle()
    assert h.deletes() == ["elasticdl-mnist-worker-0", "elasticdl-mnist-worker-1"]
    assert h.manager.sweep(h.pods()) == 0


def test_sweep_deletes_pods_no_slot_holds(harness):
    h = harness(1)
    stray = {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "elasticdl-mnist-worker-9", "namespace": "default",
                          "labels": {"elasticdl-job-name": "mnist", "elasticdl-replica-type": "worker",
                                     "elasticdl-replica-index": "9"}},
             "spec": {"containers": [{"name": "c", "image": "img"}]}}
    h.cs.core_v1().pods("default").create(stray)
    h.manager.finish()
    assert h.manager.sweep(h.pods()) == 1
    assert h.deletes() == ["elasticdl-mnist-worker-9"]
    assert h.manager.sweep(h.pods()) == 0


def test_adopt_takes_over_live_workers_and_deletes_extra_and_finished_ones(harness):
    h = harness(2)
    for worker_id, phase in ((3, "Running"), (5, "Running"), (7, "Pending"), (8, "Failed")):
        h.cs.core_v1().pods("default").create({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"elasticdl-mnist-worker-{worker_id}", "namespace": "default",
                         "labels": {"elasticdl-job-name": "mnist", "elasticdl-replica-type": "worker",
                                    "elasticdl-replica-index": str(worker_id)}},
            "spec": {"containers": [{"name": "c", "image": "img"}]}})
        h.set_status(worker_id, {"phase": phase})
    h.manager.adopt(h.pods())
    h.settle()
    assert sorted(h.deletes()) == ["elasticdl-mnist-worker-7", "elasticdl-mnist-worker-8"]
    assert [s["worker_id"] for s in h.manager.slots()] == [3, 5]
    assert h.dispatcher.is_registered(3) and h.dispatcher.is_registered(5)
    h.manager.set_threshold(3)
    h.settle()
    assert h.creates()[-1] == "elasticdl-mnist-worker-9"  # ids continue after the highest one found


def test_create_failure_is_retried_with_backoff(harness):
    h = harness(1, base_delay=2.0)
    calls = []

    def fail_first(action):
        calls.append(action)
        if len(calls) == 1:
            return True, None, errors.InternalError("etcd is down")
        return False, None, None

    h.cs.prepend_reactor("create", "pods", fail_first)
    h.manager.adopt([])
    h.settle()
    assert h.worker_ids() == [] and not h.dispatcher.is_registered(0)
    h.step(1.9)
    assert h.worker_ids() == []
    h.step(0.2)
    assert h.worker_ids() == [1]
