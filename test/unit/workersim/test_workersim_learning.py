"""Incremental and lifelong learning workers: the exact bodies Sedna's SDK posts, the files they save on the node
and how their pods end."""

from __future__ import annotations

import json
import logging

from testkit import wait_for
from testkit.workers import sedna_worker_pod

from workersim.mounts import PodMounts

IL = "incrementallearningjob"
LL = "lifelonglearningjob"
NOW = {"sandbox.sedna.io/worker-delay-seconds": "0"}


def il_train_pod(**kw):
    env = {"NAMESPACE": "default", "JOB_NAME": "helmet", "WORKER_NAME": "train-worker-x1y2z", "LC_SERVER":
           "http://localhost:9100", "DATA_PATH_PREFIX": "/home/data", "MODEL_URL": "/home/data/il/output/train/1",
           "BASE_MODEL_URL": "/home/data/models/base/model.pb", "TRAIN_DATASET_URL": "/home/data/il/data/train/1/data.txt"}
    return sedna_worker_pod(IL, "train", "helmet", env, host_dirs=["/il/output/train", "/models/base"], **kw)


def test_il_train_reports_completed_with_its_saved_model_and_its_pod_succeeds(make_simulator, run_pod, lc, phase,
                                                                             rootfs):
    make_simulator()
    pod = run_pod(il_train_pod(annotations=NOW))
    wait_for("the pod to succeed", lambda: phase(pod), check=lambda p: p == "Succeeded")
    assert lc.reports == [("train-worker-x1y2z", {
        "name": "train-worker-x1y2z", "namespace": "default", "ownerName": "helmet", "ownerKind": IL,
        "kind": "train", "status": "completed",
        "results": [
            {"format": "pb", "url": "/il/output/train/1/model_finetune_tensorflow.pb", "metrics": None},
            {"format": "ckpt", "url": "/il/output/train/1", "metrics": None},
        ]})]
    saved = json.loads((rootfs / "il/output/train/1/model_finetune_tensorflow.pb").read_text())
    assert saved["worker"] == "train-worker-x1y2z" and saved["job"] == "helmet"


def test_il_train_with_another_backend_and_steered_metrics(make_simulator, run_pod, lc, phase, cs):
    make_simulator()
    pod = il_train_pod(annotations={**NOW, "sandbox.sedna.io/worker-metrics": '{"loss": [0.25]}'})
    pod["spec"]["containers"][0]["env"].append({"name": "BACKEND_TYPE", "value": "torch"})
    pod = run_pod(pod)
    wait_for("the pod to succeed", lambda: phase(pod), check=lambda p: p == "Succeeded")
    assert lc.bodies()[0]["results"] == [
        {"format": "pth", "url": "/il/output/train/1/model_finetune_pytorch.pth", "metrics": {"loss": [0.25]}}]
    status = cs.core_v1().pods("default").get(pod["metadata"]["name"])["status"]
    assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


def test_il_eval_reports_metrics_per_model_in_model_urls_order(make_simulator, run_pod, lc, phase):
    make_simulator()
    env = {"NAMESPACE": "default", "JOB_NAME": "helmet", "WORKER_NAME": "eval-worker-q", "DATA_PATH_PREFIX": "/home/data",
           "MODEL_URLS": "/home/data/il/output/train/1/model.pb;/home/data/models/deploy/model.pb",
           "TEST_DATASET_URL": "/home/data/il/data/eval/1/data.txt"}
    pod = run_pod(sedna_worker_pod(IL, "eval", "helmet", env, annotations=NOW))
    wait_for("the pod to succeed", lambda: phase(pod), check=lambda p: p == "Succeeded")
    assert lc.bodies() == [{
        "name": "eval-worker-q", "namespace": "default", "ownerName": "helmet", "ownerKind": IL,
        "kind": "eval", "status": "completed",
        "results": [
            {"format": "pb", "url": "/il/output/train/1/model.pb", "metrics": {"precision": [0.9], "recall": [0.9]}},
            {"format": "pb", "url": "/models/deploy/model.pb", "metrics": {"precision": [0.7], "recall": [0.7]}},
        ]}]


def test_il_eval_steered_metrics_one_object_per_model(make_simulator, run_pod, lc, phase):
    make_simulator()
    env = {"JOB_NAME": "helmet", "WORKER_NAME": "eval-worker-q", "NAMESPACE": "default",
           "MODEL_URLS": "/home/data/a/new.pb;/home/data/b/old.pb;/home/data/c/older.pb"}
    metrics = '[{"precision": [0.5, 0.6]}, {"precision": [0.8, 0.9]}]'
    pod = run_pod(sedna_worker_pod(IL, "eval", "helmet", env, annotations={
        **NOW, "sandbox.sedna.io/worker-metrics": metrics}))
    wait_for("the pod to succeed", lambda: phase(pod), check=lambda p: p == "Succeeded")
    assert [r["metrics"] for r in lc.bodies()[0]["results"]] == [
        {"precision": [0.5, 0.6]}, {"precision": [0.8, 0.9]}, {"precision": [0.8, 0.9]}]


