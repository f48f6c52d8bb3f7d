"""IncrementalLearningJob and LifelongLearningJob run by a real ``sedna-gm`` process against the sandbox API server
over HTTP, with Go-Sedna-style LocalControllers written from the protocol (``testkit.GoLC``) on the edge link: each
job goes Train → Eval → Deploy → Train, its pods created and simulated by the sandbox, the LCs' reports appended,
the job placed stage by stage on the right nodes, and deleted everywhere at the end."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from testkit import CRDS, GoLC, announced_url, gone, metric_value, start_gm, wait_for
from testkit.learning import IL_ROUND, job_history

from apis import meta
from apis.clientset import Clientset

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(crd_dirs=[str(CRDS)])]

NS = "default"
LC_SERVER = "http://lc.test:9100"


@pytest.fixture
def gm(sandbox, procs, tmp_path: Path):
    config = tmp_path / "gm.yaml"
    config.write_text("controllers: [Dataset, Model, IncrementalLearning, LifelongLearning]\n"
                      f"localController:\n  server: {LC_SERVER}\n"
                      "knowledgeBaseServer:\n  server: http://kb.test:9020\n")
    proc, url = start_gm(procs, "gm", sandbox.kubeconfig, "--no-leader-elect", "--config", str(config), wait=True)
    edge = announced_url(procs, "gm", "edge")
    cs = Clientset.from_kubeconfig(sandbox.kubeconfig)
    lcs: list[GoLC] = []

    def lc(node: str) -> GoLC:
        peer = GoLC(f"{edge}/", node)
        peer.record()
        lcs.append(peer)
        return peer

    yield cs, lc, url
    for peer in lcs:
        peer.close()
    cs.close()
    assert proc.poll() is None, procs.log("gm")  # it never crashed


def template(node: str, **annotations: str) -> dict[str, Any]:
    return {"metadata": {"annotations": annotations},
            "spec": {"nodeName": node, "containers": [{"name": "w", "image": "worker:1"}]}}


CYCLE = ["Train/Waiting", *IL_ROUND]
TRIGGER = {"condition": {"operator": ">", "threshold": 10, "metric": "num_of_samples"}}


def states(cs: Any, resource: str, name: str) -> list[str]:
    """Every stage/type the job has had (our GM prunes finished rounds from the object: testkit's history)."""
    return job_history(cs, resource, NS, name).states()


def job_frames(peer: GoLC, name: str) -> list[tuple[str, str]]:
    """(operation, last condition) of the frames ``peer`` got about job ``name``."""
    return [(h["operation"], "/".join(((c or {}).get("status") or {}).get("conditions", [{}])[-1].get(k, "")
                                      for k in ("stage", "type")))
            for h, c in peer.frames(lambda h, c: h["resourceName"] == name and h["resourceKind"].endswith("job"))]


def got(peer: GoLC, name: str, operation: str, state: str = "") -> bool:
    return any(op == operation and (not state or s == state) for op, s in job_frames(peer, name))


def pods(cs: Clientset, kind: str, worker: str) -> list[dict[str, Any]]:
    selector = f"{kind}.sedna.io/worker-type={worker}"
    return cs.core_v1().pods(NS).list(label_selector=selector)["items"]


def test_incremental_learning_job_cycle(gm):
    cs, lc, url = gm
    models = cs.sedna_v1alpha1().models(NS)
    for name in ("initial-model", "deploy-model"):
        models.create({"apiVersion": "sedna.io/v1alpha1", "kind": "Model", "metadata": {"name": name, "namespace": NS},
                       "spec": {"url": f"/models/{name}.pb", "format": "pb"}})
    cs.sedna_v1alpha1().datasets(NS).create({
        "apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": "ds", "namespace": NS},
        "spec": {"url": "/data/train.txt", "format": "txt", "nodeName": "edge-1"}})
    edge1, edge2 = lc("edge-1"), lc("edge-2")
    jobs = cs.sedna_v1alpha1().incremental_learning_jobs(NS)
    jobs.create({"apiVersion": "sedna.io/v1alpha1", "kind": "IncrementalLearningJob",
                 "metadata": {"name": "il", "namespace": NS},
                 "spec": {"dataset": {"name": "ds", "trainProb": 0.8}, "initialModel": {"name": "initial-model"},
                          "trainSpec": {"template": template("edge-2", **{"sandbox.sedna.io/run-seconds": "1"}),
                                        "trigger": TRIGGER},
                          "evalSpec": {"template": template("edge-1")},
                          "deploySpec": {"model": {"name": "deploy-model"}, "trigger": TRIGGER,
                                         "hardExampleMining": {"name": "IBT"}, "template": template("edge-1")},
                          "outputDir": "/output"}})

    # Train/Waiting: the job and its initial Model go to the dataset's LC; the inference pod runs
    wait_for("Train/Waiting on the dataset's LC", lambda: got(edge1, "il", "insert", "Train/Waiting"), timeout=20)
    wait_for("the initial model on edge-1", lambda: edge1.frames(
        lambda h, c: h["resourceKind"] == "model" and h["resourceName"] == "initial-model"))
    wait_for("the inference pod", lambda: len(pods(cs, "incrementallearningjob", "inference")) == 1)
    first_inference = meta.name(pods(cs, "incrementallearningjob", "inference")[0])

    # the LC's trigger fires (sent twice, as a Go LC may after reconnecting: applied once)
    ready = {"phase": "Train", "status": "Ready", "input": {
        "models": [{"format": "pb", "url": "/models/initial-model.pb"}],
        "dataURL": "/output/data/train/1/data.txt", "outputDir": "/output/train/1"}}
    edge1.send_status(NS, "IncrementalLearningJob", "il", ready)
    edge1.send_status(NS, "IncrementalLearningJob", "il", ready)
    # the train pod runs on edge-2: the job goes there
    wait_for("Train/Running on edge-2", lambda: got(edge2, "il", "insert", "Train/Running"), timeout=20)
    assert states(cs, "incremental_learning_jobs", "il")[:4] == ["Train/Waiting", "Train/Ready", "Train/Starting", "Train/Running"]
    assert meta.annotations(jobs.get("il"))["sedna.io/Train"] == "edge-2"
    (train,) = pods(cs, "incrementallearningjob", "train")
    env = {e["name"]: e.get("value") for e in train["spec"]["containers"][0]["env"]}
    assert env["BASE_MODEL_URL"] == "/home/data/models/initial-model.pb" and env["LC_SERVER"] == LC_SERVER
    assert re.fullmatch(r"train-worker-\w{5}", env["WORKER_NAME"])

    # the worker's report, relayed by edge-2's LC; the job leaves edge-2 and goes back to edge-1 for Eval
    edge2.send_status(NS, "IncrementalLearningJob", "il", {"phase": "train", "status": "completed", "output": {
        "models": [{"format": "pb", "url": "/output/train/1/model.pb"}]}})
    wait_for("Eval/Waiting on edge-1", lambda: got(edge1, "il", "insert", "Eval/Waiting"), timeout=20)
    wait_for("the job removed from edge-2", lambda: got(edge2, "il", "delete"))
    edge1.send_status(NS, "IncrementalLearningJob", "il", {"phase": "eval", "status": "ready", "input": {
        "models": [{"format": "pb", "url": "/output/train/1/model.pb"}, {"format": "pb", "url": "/models/deploy-model.pb"}],
        "dataURL": "/output/data/eval/1/data.txt"}})
    wait_for("Eval/Running on edge-1", lambda: got(edge1, "il", "insert", "Eval/Running"), timeout=20)
    edge1.send_status(NS, "IncrementalLearningJob", "il", {"phase": "eval", "status": "completed", "output": {
        "models": [{"format": "pb", "url": "/output/train/1/model.pb", "metrics": {"precision": [0.9]}},
                   {"format": "pb", "url": "/models/deploy-model.pb", "metrics": {"precision": [0.7]}}]}})
    # the deploy decision is edge-1's (the eval node); a deploy restarts the inference pod
    wait_for("Deploy/Waiting on edge-1", lambda: got(edge1, "il", "insert", "Deploy/Waiting"), timeout=20)
    edge1.send_status(NS, "IncrementalLearningJob", "il", {"phase": "deploy", "status": "ready", "input": {
        "models": [{"format": "pb", "url": "/output/train/1/model.pb"}, {"format": "pb", "url": "/models/deploy-model.pb"}]}})
    wait_for("the next round", lambda: states(cs, "incremental_learning_jobs", "il") == CYCLE, timeout=20)
    wait_for("the restarted inference pod", lambda: [meta.name(p) for p in pods(cs, "incrementallearningjob", "inference")
                                                     if meta.deletion_timestamp(p) is None] not in ([], [first_inference]))
    wait_for("the new round on edge-1", lambda: job_frames(edge1, "il")[-1] == ("insert", "Train/Waiting"))

    # a report the GM refuses is counted; a model and the job stayed where needed
    def refused() -> float:
        return metric_value(url + "/metrics", "sedna_gm_edge_rejected_frames_total", reason="invalid_report") or 0

    before = refused()
    edge1.send_status(NS, "IncrementalLearningJob", "il", {"phase": "inference", "status": "running"})
    wait_for("the refusal counted", lambda: refused() == before + 1)
    assert states(cs, "incremental_learning_jobs", "il")[-1] == "Train/Waiting"

    # deletion: the pods go with the job, every LC that held it is told
    jobs.delete("il")
    wait_for("the job deleted from edge-1", lambda: got(edge1, "il", "delete"))
    wait_for("the pods garbage-collected", lambda: not any(
        pods(cs, "incrementallearningjob", w) for w in ("train", "eval", "inference")))


