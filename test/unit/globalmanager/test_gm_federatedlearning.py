"""FederatedLearningJob controller with the fake clientset: workers and their exact contract, phases and conditions,
per-job self-healing and spec roll-outs (Sedna's ``Test_deletePod`` and ``Test_updateJob``; two jobs at once),
downstream and upstream."""

from __future__ import annotations

from typing import Any

import pytest
from sedna_test_helpers import NS, dataset, env_of, model, s3_secret

from apis import errors, meta
from apis import resources as r
from globalmanager.controllers.federatedlearning import KIND
from globalmanager.controllers.federatedlearning.workers import INDEX_ANNOTATION, missing_workers
from globalmanager.runtime.edge import DELETE, INSERT
from informers import DeletedFinalStateUnknown
from reconcile import Result

NAME = "test-fl-job"


def fl_job(name: str = NAME, transmitter: dict[str, Any] | None = None) -> dict[str, Any]:
    def trainer(i: int) -> dict[str, Any]:
        return {
            "dataset": {"name": f"test-dataset{i + 1}"},
            "template": {"metadata": {"name": f"{name}-training-worker-{i}"}, "spec": {
                "nodeName": f"test-node{i + 1}",
                "containers": [{"name": "test-container", "image": "test-image", "imagePullPolicy": "IfNotPresent",
                                "env": [{"name": "batch_size", "value": "32"}, {"name": "learning_rate", "value": "0.001"},
                                        {"name": "epochs", "value": "2"}],
                                "resources": {"requests": {"memory": "2Gi"}}}]}},
        }

    spec: dict[str, Any] = {
        "aggregationWorker": {"model": {"name": "test-model"}, "template": {
            "metadata": {"name": f"{name}-aggregation-worker"},
            "spec": {"containers": [{"name": "test-container", "image": "test-image"}]}}},
        "trainingWorkers": [trainer(0), trainer(1)],
        "pretrainedModel": {"name": "test-pretrained-model"},
    }
    if transmitter is not None:
        spec["transmitter"] = transmitter
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "FederatedLearningJob",
            "metadata": {"name": name, "namespace": NS}, "spec": spec}


REFS = (model("test-model", "/models/agg"), model("test-pretrained-model", "s3://models/pre/model.pb"),
        dataset("test-dataset1", "/data/d1/train.txt", "test-node1"), dataset("test-dataset2", "/data/d2/train.txt", "test-node2"))


@pytest.fixture
def fl(make_sedna_harness):
    def make(*objects: dict[str, Any], refs: tuple[dict[str, Any], ...] = REFS) -> Any:
        h = make_sedna_harness(KIND, r.FEDERATED_LEARNING_JOBS, *objects, *refs,
                               lc_server="http://test-lc-server:8080")
        h.refresh()
        return h
    return make


def started(fl, *jobs: dict[str, Any]) -> Any:
    h = fl(*(jobs or (fl_job(),)))
    for job in jobs or (fl_job(),):
        assert h.sync(meta.name(job)) is None
    h.refresh()
    return h


def pods_of(h, name: str = NAME) -> list[dict[str, Any]]:
    uid = meta.uid(h.job(name))
    return [p for p in h.objects(r.PODS) if (meta.get_controller_of(p) or {}).get("uid") == uid]


def by_type(h, name: str = NAME) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for p in pods_of(h, name):
        out.setdefault(meta.labels(p)["federatedlearningjob.sedna.io/worker-type"], []).append(p)
    return out


def set_phase(h, pod: dict[str, Any], phase: str) -> None:
    h.set_status(r.PODS, meta.name(pod), {"phase": phase})


def finish_every_pod(h) -> dict[str, Any]:
    """Every pod of the job Succeeded, then a sync; returns the job's status."""
    for pod in pods_of(h):
        set_phase(h, pod, "Succeeded")
    h.refresh()
    h.sync(NAME)
    return h.job(NAME)["status"]


def delete_twice(h, victim: dict[str, Any]) -> None:
    """Delete ``victim`` (the delete handler recreates it), then its recreation at once (refused: within 5 s)."""
    h.client(r.PODS).delete(meta.name(victim))
    h.controller.delete_pod(victim)
    again = h.client(r.PODS).get(meta.name(victim))
    h.client(r.PODS).delete(meta.name(again))
    h.controller.delete_pod(again)


