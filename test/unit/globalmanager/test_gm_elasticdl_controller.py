"""ElasticAIJob controller with the fake clientset, in the style of Sedna's Test_deletePod / Test_updateJob."""

from __future__ import annotations

import pytest
from elasticdl_test_helpers import KEY, MASTER, conditions, started

from apis import errors, meta
from informers import DeletedFinalStateUnknown


def test_sync_creates_the_master_pod_with_owner_labels_and_command(make_harness, new_job):
    h = started(make_harness, new_job)
    pod = h.pods.get(MASTER)
    job = h.job()
    assert meta.labels(pod) == {
        "app": "elasticdl",
        "elasticdl-job-name": "mnist",
        "elasticdl-replica-type": "master",
        "elasticdl-replica-index": "0",
    }
    ref = meta.get_controller_of(pod)
    assert ref["kind"] == "ElasticAIJob" and ref["uid"] == meta.uid(job)
    assert pod["spec"]["restartPolicy"] == "Never"
    container = pod["spec"]["containers"][0]
    command = container["command"] + container["args"]
    assert command[:2] == ["/bin/bash", "-c"]
    assert command[2].startswith("set -o pipefail; python -m elasticdl.python.master.main --model_zoo '/model_zoo'")
    assert "--num_workers '2'" in command[2] and "--num_ps_pods '1'" in command[2]
    assert job["status"]["phase"] == "Pending"
    assert conditions(job)["Created"]["status"] == "True"
    assert job["status"]["startTime"] == "2026-01-02T03:04:05Z"
    assert [e["reason"] for e in h.events()] == ["SuccessfulCreate"]


def test_sync_is_idempotent(make_harness, new_job):
    h = started(make_harness, new_job)
    h.cs.clear_actions()
    assert h.controller.sync(KEY) is None
    assert h.creates() == []
    assert [a.verb for a in h.cs.actions() if a.resource == "elasticaijobs"] == []  # nothing changed: no write


def test_delete_pod_recreates_a_master_deleted_by_hand(make_harness, new_job):
    h = started(make_harness, new_job)
    h.cs.clear_actions()
    h.delete_pod_by_hand(MASTER)
    assert MASTER in h.pod_names()
    assert len(h.creates()) == 1
    assert h.controller.queue.len() == 1  # the job was woken up too


def test_delete_pod_unwraps_tombstones(make_harness, new_job):
    h = started(make_harness, new_job)
    pod = h.pods.get(MASTER)
    h.pods.delete(MASTER)
    h.controller.delete_pod(DeletedFinalStateUnknown(f"default/{MASTER}", pod))
    assert MASTER in h.pod_names()


def test_no_second_recreation_within_the_ttl(make_harness, new_job):
    h = started(make_harness, new_job)
    for _ in range(2):
        pod = h.delete_pod_by_hand(MASTER)
    assert MASTER not in h.pod_names()  # the second deletion within 5 s was not undone by delete_pod
    h.timer.advance(5.1)
    h.controller.delete_pod(pod)
    assert MASTER in h.pod_names()


def test_deleting_an_ownerless_or_nonexistent_pod_is_harmless(make_harness, new_job):
    h = started(make_harness, new_job)
    ownerless = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod", "namespace": "default"}, "spec": {}}
    h.pods.create(ownerless)
    h.cs.clear_actions()
    h.controller.delete_pod(h.pods.get("test-pod"))  # ownerless: nothing happens
    h.controller.delete_pod({"containers": []})  # not a pod at all (Sedna passes a PodSpec)
    h.controller.delete_pod(DeletedFinalStateUnknown("default/x", "not-a-pod"))
    assert h.creates() == []
    assert "test-pod" in h.pod_names()


def test_no_recreation_after_the_job_is_gone(make_harness, new_job):
    h = started(make_harness, new_job)
    pod = h.pods.get(MASTER)
    h.jobs.delete("mnist")
    h.refresh()
    h.cs.clear_actions()
    h.controller.delete_pod(pod)
    assert h.creates() == []
    assert h.controller.sync(KEY) is None  # a gone job is forgotten


def test_no_recreation_for_a_job_of_the_same_name_with_another_uid(make_harness, new_job):
    h = started(make_harness, new_job)
    pod = h.pods.get(MASTER)
    h.jobs.delete("mnist")  # the garbage collector takes the master with it
    h.jobs.create(new_job())
    h.refresh()
    h.cs.clear_actions()
    h.controller.delete_pod(pod)
    assert h.creates() == []


def test_no_recreation_once_the_job_has_finished(make_harness, new_job):
    h = started(make_harness, new_job)
    h.set_pod_phase(MASTER, "Succeeded")
    h.refresh()
    h.controller.sync(KEY)
    h.refresh()
    assert h.job()["status"]["phase"] == "Succeeded"
    h.cs.clear_actions()
    h.delete_pod_by_hand(MASTER)
    h.refresh()
    h.controller.sync(KEY)
    assert h.creates() == []