def test_ll_train_and_eval_report_the_knowledge_base_index(make_simulator, run_pod, lc, phase, rootfs):
    make_simulator()
    base = {"NAMESPACE": "default", "JOB_NAME": "robot", "LC_SERVER": "http://localhost:9100", "KB_SERVER":
            "http://kb:9020", "DATA_PATH_PREFIX": "/home/data"}
    train = run_pod(sedna_worker_pod(LL, "train", "robot", {
        **base, "WORKER_NAME": "train-worker-a", "OUTPUT_URL": "/home/data/ll/output/train/1",
        "HAS_COMPLETED_INITIAL_TRAINING": "false"}, host_dirs=["/ll/output/train/1"], annotations=NOW))
    wait_for("the train pod to succeed", lambda: phase(train), check=lambda p: p == "Succeeded")
    evaluation = run_pod(sedna_worker_pod(LL, "eval", "robot", {
        **base, "WORKER_NAME": "eval-worker-b", "OUTPUT_URL": "/home/data/ll/output/eval/1",
        "MODEL_URLS": "/ll/output/train/1/index.pkl"}, host_dirs=["/ll/output/eval/1"], annotations=NOW))
    wait_for("the eval pod to succeed", lambda: phase(evaluation), check=lambda p: p == "Succeeded")
    owner = {"namespace": "default", "ownerName": "robot", "ownerKind": LL}
    assert lc.bodies() == [
        {"name": "train-worker-a", **owner, "kind": "train", "status": "completed",
         "results": [{"format": "pkl", "url": "/ll/output/train/1/index.pkl", "metrics": None}]},
        {"name": "eval-worker-b", **owner, "kind": "eval", "status": "completed",
         "results": [{"format": "pkl", "url": "/ll/output/eval/1/index.pkl",
                      "metrics": {"precision": [0.9], "recall": [0.9]}}]},
    ]
    assert (rootfs / "ll/output/train/1/index.pkl").is_file() and (rootfs / "ll/output/eval/1/index.pkl").is_file()


def test_steered_model_info_is_added_to_every_reported_model(make_simulator, run_pod, lc, phase):
    make_simulator()
    info = {"classes": ["helmet"], "current_metric": {"task-0": {"precision": 0.5}}, "number_of_labeled_unseen_sample": 3}
    env = {"NAMESPACE": "default", "JOB_NAME": "robot", "WORKER_NAME": "eval-worker-i", "DATA_PATH_PREFIX": "/home/data",
           "OUTPUT_URL": "/home/data/ll/output/eval/1", "MODEL_URLS": "/ll/output/train/1/index.pkl"}
    pod = run_pod(sedna_worker_pod(LL, "eval", "robot", env, annotations={
        **NOW, "sandbox.sedna.io/worker-model-info": json.dumps(info)}))
    wait_for("the eval pod to succeed", lambda: phase(pod), check=lambda p: p == "Succeeded")
    assert lc.bodies()[0]["results"] == [{"format": "pkl", "url": "/ll/output/eval/1/index.pkl",
                                          "metrics": {"precision": [0.9], "recall": [0.9]}, **info}]


def test_inference_workers_send_nothing_and_keep_running(make_simulator, run_pod, lc, phase):
    simulator = make_simulator()
    il = run_pod(sedna_worker_pod(IL, "inference", "helmet", {"WORKER_NAME": "inferworker-1", "JOB_NAME": "helmet"},
                                  annotations=NOW))
    ll = run_pod(sedna_worker_pod(LL, "inference", "robot", {"WORKER_NAME": "inferworker-2", "JOB_NAME": "robot"},
                                  annotations=NOW))
    wait_for("both workers to run", simulator.active_workers, check=lambda w: len(w) == 2)
    assert lc.reports == [] and phase(il) == phase(ll) == "Running"


def _hot_update_pod(annotations):
    env = {"NAMESPACE": "default", "JOB_NAME": "helmet", "WORKER_NAME": "inferworker-h", "MODEL_HOT_UPDATE": "true",
           "MODEL_POLL_PERIOD_SECONDS": "60", "MODEL_HOT_UPDATE_CONFIG": "/model-hot-update/model_config.json"}
    return sedna_worker_pod(IL, "inference", "helmet", env, annotations={
        "sandbox.sedna.io/worker-period-seconds": "0.05", **annotations},
        host_mounts={"/var/lib/sedna/model-hot-update/default/incrementallearningjob/helmet": "/model-hot-update"})


def _write_hot_update(rootfs, version, model_file="model-2.pb", write_model=True):
    directory = rootfs / "var/lib/sedna/model-hot-update/default/incrementallearningjob/helmet"
    directory.mkdir(parents=True, exist_ok=True)
    if write_model:
        (directory / model_file).write_bytes(b"model")
    (directory / "model_config.json").write_text(json.dumps(
        {"model_config": {"model_path": f"/model-hot-update/{model_file}", "model_update_time": version}}))