def test_creates_the_aggregation_pod_its_service_and_a_training_pod_per_worker(fl):
    h = started(fl)
    job = h.job(NAME)
    pods = by_type(h)
    assert sorted(pods) == ["aggregation", "train"] and len(pods["aggregation"]) == 1 and len(pods["train"]) == 2
    agg = pods["aggregation"][0]
    assert meta.generate_name(agg) == f"{NAME}-aggregation-" and meta.is_controlled_by(agg, job)
    assert agg["spec"]["restartPolicy"] == "OnFailure" and not agg["spec"].get("hostNetwork")
    env = env_of(agg)
    assert env.pop("WORKER_NAME").startswith("aggworker-")
    assert env == {"DATA_PATH_PREFIX": "/home/data", "NAMESPACE": NS, "JOB_NAME": NAME, "AGG_BIND_PORT": "7363",
                   "PARTICIPANTS_COUNT": "2", "TRANSMITTER": "ws", "MODEL_URL": "/home/data/models/agg",
                   "PRETRAINED_MODEL_URL": "/downloads/models/pre/model.pb"}
    datasets = set()
    for train in pods["train"]:
        assert meta.generate_name(train) == f"{NAME}-train-"
        assert train["spec"]["hostNetwork"] is True and train["spec"]["restartPolicy"] == "OnFailure"
        env = env_of(train)
        assert env.pop("WORKER_NAME").startswith("trainworker-")
        datasets.add(env.pop("DATASET_NAME"))
        url = env.pop("TRAIN_DATASET_URL")
        assert url in ("/home/data/data/d1/train.txt", "/home/data/data/d2/train.txt")
        assert env == {"batch_size": "32", "learning_rate": "0.001", "epochs": "2", "DATA_PATH_PREFIX": "/home/data",
                       "AGG_PORT": "7363", "AGG_IP": f"{NAME}-aggregation.{NS}", "JOB_NAME": NAME,
                       "PARTICIPANTS_COUNT": "2", "NAMESPACE": NS, "MODEL_NAME": "test-model",
                       "LC_SERVER": "http://test-lc-server:8080", "TRANSMITTER": "ws",
                       "MODEL_URL": "/home/data/models/agg", "PRETRAINED_MODEL_URL": "/downloads/models/pre/model.pb"}
        assert train["spec"]["initContainers"][0]["args"] == ["s3://models/pre/model.pb", "/downloads/models/pre/"]
    assert datasets == {"test-dataset1", "test-dataset2"}
    (svc,) = h.objects(r.SERVICES)
    assert meta.name(svc) == f"{NAME}-aggregation" and meta.is_controlled_by(svc, job)
    assert svc["spec"]["ports"] == [{"name": "tcp-0", "protocol": "TCP", "port": 7363, "targetPort": 7363}]
    status = job["status"]
    assert status["phase"] == "Running" and status["active"] == 3 and status["startTime"]
    (created,) = [e[2] for e in h.events() if e[1] == "SuccessfulCreate"]  # one Event for the sync's creations
    (agg,) = [meta.name(p) for p in h.objects(r.PODS) if "-aggregation-" in meta.name(p)]
    trainers = {meta.name(p) for p in h.objects(r.PODS)} - {agg}
    head, _, last = created.rpartition(" and pod ")
    first, _, second = head.partition(f"created pod {agg}, aggregation service {NAME}-aggregation, pod ")
    assert first == "" and {second, last} == trainers, created  # in the order created


def test_s3_transmitter_mounts_the_aggregation_data_path_with_its_credentials(fl):
    h = fl(fl_job(transmitter={"s3": {"aggDataPath": "s3://fl/agg", "credentialName": "s3-secret"}}),
           refs=(*REFS, s3_secret()))
    h.sync(NAME)
    h.refresh()
    for pods in by_type(h).values():
        env = env_of(pods[0])
        assert env["TRANSMITTER"] == "s3" and env["AGG_DATA_PATH"] == "s3://fl/agg"  # not downloaded: the URL itself
        assert (env["S3_ENDPOINT_URL"], env["ACCESS_KEY_ID"], env["SECRET_ACCESS_KEY"]) == (
            "http://minio.local:9000", "AKID", "SECRET")


