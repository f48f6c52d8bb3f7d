"""The exact pods of IncrementalLearningJob and LifelongLearningJob (sedna.md §3.5): env, mounts, storage
initializer, S3 credentials, hot update, host network, restart and DNS policies, names, labels and owners."""

from __future__ import annotations

import re
from typing import Any

import pytest
from learningjob_test_helpers import (
    EVAL_READY,
    IL_KIND,
    KB,
    LC,
    LL_KIND,
    TRAIN_READY,
    condition,
    il_job,
    ll_job,
)
from sedna_test_helpers import dataset, model, s3_secret

from apis import meta
from apis import resources as r
from reconcile import Result

S3_ENV = [("S3_ENDPOINT_URL", "http://minio.local:9000"), ("ACCESS_KEY_ID", "AKID"), ("SECRET_ACCESS_KEY", "SECRET")]


def env(pod: dict[str, Any], worker: str) -> list[tuple[str, str]]:
    """The container's env in order; ``WORKER_NAME`` checked as ``<worker>-<5 random>`` and shown as ``<worker>``."""
    out = []
    for e in pod["spec"]["containers"][0]["env"]:
        value = e["value"]
        if e["name"] == "WORKER_NAME":
            assert re.fullmatch(rf"{worker}-[bcdfghjklmnpqrstvwxz2456789]{{5}}", value), value
            value = worker
        out.append((e["name"], value))
    return out


def mounts(pod: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["name"], m["mountPath"]) for m in pod["spec"]["containers"][0].get("volumeMounts") or []]


def volumes(pod: dict[str, Any]) -> list[tuple[str, str]]:
    return [(v["name"], (v.get("hostPath") or {}).get("path", "emptyDir")) for v in pod["spec"].get("volumes") or []]


def initializer_args(pod: dict[str, Any]) -> list[str] | None:
    inits = pod["spec"].get("initContainers") or []
    return inits[0]["args"] if inits else None


@pytest.fixture
def harness(make_learning_harness):
    return make_learning_harness


LOCAL_IL = (model("initial-model", "/models/initial.pb"), model("deploy-model", "/models/deploy.pb"),
            dataset("ds", "/data/train.txt", "ds-node"))


def test_il_train_pod(harness):
    h = harness(IL_KIND, il_job(), *LOCAL_IL)
    h.set_conditions("il", condition("Train", "Waiting"), condition("Train", "Ready", TRAIN_READY))
    h.step("il")
    (pod,) = h.pods("train")
    assert meta.name(pod).startswith("il-train-") and pod["metadata"]["generateName"] == "il-train-"
    assert meta.labels(pod) == {"incrementallearningjob.sedna.io/name": "il",
                                "incrementallearningjob.sedna.io/uid": meta.uid(h.job("il")),
                                "incrementallearningjob.sedna.io/worker-type": "train"}
    assert meta.get_controller_of(pod)["uid"] == meta.uid(h.job("il"))
    assert pod["spec"]["hostNetwork"] is True and pod["spec"]["restartPolicy"] == "OnFailure"
    assert "dnsPolicy" not in pod["spec"] and pod["spec"]["nodeName"] == "train-node"
    assert env(pod, "train-worker") == [
        ("DATA_PATH_PREFIX", "/home/data"), ("NAMESPACE", "default"), ("JOB_NAME", "il"),
        ("WORKER_NAME", "train-worker"), ("LC_SERVER", LC),
        ("BASE_MODEL_URL", "/home/data/models/initial.pb"), ("MODEL_URL", "/home/data/output/train/1"),
        ("TRAIN_DATASET_URL", "/home/data/output/data/train/1/data.txt"),
        ("ORIGINAL_DATASET_URL", "/home/data/data/train.txt")]
    assert volumes(pod) == [("modelsz", "/models/"), ("output-trainz", "/output/train/"),
                            ("output-data-train-1z", "/output/data/train/1/"), ("dataz", "/data/")]
    assert initializer_args(pod) is None