def test_spec_change_rolls_the_master(make_harness, new_job):
    h = started(make_harness, new_job)
    old = h.job()
    cur = meta.deep_copy(old)
    cur["spec"]["jobArgs"] = ["--model_zoo /model_zoo", "--minibatch_size 16"]
    cur = h.jobs.update(cur)
    assert meta.generation(cur) == 2
    h.controller.update_job(old, cur)
    assert KEY in h.controller.prevent_recreation
    # the old master's deletion (by anyone) is not undone while the job is being updated
    h.refresh()
    h.controller.sync(KEY)
    assert MASTER not in h.pod_names()
    assert [e["reason"] for e in h.events()].count("Restarting") == 1
    h.controller.delete_pod(h_last_master(h))
    assert MASTER not in h.pod_names()
    # once the old master is gone from the cache, the next sync creates the new one from the new spec
    h.refresh()
    h.controller.sync(KEY)
    pod = h.pods.get(MASTER)
    assert "--minibatch_size '16'" in pod["spec"]["containers"][0]["args"][1]
    assert meta.annotations(pod)["elasticdl.org/job-generation"] == "2"
    assert KEY not in h.controller.prevent_recreation
    assert h.job()["spec"]["jobArgs"][1] == "--minibatch_size 16"


def h_last_master(h):
    """The master pod as the last delete action removed it (what the informer's delete event carries)."""
    for action in reversed(h.cs.actions()):
        if action.verb == "delete" and action.resource == "pods" and action.name == MASTER:
            return {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": MASTER,
                    "namespace": "default",
                    "annotations": {"elasticdl.org/job-generation": "1"},
                    "labels": {"elasticdl-replica-type": "master"},
                    "ownerReferences": [meta.new_controller_ref(h.job())],
                },
            }
    raise AssertionError("no delete of the master")


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"master": {"image": "x", "resource_request": "cpu=lots"}}, "spec.master.resource_request"),
        ({"jobArgs": ["--model_zoo"]}, "spec.jobArgs[0]"),
        ({"master": {"resource_request": "cpu=1"}}, "spec.master.image"),
        ({"worker": {"count": -1}}, "spec.worker.count"),
        ({"master": {"image": "x", "volume": "host_path=/d"}}, "spec.master.volume"),
        ({"worker": {"resource_request": "gpu=half"}}, "spec.worker.resource_request"),
    ],
)
def test_invalid_spec_fails_with_invalid_spec_and_creates_no_pod(make_harness, new_job, spec, field):
    h = make_harness(new_job(**spec))
    h.refresh()
    assert h.controller.sync(KEY) is None
    job = h.job()
    failed = conditions(job)["Failed"]
    assert job["status"]["phase"] == "Failed"
    assert failed["status"] == "True" and failed["reason"] == "InvalidSpec"
    assert field in failed["message"]
    events = h.events()
    assert [(e["type"], e["reason"]) for e in events] == [("Warning", "InvalidSpec")]
    assert field in events[0]["message"]
    assert h.pod_names() == []
    # syncing again neither writes nor records anything new
    h.refresh()
    h.cs.clear_actions()
    h.controller.sync(KEY)
    assert [a for a in h.cs.actions() if a.verb in ("create", "update", "patch")] == []


def test_fixing_an_invalid_spec_starts_the_job(make_harness, new_job):
    h = make_harness(new_job(jobArgs=["oops"]))
    h.refresh()
    h.controller.sync(KEY)
    job = h.job()
    job["spec"]["jobArgs"] = ["--model_zoo /m"]
    h.jobs.update(job)
    h.refresh()
    h.controller.sync(KEY)
    job = h.job()
    assert MASTER in h.pod_names()
    assert job["status"]["phase"] == "Pending"
    assert conditions(job)["Failed"]["status"] == "False"