def test_a_missing_transmitter_secret_is_retried(fl):
    h = fl(fl_job(transmitter={"s3": {"aggDataPath": "s3://fl/agg", "credentialName": "nope"}}))
    assert h.sync(NAME) == Result(requeue=True) and h.objects(r.PODS) == []
    assert h.job(NAME)["status"]["phase"] == "Pending"
    assert any(e[1] == "SecretNotFound" for e in h.events())


def test_a_failed_worker_fails_the_job_for_good(fl):
    h = started(fl)
    set_phase(h, by_type(h)["train"][0], "Failed")
    h.refresh()
    h.sync(NAME)
    job = h.job(NAME)
    assert job["status"]["phase"] == "Failed" and job["status"]["failed"] == 1
    (cond,) = job["status"]["conditions"]
    assert (cond["type"], cond["reason"], cond["message"]) == ("Failed", "workerFailed", "the worker of FederatedLearningJob failed")
    assert cond["lastProbeTime"] and cond["lastHeartbeatTime"] and "lastTransitionTime" not in cond
    assert ("Warning", "workerFailed", "the worker of FederatedLearningJob failed") in h.events()
    h.refresh()
    h.cs.clear_actions()
    h.sync(NAME)
    assert h.cs.actions() == []  # finished: nothing to do


def test_every_worker_succeeded_completes_the_job(fl):
    h = started(fl)
    status = finish_every_pod(h)
    assert status["phase"] == "Succeeded" and status["succeeded"] == 3 and status["active"] == 0
    assert [c["type"] for c in status["conditions"]] == ["Complete"] and status["completionTime"]
    assert ("Normal", "Completed", "FederatedLearningJob completed") in h.events()


def test_delete_pod_of_an_ownerless_pod_or_a_non_pod_does_nothing(fl):
    """Sedna's Test_deletePod."""
    h = started(fl)
    ownerless = h.client(r.PODS).create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod", "namespace": NS},
                                         "spec": {"containers": [{"name": "test-container", "image": "test-image"}]}})
    h.cs.clear_actions()
    h.controller.delete_pod(ownerless)
    assert h.client(r.PODS).get("test-pod") and h.actions("create", "pods") == []
    h.controller.delete_pod({"containers": [{"name": "non-existent-container", "image": "non-existent-image"}]})
    h.controller.delete_pod(DeletedFinalStateUnknown("default/x", {"kind": "Node", "metadata": {"name": "x"}}))
    assert h.actions("create", "pods") == [] and h.controller.queue.len() == 0


def test_a_deleted_worker_is_recreated_once_per_5_seconds_and_never_after_the_job(fl):
    h = started(fl)
    train = by_type(h)["train"][0]
    h.client(r.PODS).delete(meta.name(train))
    h.cs.clear_actions()
    h.controller.delete_pod(train)
    (create,) = h.actions("create", "pods")
    assert create.object["metadata"]["name"] == meta.name(train) and "uid" not in create.object["metadata"]
    assert f"{NS}/{meta.name(train)}" in h.controller.recreated_pods
    again = h.client(r.PODS).get(meta.name(train))
    h.client(r.PODS).delete(meta.name(train))
    h.controller.delete_pod(again)
    assert len(h.actions("create", "pods")) == 1
    h.sync(NAME)  # the recreated pod is not in the cache yet: no second set of workers
    assert len(h.actions("create", "pods")) == 1
    h.timer.advance(5.1)
    h.controller.delete_pod(again)
    assert len(h.actions("create", "pods")) == 2
    # a finished pod is not brought back, nor a pod of a deleted job
    h.refresh()
    done = by_type(h)["aggregation"][0]
    set_phase(h, done, "Succeeded")
    done = h.client(r.PODS).get(meta.name(done))
    h.client(r.PODS).delete(meta.name(done))
    h.controller.delete_pod(done)
    assert len(h.actions("create", "pods")) == 2
    other = by_type(h)["train"][1]
    h.jobs.delete(NAME)
    h.controller.delete_pod(other)  # the cache still has the job; the API server says it is gone
    assert len(h.actions("create", "pods")) == 2