def test_lifelong_learning_job_cycle(gm):
    cs, lc, _ = gm
    cs.sedna_v1alpha1().datasets(NS).create({
        "apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": "ll-ds", "namespace": NS},
        "spec": {"url": "/data/ll.csv", "format": "csv", "nodeName": "edge-1"}})
    edge1 = lc("edge-1")
    jobs = cs.sedna_v1alpha1().lifelong_learning_jobs(NS)
    jobs.create({"apiVersion": "sedna.io/v1alpha1", "kind": "LifelongLearningJob",
                 "metadata": {"name": "ll", "namespace": NS},
                 "spec": {"dataset": {"name": "ll-ds", "trainProb": 0.8},
                          "trainSpec": {"template": template("edge-1"), "trigger": TRIGGER},
                          # the eval worker ends by itself: its pod's phase completes Eval
                          "evalSpec": {"template": template("edge-1", **{"sandbox.sedna.io/run-seconds": "1"})},
                          "deploySpec": {"template": template("edge-1")},
                          "outputDir": "/output/ll"}})
    job_history(cs, "lifelong_learning_jobs", NS, "ll")  # followed from the start: the next round prunes this one
    wait_for("Train/Waiting on edge-1", lambda: got(edge1, "ll", "insert", "Train/Waiting"), timeout=20)
    assert pods(cs, "lifelonglearningjob", "inference") == []  # LL starts it at its first deploy
    edge1.send_status(NS, "LifelongLearningJob", "ll", {"phase": "train", "status": "ready", "input": {
        "dataURL": "/output/ll/data/train/1/data.csv", "outputDir": "/output/ll/train/1"}})
    wait_for("Train/Running", lambda: got(edge1, "ll", "insert", "Train/Running"), timeout=20)
    edge1.send_status(NS, "LifelongLearningJob", "ll", {"phase": "train", "status": "completed", "output": {"models": [
        {"format": "pkl", "url": "/output/ll/train/1/index.pkl", "classes": ["hot", "cold"],
         "number_of_labeled_unseen_sample": 12, "current_metric": {"task-1": {"precision": 0.75}}}]}})
    wait_for("Eval/Waiting", lambda: got(edge1, "ll", "insert", "Eval/Waiting"), timeout=20)
    assert jobs.get("ll")["status"]["knowledgeBase"] == {
        "AIModels": {"numberOfAIModels": 1, "listOfAIModels": [
            {"modelID": "task-1", "averagePrecision": 0.75, "numberOfTrainSamples": 12}]},
        "AIClasses": {"numberOfAIClasses": 2, "listOfAIClasses": ["hot", "cold"]},
        "samples": {"numberOfLabeledUnseenSample": 12, "numberOfUnseenSample": 0}}
    edge1.send_status(NS, "LifelongLearningJob", "ll", {"phase": "eval", "status": "ready", "input": {
        "models": [{"format": "pkl", "url": "/output/ll/train/1/index.pkl"}],
        "dataURL": "/output/ll/data/eval/1/data.csv", "outputDir": "/output/ll/eval/1"}})
    wait_for("Deploy/Waiting (the eval pod succeeded)", lambda: got(edge1, "ll", "insert", "Deploy/Waiting"), timeout=30)
    (evaluator,) = pods(cs, "lifelonglearningjob", "eval")
    assert evaluator["status"]["phase"] == "Succeeded" and evaluator["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"
    edge1.send_status(NS, "LifelongLearningJob", "ll", {"phase": "deploy", "status": "ready", "input": {
        "models": [{"format": "pkl", "url": "/output/ll/deploy/index.pkl"}]}})
    wait_for("the next round", lambda: states(cs, "lifelong_learning_jobs", "ll") == CYCLE, timeout=20)
    (inference,) = pods(cs, "lifelonglearningjob", "inference")
    env = {e["name"]: e.get("value") for e in inference["spec"]["containers"][0]["env"]}
    assert env["MODEL_URLS"] == "/home/data/output/ll/deploy/index.pkl" and env["OUTPUT_URL"] == "/output/ll"
    jobs.delete("ll")
    wait_for("the job deleted from edge-1", lambda: got(edge1, "ll", "delete"))
    wait_for("the job gone", lambda: gone(jobs, "ll"))