def test_il_train_pod_with_s3_secrets_and_an_index_file(harness):
    job = il_job(credential="job-secret", output="s3://out")  # the host-path index file: under the deploy Model's dir
    h = harness(IL_KIND, job, model("initial-model", "s3://models/initial.pb", credential="model-secret"),
                model("deploy-model", "/output/deploy.pb"), dataset("ds", "s3://data/train.txt", "ds-node", "ds-secret"),
                s3_secret("job-secret"), s3_secret("model-secret"), s3_secret("ds-secret"))
    data = {"input": {"models": [{"format": "pb", "url": "s3://models/initial.pb"}], "dataURL": "s3://out/data/1/data.txt",
                      "dataIndexURL": "/output/data/1/dataIndex.txt", "outputDir": "s3://out/train/1"}}
    h.set_conditions("il", condition("Train", "Waiting"), condition("Train", "Ready", data))
    h.step("il")
    (pod,) = h.pods("train")
    assert env(pod, "train-worker") == [
        *S3_ENV,  # MODEL_URL (s3, not downloaded) gets the job's credentials; the host path only goes to the initializer
        ("NAMESPACE", "default"), ("JOB_NAME", "il"), ("WORKER_NAME", "train-worker"), ("LC_SERVER", LC),
        ("BASE_MODEL_URL", "/downloads/models/initial.pb"), ("MODEL_URL", "s3://out/train/1"),
        ("TRAIN_DATASET_URL", "/downloads/out/data/1/data.txt"),
        ("ORIGINAL_DATASET_URL", "/downloads/output/data/1/dataIndex.txt")]
    assert initializer_args(pod) == ["s3://models/initial.pb", "/downloads/models/", "s3://out/data/1/data.txt",
                                     "/downloads/out/data/1/", "/home/data/output/data/1/dataIndex.txt",
                                     "@/downloads/output/data/1/"]
    init = pod["spec"]["initContainers"][0]
    assert [(e["name"], e["value"]) for e in init["env"]] == [*S3_ENV, ("INDIRECT_URL_MARK", "@")]
    assert ("output-data-1z", "/home/data/output/data/1/") in [(m["name"], m["mountPath"]) for m in init["volumeMounts"]]


def test_il_train_pod_needs_every_secret_it_mounts(harness):
    h = harness(IL_KIND, il_job(credential="job-secret"), *LOCAL_IL)
    h.set_conditions("il", condition("Train", "Waiting"), condition("Train", "Ready", TRAIN_READY))
    assert h.step("il") == Result(requeue=True)  # retried later: nothing wakes a job when a Secret appears
    assert h.pods("train") == [] and h.states("il")[-1] == ("Train", "Ready")
    last = h.conditions("il")[-1]
    assert last["reason"] == "SecretNotFound" and "job-secret" in last["message"]
    assert last["message"].startswith("reported by lc; ")
    h.cs.core_v1().secrets("default").create(s3_secret("job-secret"))
    assert h.step("il") is None
    assert len(h.pods("train")) == 1 and h.states("il")[-1] == ("Train", "Starting")


def test_il_eval_pod(harness):
    h = harness(IL_KIND, il_job(), *LOCAL_IL)
    h.set_conditions("il", condition("Eval", "Waiting"), condition("Eval", "Ready", EVAL_READY))
    h.step("il")
    (pod,) = h.pods("eval")
    assert pod["metadata"]["generateName"] == "il-eval-" and pod["spec"]["restartPolicy"] == "OnFailure"
    assert pod["spec"]["hostNetwork"] is True and pod["spec"]["nodeName"] == "eval-node"
    assert env(pod, "eval-worker") == [
        ("DATA_PATH_PREFIX", "/home/data"), ("NAMESPACE", "default"), ("JOB_NAME", "il"),
        ("WORKER_NAME", "eval-worker"), ("LC_SERVER", LC),
        ("MODEL_URLS", "/home/data/output/train/1/model.pb;/home/data/models/deploy.pb"),
        ("TEST_DATASET_URL", "/home/data/output/data/eval/1/data.txt"),
        ("ORIGINAL_DATASET_URL", "/home/data/data/train.txt")]


@pytest.mark.parametrize("hot", [False, True])
def test_il_inference_pod(harness, hot):
    h = harness(IL_KIND, il_job(hot=hot), *LOCAL_IL)
    h.step("il")  # the first sync creates it
    (pod,) = h.pods("inference")
    assert pod["metadata"]["generateName"] == "il-inference-" and pod["spec"]["hostNetwork"] is True
    assert "restartPolicy" not in pod["spec"]  # the template's (Kubernetes' default: Always)
    expected = [("DATA_PATH_PREFIX", "/home/data"), ("NAMESPACE", "default"), ("JOB_NAME", "il"),
                ("WORKER_NAME", "inferworker"), ("HEM_NAME", "IBT"),
                ("HEM_PARAMETERS", '[{"key":"threshold_img","value":"0.9"}]'), ("LC_SERVER", LC),
                ("MODEL_URL", "/home/data/models/deploy.pb")]
    config = "/var/lib/sedna/model-hot-update/default/incrementallearningjob/il/model_config.json"
    if hot:
        expected += [("MODEL_HOT_UPDATE", "true"), ("MODEL_POLL_PERIOD_SECONDS", "30"),
                     ("MODEL_HOT_UPDATE_CONFIG", "/model-hot-update/model_config.json")]
        assert ("sedna-model-hot-update-volume", "/model-hot-update") in mounts(pod)
        assert ("sedna-model-hot-update-volume", config.rpartition("/")[0] + "/") in volumes(pod)
        assert meta.annotations(pod)["sedna.io/model-hot-update-config"] == config
        assert meta.annotations(h.job("il"))["sedna.io/model-hot-update-config"] == config
    else:
        assert "sedna.io/model-hot-update-config" not in meta.annotations(pod)
        assert "sedna.io/model-hot-update-config" not in meta.annotations(h.job("il"))
    assert env(pod, "inferworker") == expected
    assert h.job("il")["status"]["startTime"]