def test_update_job_replaces_that_jobs_pods_with_the_new_spec(fl):
    """Sedna's Test_updateJob: batch_size 32 → 16 in the first training worker."""
    h = started(fl)
    old_pods = {meta.uid(p) for p in pods_of(h)}
    old, new = h.update_spec(NAME, lambda spec: spec["trainingWorkers"][0]["template"]["spec"]["containers"][0]["env"][0].update(value="16"))
    assert meta.generation(new) == 2
    h.cs.clear_actions()
    h.controller.update_job(old, new)
    assert f"{NS}/{NAME}" in h.controller.prevent_recreation
    h.refresh()
    h.sync(NAME)
    assert len(h.actions("delete", "pods")) == 3 and len(h.actions("create", "pods")) == 3
    h.refresh()
    pods = pods_of(h)
    assert len(pods) == 3 and not old_pods & {meta.uid(p) for p in pods}
    assert sorted(env_of(p)["batch_size"] for p in by_type(h)["train"]) == ["16", "32"]
    assert all(meta.annotations(p)["sedna.io/job-generation"] == "2" for p in pods)
    # the old pods' delete events arrive late: they are not recreated
    for action in h.actions("delete", "pods"):
        h.controller.delete_pod({"kind": "Pod", "metadata": {"name": action.name, "namespace": NS,
                                 "annotations": {"sedna.io/job-generation": "1"},
                                 "ownerReferences": [meta.new_controller_ref(h.job(NAME))]}})
    assert len(h.actions("create", "pods")) == 3
    h.sync(NAME)
    assert f"{NS}/{NAME}" not in h.controller.prevent_recreation
    assert h.job(NAME)["spec"]["trainingWorkers"][0]["template"]["spec"]["containers"][0]["env"][0]["value"] == "16"
    assert [a for a in h.cs.actions() if a.resource == "federatedlearningjobs" and a.verb == "update"
            and a.subresource != "status"] == []  # the job is never written back


def test_two_jobs_updated_at_once_do_not_interfere(fl):
    h = started(fl, fl_job("job-a"), fl_job("job-b"))
    before = {n: {meta.uid(p) for p in pods_of(h, n)} for n in ("job-a", "job-b")}
    changes = {}
    for name, size in (("job-a", "8"), ("job-b", "64")):
        changes[name] = h.update_spec(name, lambda spec, size=size: spec["trainingWorkers"][1]["template"]["spec"]
                                      ["containers"][0]["env"][0].update(value=size))
    for old, new in changes.values():
        h.controller.update_job(old, new)
    h.refresh()
    h.sync("job-a")
    h.sync("job-b")
    h.refresh()
    for name, size in (("job-a", "8"), ("job-b", "64")):
        pods = pods_of(h, name)
        assert len(pods) == 3 and not before[name] & {meta.uid(p) for p in pods}
        assert sorted(env_of(p)["batch_size"] for p in by_type(h, name)["train"]) == sorted(["32", size])
        for train in by_type(h, name)["train"]:
            assert env_of(train)["AGG_IP"] == f"{name}-aggregation.{NS}" and env_of(train)["JOB_NAME"] == name
    for name in ("job-a", "job-b"):  # the old pods' delete events wake the jobs: their roll-outs are over
        h.sync(name)
        assert f"{NS}/{name}" not in h.controller.prevent_recreation
    # job-a rolls again while a pod of job-b is deleted by hand: job-b's pod is recreated, job-a's old ones are not
    old, new = h.update_spec("job-a", lambda spec: spec["trainingWorkers"][0]["template"]["spec"]["containers"][0]["env"][0].update(value="4"))
    h.controller.update_job(old, new)
    b_pod = by_type(h, "job-b")["train"][0]
    a_pod = by_type(h, "job-a")["train"][0]
    h.cs.clear_actions()
    for pod in (a_pod, b_pod):
        h.client(r.PODS).delete(meta.name(pod))
        h.controller.delete_pod(pod)
    assert [a.object["metadata"]["name"] for a in h.actions("create", "pods")] == [meta.name(b_pod)]