def test_hot_update_reports_deploy_completed_once_per_new_version(make_simulator, run_pod, lc, rootfs, phase, mocker):
    reads = mocker.spy(PodMounts, "read")  # one call per poll of the hot-update config

    def polled_twice() -> None:
        """Wait until the worker read the config twice more: the first poll that saw what the test just wrote
        has finished (a report it sent is in ``lc``)."""
        seen = reads.call_count
        wait_for("two more polls of the config", lambda: reads.call_count >= seen + 2)

    make_simulator()
    pod = run_pod(_hot_update_pod({}))
    deploy = {"name": "inferworker-h", "namespace": "default", "ownerName": "helmet", "ownerKind": IL,
              "kind": "deploy", "status": "completed"}
    config = rootfs / "var/lib/sedna/model-hot-update/default/incrementallearningjob/helmet/model_config.json"
    polled_twice()  # no config yet
    _write_hot_update(rootfs, "1700000000", write_model=False)  # the model is not there yet
    polled_twice()
    config.write_text("{")  # not JSON
    polled_twice()
    config.write_text(json.dumps({"model_config": {"model_update_time": "1"}}))  # no model_path
    polled_twice()
    assert lc.reports == []
    _write_hot_update(rootfs, "2024-01-02 03:04:05")
    wait_for("the deploy report", lc.bodies, check=lambda b: b == [deploy])
    _write_hot_update(rootfs, "2024-01-02 03:04:05")  # same version again: nothing new
    polled_twice()
    assert lc.bodies() == [deploy]
    _write_hot_update(rootfs, "2024-01-03 03:04:05", model_file="model-3.pb")
    wait_for("the second deploy report", lc.bodies, check=lambda b: b == [deploy, deploy])
    assert phase(pod) == "Running"


def test_hot_update_that_fails_to_load_reports_deploy_failed(make_simulator, run_pod, lc, rootfs):
    make_simulator()
    run_pod(_hot_update_pod({"sandbox.sedna.io/worker-fail": "crash"}))
    _write_hot_update(rootfs, 1700000000)
    wait_for("the deploy report", lc.bodies, check=lambda b: b and b[0]["status"] == "failed")
    assert lc.bodies()[0]["kind"] == "deploy"


def test_il_train_to_s3_uploads_its_model_with_the_workers_credentials(make_simulator, run_pod, lc, phase, rootfs,
                                                                      s3_server):
    s3_server.client().create_bucket(Bucket="models-up")
    make_simulator()
    env = {"NAMESPACE": "default", "JOB_NAME": "helmet", "WORKER_NAME": "train-worker-s3",
           "MODEL_URL": "s3://models-up/il/output/train/2", "S3_ENDPOINT_URL": s3_server.url,
           **{k: v for k, v in s3_server.credential().items() if k in ("ACCESS_KEY_ID", "SECRET_ACCESS_KEY")}}
    pod = run_pod(sedna_worker_pod(IL, "train", "helmet", env, annotations=NOW))
    wait_for("the pod to succeed", lambda: phase(pod), check=lambda p: p == "Succeeded")
    assert [r["url"] for r in lc.bodies()[0]["results"]] == [
        "s3://models-up/il/output/train/2/model_finetune_tensorflow.pb", "s3://models-up/il/output/train/2"]
    body = s3_server.client().get_object(Bucket="models-up", Key="il/output/train/2/model_finetune_tensorflow.pb")
    assert json.loads(body["Body"].read())["worker"] == "train-worker-s3"
    assert not any(rootfs.rglob("*.pb"))


def test_il_train_whose_upload_fails_still_reports(make_simulator, run_pod, lc, phase, caplog):
    caplog.set_level(logging.WARNING, logger="workersim")
    make_simulator()
    env = {"NAMESPACE": "default", "JOB_NAME": "helmet", "WORKER_NAME": "train-worker-s3",
           "MODEL_URL": "s3://bucket/il/output/train/2", "S3_ENDPOINT_URL": "http://127.0.0.1:1"}
    pod = run_pod(sedna_worker_pod(IL, "train", "helmet", env, annotations=NOW))
    wait_for("the pod to succeed", lambda: phase(pod), check=lambda p: p == "Succeeded")
    assert [r["url"] for r in lc.bodies()[0]["results"]] == [
        "s3://bucket/il/output/train/2/model_finetune_tensorflow.pb", "s3://bucket/il/output/train/2"]
    [warning] = [r.msg for r in caplog.records
                 if isinstance(r.msg, dict) and r.msg.get("event") == "cannot upload the worker's file"]
    assert warning["url"] == "s3://bucket/il/output/train/2/model_finetune_tensorflow.pb"
    assert "127.0.0.1:1" in warning["error"]
