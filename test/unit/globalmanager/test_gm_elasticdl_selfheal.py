"""ElasticAIJob self-healing and status edge cases: finished masters are never recreated, the 5-second recreation
limit holds end to end, invalid specs of running jobs, foreign pods, observedGeneration, the pod's shape."""

from __future__ import annotations

from elasticdl_test_helpers import KEY, MASTER, conditions, started

from apis import meta


def run_master(h, phase="Running", **status):
    h.set_pod_phase(MASTER, phase, **status)
    h.refresh()
    h.controller.sync(KEY)
    h.refresh()


# -- B3: a finished master is never recreated ------------------------------------------------------------------------
def test_a_succeeded_master_deleted_before_the_job_synced_is_not_recreated(make_harness, new_job):
    h = started(make_harness, new_job)
    run_master(h)
    h.set_pod_phase(MASTER, "Succeeded")
    h.refresh()  # the pod update is cached, the job's status still says Running
    h.cs.clear_actions()
    h.delete_pod_by_hand(MASTER)
    assert h.creates() == [] and MASTER not in h.pod_names()
    h.refresh()
    h.controller.sync(KEY)
    assert h.creates() == [] and MASTER not in h.pod_names()
    job = h.job()
    assert job["status"]["phase"] == "Succeeded"
    assert conditions(job)["Succeeded"]["status"] == "True"
    h.controller.sync(KEY)
    assert h.creates() == []


def test_a_failed_master_deleted_before_the_job_synced_fails_the_job(make_harness, new_job):
    h = started(make_harness, new_job)
    run_master(h)
    h.set_pod_phase(MASTER, "Failed",
                    containerStatuses=[{"name": "m", "state": {"terminated": {"exitCode": 2, "reason": "Error"}}}])
    h.refresh()
    h.cs.clear_actions()
    h.delete_pod_by_hand(MASTER)
    h.refresh()
    h.controller.sync(KEY)
    assert h.creates() == []
    job = h.job()
    assert job["status"]["phase"] == "Failed" and "exit code 2" in conditions(job)["Failed"]["message"]


def test_a_deleted_finished_master_is_noted_before_its_job_is_woken(make_harness, new_job, monkeypatch):
    # a worker may sync the job as soon as the delete handler queues it: the finished master must be known by then,
    # else that sync creates a new master for a job that is over
    h = started(make_harness, new_job)
    run_master(h)
    h.set_pod_phase(MASTER, "Succeeded")
    h.refresh()
    noted_when_queued: list[bool] = []
    real_add = h.controller.queue.add

    def add(key):
        job = h.controller.ctx.get_job(KEY)
        noted_when_queued.append(h.controller.ctx.job_state(job).finished_master is not None)
        real_add(key)

    monkeypatch.setattr(h.controller.queue, "add", add)
    h.delete_pod_by_hand(MASTER)
    assert noted_when_queued == [True]


# -- B6: at most one recreation per 5 s per pod, end to end ----------------------------------------------------------
def test_the_recreation_limit_holds_through_sync(make_harness, new_job, monkeypatch):
    h = started(make_harness, new_job)
    delayed: list[tuple[str, float]] = []
    real_add_after = h.controller.queue.add_after
    monkeypatch.setattr(h.controller.queue, "add_after", lambda item, d: (delayed.append((item, d)), real_add_after(item, d)))
    h.cs.clear_actions()
    for _ in range(2):  # deleted twice within the same second
        pod = h.delete_pod_by_hand(MASTER)
        h.refresh()
        h.controller.sync(KEY)
        h.refresh()
    h.controller.delete_pod(pod)  # a repeated delete event and another sync change nothing
    h.controller.sync(KEY)
    assert len(h.creates()) == 1  # only delete_pod's first recreation
    assert MASTER not in h.pod_names()
    assert delayed and all(item == KEY and 0 < d <= 5.0 for item, d in delayed)
    h.timer.advance(2.0)
    h.controller.sync(KEY)
    assert len(h.creates()) == 1 and delayed[-1][1] == 3.0  # requeued for the rest of the TTL
    h.timer.advance(3.1)
    h.controller.sync(KEY)
    assert len(h.creates()) == 2 and MASTER in h.pod_names()
    # the sync's recreation counts too: deleting it at once is not undone for another 5 s
    h.refresh()
    pod = h.delete_pod_by_hand(MASTER)
    h.refresh()
    h.controller.sync(KEY)
    assert len(h.creates()) == 2


# -- B5: a running job whose spec turns invalid ------------------------------------------------------------------------
def test_a_running_job_edited_into_an_invalid_spec_stops_running(make_harness, new_job, new_replica_pod):
    h = started(make_harness, new_job)
    h.pods.create(new_replica_pod(h.job(), "worker", 0))
    run_master(h)
    assert conditions(h.job())["Running"]["status"] == "True"
    job = h.job()
    job["spec"]["master"]["resource_request"] = "cpu=lots"
    h.jobs.update(job)
    h.refresh()
    h.controller.sync(KEY)
    h.refresh()
    h.controller.sync(KEY)
    job = h.job()
    cond = conditions(job)
    assert job["status"]["phase"] == "Failed"
    assert cond["Failed"]["status"] == "True" and cond["Failed"]["reason"] == "InvalidSpec"
    assert cond["Running"]["status"] == "False" and cond["Running"]["reason"] == "InvalidSpec"
    zero = {"active": 0, "succeeded": 0, "failed": 0}
    assert job["status"]["replicaStatuses"] == {"master": zero, "worker": zero, "ps": zero}
    assert h.pod_names() == []