def test_il_inference_pod_is_not_created_twice_at_start(harness):
    h = harness(IL_KIND, il_job(), *LOCAL_IL)
    h.add_pod("il", "inference", "Running", "deploy-node")
    h.step("il")
    assert len(h.pods("inference")) == 1 and h.job("il")["status"]["startTime"]


def test_ll_train_pods_know_the_initial_training(harness):
    h = harness(LL_KIND, ll_job(credential="job-secret"), dataset("ds", "/data/train.txt", "ds-node"),
                s3_secret("job-secret"))
    ready = {"input": {"dataURL": "s3://out/ll/data/train/1/data.txt", "outputDir": "s3://out/ll/train/1"}}
    h.set_conditions("ll", condition("Train", "Waiting"), condition("Train", "Ready", ready))
    h.step("ll")
    (first,) = h.pods("train")
    base = [("NAMESPACE", "default"), ("JOB_NAME", "ll"), ("WORKER_NAME", "train-worker")]
    tail = [("OUTPUT_URL", "s3://out/ll/train/1"), ("TRAIN_DATASET_URL", "/downloads/out/ll/data/train/1/data.txt"),
            ("ORIGINAL_DATASET_URL", "/home/data/data/train.txt")]
    assert env(first, "train-worker") == [("DATA_PATH_PREFIX", "/home/data"), *S3_ENV, *base,
                                          ("HAS_COMPLETED_INITIAL_TRAINING", "false"), ("LC_SERVER", LC),
                                          ("KB_SERVER", KB), *tail]
    assert first["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet" and first["spec"]["hostNetwork"] is True
    assert first["spec"]["restartPolicy"] == "OnFailure" and first["metadata"]["generateName"] == "ll-train-"

    done = {"output": {"models": [{"format": "pkl", "url": "s3://out/ll/train/1/index.pkl"}]}}
    h.set_conditions("ll", condition("Train", "Completed", done), condition("Train", "Completed", {"output": {}}),
                     condition("Train", "Waiting"), condition("Train", "Ready", ready))
    h.set_status(r.PODS, meta.name(first), {"phase": "Succeeded"})
    h.step("ll")
    second = [p for p in h.pods("train") if meta.name(p) != meta.name(first)][0]
    assert env(second, "train-worker")[4:-3] == [*base, ("HAS_COMPLETED_INITIAL_TRAINING", "true"),
                                                 ("LC_SERVER", LC), ("KB_SERVER", KB),
                                                 ("CLOUD_KB_INDEX", "s3://out/ll/train/1/index.pkl")]


def test_ll_eval_and_inference_pods(harness):
    h = harness(LL_KIND, ll_job(credential="job-secret"), dataset("ds", "/data/train.txt", "ds-node"),
                s3_secret("job-secret"))
    ready = {"input": {"models": [{"format": "pkl", "url": "s3://out/ll/train/1/index.pkl"}],
                       "dataURL": "s3://out/ll/data/eval/1/data.txt", "outputDir": "s3://out/ll/eval/1"}}
    h.set_conditions("ll", condition("Eval", "Waiting"), condition("Eval", "Ready", ready))
    h.step("ll")
    (pod,) = h.pods("eval")
    assert env(pod, "eval-worker") == [
        ("DATA_PATH_PREFIX", "/home/data"), *S3_ENV, ("NAMESPACE", "default"), ("JOB_NAME", "ll"),
        ("WORKER_NAME", "eval-worker"), ("LC_SERVER", LC), ("KB_SERVER", KB),
        ("MODEL_URLS", "/downloads/out/ll/train/1/index.pkl"), ("OUTPUT_URL", "s3://out/ll/eval/1"),
        ("TEST_DATASET_URL", "/downloads/out/ll/data/eval/1/data.txt"),
        ("ORIGINAL_DATASET_URL", "/home/data/data/train.txt")]
    assert initializer_args(pod) == ["s3://out/ll/train/1/index.pkl", "/downloads/out/ll/train/1/",
                                     "s3://out/ll/data/eval/1/data.txt", "/downloads/out/ll/data/eval/1/"]
    assert pod["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"

    assert h.pods("inference") == []  # LL has none before its first deploy
    h.set_conditions("ll", condition("Deploy", "Waiting"), condition("Deploy", "Ready", {"input": {}}))
    h.step("ll")
    (infer,) = h.pods("inference")
    assert env(infer, "inferworker") == [*S3_ENV, ("NAMESPACE", "default"), ("JOB_NAME", "ll"),
                                         ("WORKER_NAME", "inferworker"), ("LC_SERVER", LC),
                                         ("OUTPUT_URL", "s3://out/ll/"), ("MODEL_URLS", "s3://out/ll/deploy/index.pkl")]
    assert infer["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet" and infer["spec"]["hostNetwork"] is True
    assert "restartPolicy" not in infer["spec"] and initializer_args(infer) is None
    assert h.states("ll")[-1] == ("Deploy", "Completed")