def test_a_missing_dataset_keeps_the_job_pending_until_it_appears(fl):
    h = fl(fl_job(), refs=REFS[:3])
    h.sync(NAME)
    assert h.job(NAME)["status"]["phase"] == "Pending" and h.objects(r.PODS) == []
    assert any(e[1] == "DatasetNotFound" and "test-dataset2" in e[2] for e in h.events())
    h.client(r.DATASETS).create(REFS[3])
    h.refresh()
    h.controller.wake_referencing(r.DATASETS, REFS[3])
    assert h.controller.queue.get()[0] == f"{NS}/{NAME}"
    h.sync(NAME)
    assert len(h.objects(r.PODS)) == 3 and h.job(NAME)["status"]["phase"] == "Running"


def test_downstream_to_each_training_node(fl):
    h = fl(fl_job())
    job = h.job(NAME)
    h.controller.add_job(job)
    assert sorted((m.node, m.operation) for m in h.edge.sent) == [("test-node1", INSERT), ("test-node2", INSERT)]
    old, new = h.update_spec(NAME, lambda spec: spec["trainingWorkers"][1]["template"]["spec"].update(nodeName="test-node1"))
    h.edge.sent.clear()
    h.controller.update_job(old, new)
    assert sorted((m.node, m.operation) for m in h.edge.sent) == [("test-node1", INSERT), ("test-node2", DELETE)]
    h.edge.sent.clear()
    h.controller.delete_job(new)
    assert [(m.node, m.operation, m.obj["kind"]) for m in h.edge.sent] == [("test-node1", DELETE, "FederatedLearningJob")]


def report(h, current_round: Any, metrics: dict[str, Any] | None = None, update_time: str = "") -> None:
    h.edge.report("test-node1", NS, "FederatedLearningJob", NAME, {
        "phase": "train", "status": "running",
        "output": {"models": [{"format": "pb", "url": "/m", "metrics": metrics or {}}],
                   "ownerInfo": {"currentRound": current_round,
                                 "updateTime": update_time or f"2026-01-02 03:0{current_round}:00"}}})


def training(h) -> list[tuple[str, str]]:
    return [(c["reason"], c["message"]) for c in h.conditions(NAME) if c["type"] == "Training"]


def round_events(h) -> list[str]:
    return [message for _, reason, message in h.events() if reason == "DoTraining"]


def test_round_reports_show_the_latest_record_each_and_write_model_metrics(fl):
    h = started(fl)
    report(h, 1, {"accuracy": 0.5, "loss": [0.1, 0.2]})
    report(h, 1)  # resent: nothing new
    assert training(h) == [("DoTraining", "Round 1 reaches at 2026-01-02 03:01:00")]
    report(h, 2)
    # one Training condition, the latest report (Go appends one per report, for ever); each report an Event
    assert training(h) == [("DoTraining", "Round 2 reaches at 2026-01-02 03:02:00")]
    assert round_events(h) == ["Round 1 reaches at 2026-01-02 03:01:00", "Round 2 reaches at 2026-01-02 03:02:00"]
    report(h, 2, update_time="2026-01-02 03:02:01")  # the other trainer's report of the same round
    assert training(h) == [("DoTraining", "Round 2 reaches at 2026-01-02 03:02:01")] and len(round_events(h)) == 3
    m = h.client(r.MODELS).get("test-model")["status"]
    assert m["metrics"] == [{"key": "accuracy", "value": "0.5"}, {"key": "loss", "value": "[0.1,0.2]"}]
    assert m["updateTime"]
    report(h, "three")  # not a round number: dropped
    report(h, 0)
    assert len(training(h)) == 1
    # a GM status write from a stale cache keeps the reported condition
    for pod in pods_of(h):
        set_phase(h, pod, "Succeeded")
    h.refresh()
    h.sync(NAME)
    assert [c["type"] for c in h.conditions(NAME)] == ["Training", "Complete"]


def test_a_go_gm_s_training_conditions_collapse_into_one(fl):
    h = started(fl)
    go = [{"type": "Training", "status": "True", "reason": "DoTraining", "message": f"Round {n} reaches at t{n}"}
          for n in range(1, 200)]
    h.set_status(r.FEDERATED_LEARNING_JOBS, NAME, {**h.job(NAME)["status"], "conditions": go})
    h.refresh()
    report(h, 200, update_time="t200")
    assert training(h) == [("DoTraining", "Round 200 reaches at t200")]


