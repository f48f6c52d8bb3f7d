"""Sedna's real Python SDK as the worker of every pod (the worker simulator's SDK mode: one SDK process per pod, with
the pod's env, the node's rootfs where the pod sees ``/home/data`` and the hot-update directory it mounted), against
our LCs and GM: an IncrementalLearningJob round (train, eval, and deploy by hot update read through the mount), two
rounds across nodes in the main job's topology (each round's model hot-loaded by the same inference pod), a
LifelongLearningJob's train and eval reports, JointInferenceService edge reports (the SDK's ``LCReporter``; also under
Go's GM, where they name the SDK's default owner) and FederatedLearningJob round reports."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import Processes, fl_round_reports, json_log_lines, wait_for
from testkit.gosedna import GoBinaries
from testkit.interop import MixedSedna, start_mixed
from testkit.learning import job_history

pytestmark = pytest.mark.e2e

TIMEOUT = 90.0


def sdk_system(tmp: Path, sdk_python: tuple[Path, str], go: GoBinaries | None, gm: str) -> Iterator[MixedSedna]:
    """``gm`` (ours or Go's), our LCs, the SDK in every worker pod."""
    procs = Processes(tmp)
    lib, python = sdk_python
    try:
        system = start_mixed(procs, tmp, go, gm, "ours",  # type: ignore[arg-type] - go is None for our GM
                             workersim_args=("--sdk-dir", str(lib), "--sdk-python", python,
                                             "--pod-logs-dir", str(tmp / "pod-logs")))
        yield system
        system.cs.close()
    finally:
        procs.cleanup()


@pytest.fixture(scope="module")
def sedna(tmp_path_factory: pytest.TempPathFactory, sdk_python: tuple[Path, str]) -> Iterator[MixedSedna]:
    yield from sdk_system(tmp_path_factory.mktemp("sdk"), sdk_python, None, "ours")


@pytest.fixture(scope="module")
def sedna_under_go_gm(tmp_path_factory: pytest.TempPathFactory, sdk_python: tuple[Path, str],
                      go_bins: GoBinaries) -> Iterator[MixedSedna]:
    yield from sdk_system(tmp_path_factory.mktemp("sdk-go-gm"), sdk_python, go_bins, "go")


def lines(count: int) -> str:
    return "".join(f"images/{i}.jpg {i % 3}\n" for i in range(count))


def template(node: str = "edge-1", env: dict[str, str] | None = None, **annotations: str) -> dict[str, Any]:
    return {"metadata": {"annotations": {"sandbox.sedna.io/worker-delay-seconds": "0.2", **annotations}},
            "spec": {"nodeName": node, "containers": [{
                "name": "worker", "image": "kubeedge/sedna-example:v0.4.0",
                "env": [{"name": k, "value": v} for k, v in (env or {}).items()]}]}}


def stages(system: MixedSedna, resource: str, name: str) -> list[str]:
    """Every stage/type the job has had (our GM prunes finished rounds from the object: testkit's history)."""
    return job_history(system.cs, resource, "default", name).states()


def pod_log(system: MixedSedna, pod: dict[str, Any]) -> str:
    path = system.procs.tmp / "pod-logs" / "default" / f"{pod['metadata']['name']}.log"
    return path.read_text() if path.exists() else ""


def pods(system: MixedSedna, selector: str) -> list[dict[str, Any]]:
    return system.cs.core_v1().pods("default").list(label_selector=selector)["items"]


def dataset_and_models(system: MixedSedna, prefix: str, models: tuple[str, ...] = (),
                       model_nodes: tuple[str, ...] = ("edge-1",)) -> None:
    """The Dataset on ``edge-1``; the Models' files on ``model_nodes``."""
    system.write("edge-1", f"/{prefix}/data/index.txt", lines(12))
    system.create("datasets", "Dataset", f"{prefix}-ds", {"url": f"/{prefix}/data/index.txt", "format": "txt",
                                                          "nodeName": "edge-1"})
    for role in models:
        for node in model_nodes:
            system.write(node, f"/{prefix}/models/{role}/model.pb", f"the {role} model\n")
        system.create("models", "Model", f"{prefix}-{role}", {"url": f"/{prefix}/models/{role}/model.pb",
                                                              "format": "pb"})


TRIGGER = {"checkPeriodSeconds": 1, "condition": {"operator": ">", "threshold": 5, "metric": "num_of_samples"}}


def test_il_train_eval_and_hot_update_by_the_sdk(sedna: MixedSedna) -> None:
    dataset_and_models(sedna, "il", ("initial", "deploy"))
    sedna.create("incremental_learning_jobs", "IncrementalLearningJob", "il", {
        "dataset": {"name": "il-ds", "trainProb": 0.8}, "initialModel": {"name": "il-initial"},
        "trainSpec": {"template": template(), "trigger": TRIGGER},
        "evalSpec": {"template": template()},
        "deploySpec": {"model": {"name": "il-deploy", "hotUpdateEnabled": True, "pollPeriodSeconds": 1},
                       "trigger": {"condition": {"operator": ">", "threshold": 0.1, "metric": "precision_delta[0]"}},
                       "hardExampleMining": {"name": "IBT"}, "template": template()},
        "outputDir": "/il/output"})
    got = wait_for("the round to deploy", lambda: stages(sedna, "incremental_learning_jobs", "il"),
                   check=lambda s: "Deploy/Completed" in s or any(x.endswith("/Failed") for x in s), timeout=TIMEOUT)
    assert "Deploy/Completed" in got and not any(s.endswith("/Failed") for s in got), " ".join(got)
    conditions = sedna.status("incremental_learning_jobs", "il")["conditions"]
    import json

    trained = json.loads(next(c for c in conditions if (c["stage"], c["type"]) == ("Train", "Completed"))["data"])
    # the SDK's TFBackend reports the model and its checkpoint directory, as host paths
    assert [(m["format"], m["url"]) for m in trained["output"]["models"]] == [
        ("pb", "/il/output/train/1/model_finetune_tensorflow.pb"), ("ckpt", "/il/output/train/1")]
    saved = json.loads((sedna.rootfs["edge-1"] / "il/output/train/1/model_finetune_tensorflow.pb").read_text())
    assert saved["by"] == "sedna-sdk"
    # the inference pod's SDK loaded the model from its mounted hot-update directory
    [infer] = pods(sedna, "incrementallearningjob.sedna.io/worker-type=inference")
    assert "Update model complete" in pod_log(sedna, infer)


def il_job_across_nodes(system: MixedSedna, prefix: str) -> None:
    """The main job's topology (hack/local_up_il.py): the Dataset on ``edge-1``, every worker on ``edge-2``."""
    dataset_and_models(system, prefix, ("initial", "deploy"), model_nodes=("edge-1", "edge-2"))
    worker = template("edge-2")
    system.create("incremental_learning_jobs", "IncrementalLearningJob", prefix, {
        "dataset": {"name": f"{prefix}-ds", "trainProb": 0.8}, "initialModel": {"name": f"{prefix}-initial"},
        "trainSpec": {"template": worker, "trigger": TRIGGER}, "evalSpec": {"template": worker},
        "deploySpec": {"model": {"name": f"{prefix}-deploy", "hotUpdateEnabled": True, "pollPeriodSeconds": 1},
                       "trigger": {"condition": {"operator": ">", "threshold": 0.1, "metric": "precision_delta[0]"}},
                       "hardExampleMining": {"name": "IBT"}, "template": worker},
        "outputDir": f"/{prefix}/output"})


def rounds_done(system: MixedSedna, name: str, count: int) -> list[str]:
    """The job's stages once ``count`` rounds ended in a hot update (fails at the first Failed condition)."""
    got = wait_for(f"round {count} to deploy", lambda: stages(system, "incremental_learning_jobs", name),
                   timeout=TIMEOUT, check=lambda s: (s.count("Deploy/Completed") == count and s[-1] == "Train/Waiting")
                   or any(x.endswith("/Failed") for x in s))
    assert not any(s.endswith("/Failed") for s in got), " ".join(got)
    return got


def env_of(pod: dict[str, Any], name: str) -> str:
    return next(e["value"] for c in pod["spec"]["containers"] for e in c.get("env") or [] if e["name"] == name)


def test_il_two_rounds_hot_updated_across_nodes_by_the_sdk(sedna: MixedSedna) -> None:
    """The inference pod on ``edge-2`` (not the Dataset's node) loads each round's model through the hot-update
    directory it mounted when it started. A ``delete`` that took the job off ``edge-2`` between its train/eval stages
    once made the LC remove that directory, so the next ``model_config.json`` went into one the pod never saw."""
    selector = "incrementallearningjob.sedna.io/name=ilx,incrementallearningjob.sedna.io/worker-type="
    trainers: dict[str, dict[str, Any]] = {}  # by name: a later round's start deletes the rounds before the last

    def note_trainers() -> None:
        for pod in pods(sedna, selector + "train"):
            trainers.setdefault(pod["metadata"]["name"], pod)

    il_job_across_nodes(sedna, "ilx")
    rounds_done(sedna, "ilx", 1)
    note_trainers()
    sedna.write("edge-1", "/ilx/data/index.txt", lines(24))
    got = rounds_done(sedna, "ilx", 2)
    note_trainers()
    assert got.count("Train/Completed") == 2, " ".join(got)
    # in the order the GM created them (it counts the job's conditions on each pod)
    ordered = sorted(trainers.values(), key=lambda p: int(p["metadata"]["annotations"]["sedna.io/condition-count"]))
    assert {p["spec"]["nodeName"] for p in ordered} == {"edge-2"} and len(ordered) == 2
    [infer] = pods(sedna, selector + "inference")  # the same pod both rounds: nothing restarted it
    assert infer["spec"]["nodeName"] == "edge-2"
    log = pod_log(sedna, infer)
    # the SDK's ModelLoadingThread: one load per model_config.json version, each the model its round trained
    versions = re.findall(r"Update model complete with version ([^\x1b\n]+)", log)
    loaded = re.findall(r"the estimator loaded a model saved by (\S+)", log)
    assert len(versions) == len(set(versions)) == 2, log
    assert loaded == [env_of(p, "WORKER_NAME") for p in ordered], log


def test_ll_train_and_eval_reports_from_the_sdk(sedna: MixedSedna) -> None:
    dataset_and_models(sedna, "ll")
    sedna.create("lifelong_learning_jobs", "LifelongLearningJob", "ll", {
        "dataset": {"name": "ll-ds", "trainProb": 0.8},
        "trainSpec": {"template": template(), "trigger": TRIGGER},
        "evalSpec": {"template": template()}, "deploySpec": {"template": template()},
        "outputDir": "/ll/output"})
    wait_for("train and eval reported", lambda: stages(sedna, "lifelong_learning_jobs", "ll"),
             check=lambda s: {"Train/Completed", "Eval/Completed"} <= set(s), timeout=TIMEOUT)


@pytest.mark.parametrize("gm", ["ours", "go"])
def test_ji_edge_reports_from_the_sdks_reporter(request: pytest.FixtureRequest, gm: str) -> None:
    """Under Go's GM (issue 39 item 2) the edge worker has SERVICE_NAME but no JOB_NAME: the SDK reports for owner
    ``sedna`` (its JOB_NAME default), and our LC attributes the reports to the one service it holds, saying so."""
    sedna: MixedSedna = request.getfixturevalue("sedna" if gm == "ours" else "sedna_under_go_gm")
    dataset_and_models(sedna, "ji", ("little", "big"))
    edge = template(env={"LC_PERIOD": "1"}, **{"sandbox.sedna.io/worker-inferences-per-period": "4",
                                               "sandbox.sedna.io/worker-hard-examples-per-period": "1"})
    sedna.create("joint_inference_services", "JointInferenceService", "ji", {
        "edgeWorker": {"model": {"name": "ji-little"}, "hardExampleMining": {"name": "IBT"}, "template": edge},
        "cloudWorker": {"model": {"name": "ji-big"}, "template": template("cloud-1")}})

    def metrics() -> dict[str, str]:
        return {m["key"]: m["value"] for m in sedna.status("joint_inference_services", "ji").get("metrics") or []}

    got = wait_for("the edge counters", metrics, check=lambda m: float(m.get("inferenceNumber", 0)) >= 8,
                   timeout=TIMEOUT)
    assert float(got["uploadCloudRatio"]) == pytest.approx(0.25)
    said = [e for e in json_log_lines(sedna.log("edge-1")) if e["event"].startswith("worker report for ownerName")]
    if gm == "go":
        assert said and {e["object"] for e in said} == {"default/ji"}, said
    else:
        assert not said  # our GM sets JOB_NAME


def test_fl_round_reports_from_the_sdk(sedna: MixedSedna) -> None:
    dataset_and_models(sedna, "fl", ("model",))
    sedna.create("federated_learning_jobs", "FederatedLearningJob", "fl", {
        "aggregationWorker": {"model": {"name": "fl-model"}, "template": template("cloud-1")},
        "trainingWorkers": [{"dataset": {"name": "fl-ds"}, "template": template(**{
            "sandbox.sedna.io/worker-rounds": "2", "sandbox.sedna.io/worker-period-seconds": "1.1"})}]})

    def rounds() -> list[str]:
        return [message.split(" reaches")[0] for message in fl_round_reports(sedna.cs, "fl")]

    wait_for("both rounds", rounds, check=lambda r: r == ["Round 1", "Round 2"], timeout=TIMEOUT)
    wait_for("the job to succeed", lambda: sedna.status("federated_learning_jobs", "fl").get("phase"),
             check=lambda p: p == "Succeeded", timeout=TIMEOUT)


def reports_handled(lc_url: str) -> float:
    """Every worker report the LC answered (any result)."""
    from prometheus_client.parser import text_string_to_metric_families
    from testkit import http_get

    status, text = http_get(lc_url + "/metrics")
    return sum(s.value for f in text_string_to_metric_families(text) if status == 200
               for s in f.samples if s.name == "sedna_lc_worker_reports_total")


def test_a_restarted_sdk_inference_worker_does_not_complete_a_deploy_again(sedna: MixedSedna) -> None:
    """Last in this module: it restarts the worker simulator."""
    dataset_and_models(sedna, "il4", ("initial", "deploy"))
    sedna.create("incremental_learning_jobs", "IncrementalLearningJob", "il4", {
        "dataset": {"name": "il4-ds", "trainProb": 0.8}, "initialModel": {"name": "il4-initial"},
        "trainSpec": {"template": template(), "trigger": TRIGGER},
        "evalSpec": {"template": template()},
        "deploySpec": {"model": {"name": "il4-deploy", "hotUpdateEnabled": True, "pollPeriodSeconds": 1},
                       "trigger": {"condition": {"operator": ">", "threshold": 0.1, "metric": "precision_delta[0]"}},
                       "hardExampleMining": {"name": "IBT"}, "template": template()},
        "outputDir": "/il4/output"})
    got = wait_for("round 1", lambda: stages(sedna, "incremental_learning_jobs", "il4"), timeout=TIMEOUT,
                   check=lambda s: "Deploy/Completed" in s and s[-1] == "Train/Waiting")
    round_one = len(got)
    before = reports_handled(sedna.lc_urls["edge-1"])
    sedna.start_workersim()  # the inference pod's SDK starts again and finds the config it loaded before
    wait_for("the restarted worker's deploy report", lambda: reports_handled(sedna.lc_urls["edge-1"]),
             check=lambda n: n > before, timeout=TIMEOUT)
    # a later, positive signal: round 2 starts (its Train/Ready follows the deploy report from the same LC)
    sedna.write("edge-1", "/il4/data/index.txt", lines(24))
    got = wait_for("round 2", lambda: stages(sedna, "incremental_learning_jobs", "il4"), timeout=TIMEOUT,
                   check=lambda s: s.count("Train/Ready") == 2)
    assert "Deploy/Completed" not in got[round_one:], got