# -- B8: a same-name pod that is not ours -------------------------------------------------------------------------------
def test_a_foreign_pod_with_the_master_name_is_reported_not_retried(make_harness, new_job):
    foreign = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": MASTER, "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "x"}]}}
    h = make_harness(new_job(), foreign)
    h.refresh()
    assert h.controller.sync(KEY) is None  # no exception, so no hot retry
    events = [(e["type"], e["reason"], e["message"]) for e in h.events()]
    assert len(events) == 1 and events[0][:2] == ("Warning", "FailedCreate")
    assert f"pod default/{MASTER} exists and is not controlled by ElasticAIJob default/mnist" in events[0][2]
    job = h.job()
    created = conditions(job)["Created"]
    assert created["status"] == "False" and created["reason"] == "FailedCreate" and MASTER in created["message"]
    assert job["status"]["phase"] == "Pending"
    h.controller.sync(KEY)
    assert len(h.events()) == 1 and h.events()[0]["count"] == 1  # nothing new: no event storm on resync
    # once the foreign pod goes, the job is woken up and gets its master
    h.pods.delete(MASTER)
    h.controller.delete_pod(foreign)
    assert h.controller.queue.len() == 1
    h.refresh()
    h.controller.sync(KEY)
    assert meta.is_controlled_by(h.pods.get(MASTER), h.job())
    assert conditions(h.job())["Created"]["status"] == "True"


# -- C2: observedGeneration -----------------------------------------------------------------------------------------------
def test_status_tells_which_generation_is_running(make_harness, new_job):
    h = started(make_harness, new_job)
    assert h.job()["status"]["observedGeneration"] == 1
    old = h.job()
    cur = meta.deep_copy(old)
    cur["spec"]["jobArgs"] = ["--model_zoo /model_zoo", "--minibatch_size 16"]
    cur = h.jobs.update(cur)
    h.controller.update_job(old, cur)
    h.refresh()
    h.controller.sync(KEY)  # the old master is being deleted: generation 1 still runs
    assert h.job()["status"]["observedGeneration"] == 1
    h.refresh()
    h.controller.sync(KEY)  # the new master is created
    assert h.job()["status"]["observedGeneration"] == 2


def test_observed_generation_of_an_invalid_spec(make_harness, new_job):
    h = make_harness(new_job(jobArgs=["oops"]))
    h.refresh()
    h.controller.sync(KEY)
    assert h.job()["status"]["observedGeneration"] == 1


# -- C1: the master pod mirrors the ElasticDL client ---------------------------------------------------------------------
def test_master_pod_command_args_volumes_and_gpu(make_harness, new_job):
    h = started(make_harness, new_job, master={
        "image": "elasticdl:ci", "resource_request": "cpu=1,memory=1024Mi,gpu=1",
        "volume": "host_path=/data,mount_path=/data;claim_name=c1,mount_path=/ckpt",
    })
    container = h.pods.get(MASTER)["spec"]["containers"][0]
    assert container["command"] == ["/bin/bash"]
    assert container["args"][0] == "-c" and len(container["args"]) == 2
    assert container["args"][1].startswith("set -o pipefail; python -m elasticdl.python.master.main --model_zoo '/model_zoo'")
    assert container["resources"]["requests"] == {"cpu": "1", "memory": "1024Mi", "nvidia.com/gpu": "1"}
    volumes = h.pods.get(MASTER)["spec"]["volumes"]
    assert [("persistentVolumeClaim" in v, v["name"]) for v in volumes] == [
        (True, f"{MASTER}-volume-1"), (False, f"{MASTER}-volume-0")]  # PVCs first, names in order of appearance
    assert {m["mountPath"]: m["name"] for m in container["volumeMounts"]} == {
        "/data": f"{MASTER}-volume-0", "/ckpt": f"{MASTER}-volume-1"}


# -- C4: prevent_recreation is per job -----------------------------------------------------------------------------------
def test_one_job_rolling_does_not_block_another_jobs_recreation(make_harness, new_job):
    other = new_job(name="other")
    h = started(make_harness, new_job, other)
    h.controller.sync("default/other")
    h.refresh()
    old = h.job()
    cur = meta.deep_copy(old)
    cur["spec"]["jobArgs"] = ["--model_zoo /m2"]
    cur = h.jobs.update(cur)
    h.controller.update_job(old, cur)  # mnist is rolling
    assert KEY in h.controller.prevent_recreation and "default/other" not in h.controller.prevent_recreation
    h.cs.clear_actions()
    # mnist's master (still the running one) deleted during the roll: not recreated
    pod = h.delete_pod_by_hand(MASTER)
    assert h.creates() == []
    # the other job's master deleted at the same time: recreated
    other_master = "elasticdl-other-master"
    pod = h.pods.get(other_master)
    h.pods.delete(other_master)
    h.controller.delete_pod(pod)
    assert [a.object["metadata"]["name"] for a in h.creates()] == [other_master]