def test_invalid_spec_is_reported(fl):
    h = fl(fl_job("f" * 60))
    h.sync("f" * 60)
    job = h.job("f" * 60)
    assert job["status"]["phase"] == "Failed" and job["status"]["conditions"][-1]["reason"] == "InvalidSpec"
    assert h.objects(r.PODS) == []


def test_a_spec_field_of_the_wrong_type_fails_the_job_naming_it(fl):
    job = fl_job()
    job["spec"]["trainingWorkers"][1]["dataset"] = "test-dataset2"  # not {"name": ...}
    h = fl(job)  # the job is cached (the reference indexes skip a spec they cannot read)
    assert h.sync(NAME) is None
    status = h.job(NAME)["status"]
    assert status["phase"] == "Failed" and status["conditions"][-1]["reason"] == "InvalidSpec"
    assert "spec.trainingWorkers[1].dataset" in status["conditions"][-1]["message"]
    assert h.objects(r.PODS) == []
    h.controller.add_job(h.job(NAME))
    assert h.edge.sent == []  # no node runs a job it cannot read


def test_a_change_that_makes_the_spec_unreadable_removes_the_job_from_its_nodes(fl):
    h = fl(fl_job())
    old, new = h.update_spec(NAME, lambda spec: spec["trainingWorkers"][0].update(dataset="test-dataset1"))
    h.controller.update_job(old, new)
    assert sorted((m.node, m.operation) for m in h.edge.sent) == [("test-node1", DELETE), ("test-node2", DELETE)]


def datasets_of_trainers(h) -> list[str]:
    return sorted(env_of(p)["DATASET_NAME"] for p in by_type(h).get("train", []))


def test_a_creation_failing_part_way_is_completed_by_the_retry(fl):
    h = fl(fl_job())
    creates = {"n": 0}

    def fail_the_second_training_pod(action: Any) -> tuple[bool, Any, Any]:
        creates["n"] += 1  # aggregation, train 0, train 1 (a 500 once), ...
        return (True, None, errors.InternalError("etcd timeout")) if creates["n"] == 3 else (False, None, None)

    h.cs.prepend_reactor("create", "pods", fail_the_second_training_pod)
    with pytest.raises(errors.ApiError):
        h.sync(NAME)
    h.refresh()
    h.cs.clear_actions()
    assert h.sync(NAME) is None
    (create,) = h.actions("create", "pods")  # exactly the missing worker
    assert meta.annotations(create.object)[INDEX_ANNOTATION] == "1"
    h.refresh()
    assert len(by_type(h)["aggregation"]) == 1 and datasets_of_trainers(h) == ["test-dataset1", "test-dataset2"]
    assert h.job(NAME)["status"]["active"] == 3
    h.cs.clear_actions()
    h.sync(NAME)
    assert h.actions("create", "pods") == []


def test_a_worker_deleted_again_within_5_seconds_is_recreated_by_sync_once_it_may(fl, mocker):
    h = started(fl)
    victim = by_type(h)["train"][1]
    h.client(r.PODS).delete(meta.name(victim))
    h.controller.delete_pod(victim)  # recreated by the delete handler
    again = h.client(r.PODS).get(meta.name(victim))
    h.timer.advance(1)
    h.client(r.PODS).delete(meta.name(again))
    h.controller.delete_pod(again)  # recreated 1 s ago: refused
    h.refresh()
    h.cs.clear_actions()
    spy = mocker.spy(h.controller.queue, "add_after")
    h.sync(NAME)
    assert h.actions("create", "pods") == []
    spy.assert_called_once_with(f"{NS}/{NAME}", 4.0)  # synced again when the worker may be recreated
    h.timer.advance(4)
    h.sync(NAME)
    (create,) = h.actions("create", "pods")
    assert meta.annotations(create.object)[INDEX_ANNOTATION] == meta.annotations(victim)[INDEX_ANNOTATION]
    h.refresh()
    assert datasets_of_trainers(h) == ["test-dataset1", "test-dataset2"]