def test_status_follows_the_master_and_cleans_up_replicas(make_harness, new_job, new_replica_pod):
    h = started(make_harness, new_job)
    job = h.job()
    for pod in (new_replica_pod(job, "worker", 0), new_replica_pod(job, "worker", 1, "Failed"), new_replica_pod(job, "ps", 0)):
        h.pods.create(pod)
    h.set_pod_phase(MASTER, "Running")
    h.refresh()
    h.controller.sync(KEY)
    job = h.job()
    assert job["status"]["phase"] == "Running"
    assert conditions(job)["Running"]["status"] == "True"
    assert job["status"]["replicaStatuses"] == {
        "master": {"active": 1, "succeeded": 0, "failed": 0},
        "worker": {"active": 1, "succeeded": 0, "failed": 1},
        "ps": {"active": 1, "succeeded": 0, "failed": 0},
    }
    assert "completionTime" not in job["status"]

    h.set_pod_phase(MASTER, "Succeeded")
    h.refresh()
    h.controller.sync(KEY)
    job = h.job()
    cond = conditions(job)
    assert job["status"]["phase"] == "Succeeded"
    assert cond["Succeeded"]["status"] == "True" and cond["Running"]["status"] == "False"
    assert job["status"]["completionTime"] == "2026-01-02T03:04:05Z"
    assert job["status"]["replicaStatuses"]["master"] == {"active": 0, "succeeded": 1, "failed": 0}
    assert h.pod_names() == [MASTER]  # workers and ps deleted, the master kept for its logs
    assert "Succeeded" in [e["reason"] for e in h.events()]


def test_failed_master_fails_the_job_with_its_exit_code(make_harness, new_job):
    h = started(make_harness, new_job)
    h.set_pod_phase(
        MASTER, "Failed", containerStatuses=[{"name": "m", "state": {"terminated": {"exitCode": 3, "reason": "Error"}}}]
    )
    h.refresh()
    h.controller.sync(KEY)
    job = h.job()
    failed = conditions(job)["Failed"]
    assert job["status"]["phase"] == "Failed"
    assert failed["reason"] == "MasterFailed" and "exit code 3" in failed["message"]
    assert job["status"]["completionTime"]
    assert ("Warning", "Failed") in [(e["type"], e["reason"]) for e in h.events()]


def test_status_update_retries_on_conflict_without_losing_others_fields(make_harness, new_job):
    h = make_harness(new_job())
    h.refresh()  # the cache now holds the job at its first resourceVersion
    # someone else writes a condition meanwhile: our cached copy is stale
    fresh = h.job()
    fresh["status"] = {"conditions": [{"type": "Running", "status": "Unknown", "reason": "Other", "message": "x"}]}
    h.jobs.update_status(fresh)
    calls = {"n": 0}

    def conflict_once(action):
        calls["n"] += 1
        if calls["n"] == 1:
            return True, None, errors.ConflictError("the object has been modified")
        return False, None, None

    h.cs.prepend_reactor("update", "elasticaijobs/status", conflict_once)
    h.controller.sync(KEY)
    job = h.job()
    assert calls["n"] == 2
    assert conditions(job)["Created"]["status"] == "True"
    assert conditions(job)["Running"]["reason"] == "Other"  # kept: we re-read and merged


def test_sync_errors_are_requeued_with_rate_limiting_and_counted(make_harness, new_job):
    h = make_harness(new_job())
    h.refresh()
    h.cs.prepend_reactor("create", "pods", lambda a: (True, None, errors.InternalError("boom")))
    h.controller.queue.add(KEY)
    assert h.controller.process_next_work_item() is True
    assert h.controller.queue.num_requeues(KEY) == 1
    value = h.registry.get_sample_value(
        "sedna_gm_controller_sync_total", {"controller": "ElasticAIJob", "result": "error"}
    )
    assert value == 1.0
    assert ("Warning", "FailedCreate") in [(e["type"], e["reason"]) for e in h.events()]
    h.controller.queue.shut_down()


def test_worker_pods_wake_their_job_through_the_label(make_harness, new_job, new_replica_pod):
    h = started(make_harness, new_job)
    pod = new_replica_pod(h.job(), "worker", 0)
    h.controller.add_pod(pod)
    assert h.controller.queue.len() == 1
    stranger = new_replica_pod(new_job(name="other"), "worker", 0)
    h.controller.queue.shut_down()
    h.controller.add_pod(stranger)  # its job is not in the cache: ignored


def test_sandbox_annotations_are_copied_to_the_master(make_harness, new_job):
    job = new_job()
    job["metadata"]["annotations"] = {"sandbox.sedna.io/run-seconds": "2", "other/annotation": "x"}
    h = make_harness(job)
    h.refresh()
    h.controller.sync(KEY)
    annotations = meta.annotations(h.pods.get(MASTER))
    assert annotations["sandbox.sedna.io/run-seconds"] == "2"
    assert "other/annotation" not in annotations


def test_no_recreation_when_only_the_cache_still_has_the_deleted_job(make_harness, new_job):
    # Sedna #466: the pod's delete event (garbage collection) can arrive before the job's
    h = started(make_harness, new_job)
    pod = h.pods.get(MASTER)
    h.jobs.delete("mnist")  # cache not refreshed: the lister still returns the job
    h.cs.clear_actions()
    h.controller.delete_pod(pod)
    h.controller.sync(KEY)
    assert h.creates() == []
    assert h.pod_names() == []