def test_a_worker_waiting_to_be_recreated_keeps_the_job_from_succeeding(fl):
    h = started(fl)
    delete_twice(h, by_type(h)["train"][0])  # the second recreation is left to sync, which waits for it
    h.refresh()
    status = finish_every_pod(h)
    assert status["phase"] == "Running" and status["succeeded"] == 2 and status["active"] == 1


def test_a_spec_change_right_after_a_recreation_creates_every_new_worker_at_once(fl):
    h = started(fl)
    victim = by_type(h)["train"][0]
    h.client(r.PODS).delete(meta.name(victim))
    h.controller.delete_pod(victim)  # this worker of generation 1 was recreated moments ago
    h.refresh()
    old, new = h.update_spec(NAME, lambda spec: spec["trainingWorkers"][0]["template"]["spec"]["containers"][0]
                             ["env"][0].update(value="16"))
    h.controller.update_job(old, new)
    h.refresh()
    h.cs.clear_actions()
    h.sync(NAME)
    assert len(h.actions("create", "pods")) == 3  # generation 2's workers are first creations


def test_sync_and_the_delete_handler_never_both_bring_back_a_worker(fl):
    h = started(fl)
    victim = by_type(h)["aggregation"][0]
    h.client(r.PODS).delete(meta.name(victim))
    h.refresh()  # the cache lost the pod; its delete event is still on its way to the handler
    h.cs.clear_actions()
    h.sync(NAME)
    h.controller.delete_pod(victim)
    (create,) = h.actions("create", "pods")
    assert meta.generate_name(create.object) == f"{NAME}-aggregation-"


def test_a_worker_whose_pod_finished_is_not_created_again(fl):
    h = started(fl)
    first, second = by_type(h)["train"]
    set_phase(h, first, "Succeeded")
    h.refresh()
    h.sync(NAME)  # sync sees the first one finished
    set_phase(h, second, "Succeeded")
    for pod in (first, second):
        done = h.client(r.PODS).get(meta.name(pod))
        h.client(r.PODS).delete(meta.name(pod))
        h.controller.delete_pod(done)  # the second one's end is seen only in its delete event
    h.refresh()
    h.cs.clear_actions()
    h.sync(NAME)
    assert h.actions("create", "pods") == [] and by_type(h).get("train") is None


def test_training_pods_without_an_index_stand_for_the_first_free_workers():
    job = fl_job()
    label = "federatedlearningjob.sedna.io/worker-type"
    agg = {"metadata": {"labels": {label: "aggregation"}}}
    unindexed = {"metadata": {"labels": {label: "train"}}}  # created by a sedna-gm that did not record the index
    second = {"metadata": {"labels": {label: "train"}, "annotations": {INDEX_ANNOTATION: "1"}}}
    assert missing_workers(job, 2, []) == ["aggregation", "train-0", "train-1"]
    assert missing_workers(job, 2, [agg, unindexed]) == ["train-1"]
    assert missing_workers(job, 2, [unindexed, second]) == ["aggregation"]
    assert missing_workers(job, 2, [agg], finished={"train-0"}) == ["train-1"]


def test_rounds_of_a_run_started_again_are_recorded_and_resends_are_not(fl):
    h = started(fl)
    report(h, 1)
    report(h, 2)
    old, new = h.update_spec(NAME, lambda spec: spec["trainingWorkers"][0]["template"]["spec"]["containers"][0]["env"][0].update(value="16"))
    h.controller.update_job(old, new)
    h.refresh()
    h.sync(NAME)  # every pod replaced: training starts again at round 1
    report(h, 1, update_time="2026-01-02 04:01:00")
    report(h, 1, update_time="2026-01-02 04:01:00")  # resent
    report(h, 2, update_time="2026-01-02 04:02:00")
    report(h, 2)  # a late resend of the first run's round 2 (from another node's LC): not shown over the newer one
    assert training(h) == [("DoTraining", "Round 2 reaches at 2026-01-02 04:02:00")]
    assert round_events(h) == ["Round 1 reaches at 2026-01-02 03:01:00", "Round 2 reaches at 2026-01-02 03:02:00",
                               "Round 1 reaches at 2026-01-02 04:01:00", "Round 2 reaches at 2026-01-02 04:02:00"]
