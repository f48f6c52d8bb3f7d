"""IncrementalLearningJob and LifelongLearningJob end to end with real processes: the sandbox API server (its pod
simulator), ``sedna-gm``, two ``sedna-lc`` (``edge-1`` holds the Datasets, ``edge-2`` runs the workers; each with its
own rootfs, database and port) and the worker simulator playing Sedna's SDK in the worker pods, each worker
reporting to its node's LC. The Datasets grow on disk (or in S3) while the jobs run.

* IL, local storage: two full rounds Train → Eval → Deploy, each started by the train trigger once appended lines
  cross its threshold; the better model lands on the deploy Model's path;
* IL, S3 (moto): the Dataset, the Models and the output in a bucket, credentials from a Secret; two rounds, the
  deploy Model's object replaced by the trained one;
* IL with model hot update: the deploy node's LC writes ``model_config.json``, the inference worker loads the model and
  reports it (no restart); the config is read through the directory the inference pod mounted when it started;
* IL: a GM restart at Deploy/Running: the Dataset's LC, sent the current copy, leaves the hot update to the deploy
  node (no Deploy/Failed);
* IL: a train trigger on an unknown metric is shown on the job (condition reason, Warning Event) until fixed;
* IL: ``kill -9`` of the Dataset's LC in the middle of a round, then a restart on its database: the round
  completes, no condition twice;
* IL: an eval worker that fails (reporting it, or crashing without a word) → ``Eval/Failed`` → ``Train/Waiting``;
  a deploy copy that fails → ``Deploy/Failed`` with the LC's reason as the condition's message;
* LL: one round to ``Deploy``, ``status.knowledgeBase`` from the workers' reported models.

Conditions are compared in full, in order (a stage's ``Running`` may be skipped when its worker ends before the GM
sees it run); every wait is bounded.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from testkit import (
    Processes,
    gm_edge_address,
    http_get,
    json_log_lines,
    start_gm,
    start_lc,
    start_workersim,
    wait_for,
)
from testkit.flows.base import replace_file
from testkit.learning import IL_HOT_UPDATE_ROUND, IL_ROUND, assert_stages, job_history, sample_lines
from testkit.s3 import S3Server

from apis import meta
from apis.clientset import Clientset

pytestmark = pytest.mark.e2e

NS = "default"
DATASET_NODE, WORKER_NODE = "edge-1", "edge-2"
NODES = (DATASET_NODE, WORKER_NODE)
TIMEOUT = 60.0
# samples at start (8 for training: not above the threshold of 10), then appended to start round 1 (+4) and round 2
# (+12: the training samples start from 0 after a round started)
FIRST, MORE = 10, (5, 15)
DELAY = {"sandbox.sedna.io/worker-delay-seconds": "0.5"}

@dataclass
class Sedna:
    cs: Clientset
    procs: Processes
    rootfs: dict[str, Path]
    gm_args: tuple[str, ...] = ()
    gm: Any = None
    gm_address: str = ""  # its edge link, announced by the first GM and kept by a restarted one
    lc_ports: dict[str, int] = field(default_factory=dict)

    def start_gm(self) -> None:
        edge_port = int(self.gm_address.rsplit(":", 1)[1]) if self.gm_address else 0
        self.gm, _ = start_gm(self.procs, "gm", *self.gm_args, edge_port=edge_port, wait=True, timeout=TIMEOUT)
        self.gm_address = self.gm_address or gm_edge_address(self.procs, "gm", TIMEOUT)

    def restart_gm(self) -> None:
        """Stop ``sedna-gm`` (SIGTERM) and start a new one on the same edge port: it knows nothing it sent."""
        self.gm.send_signal(signal.SIGTERM)
        assert self.gm.wait(TIMEOUT) == 0, self.procs.log("gm")
        self.start_gm()

    def start_lc(self, node: str) -> Any:
        proc, url = start_lc(self.procs, node, self.gm_address, self.rootfs[node], "--dataset-check-period", "0.3",
                             port=self.lc_ports.get(node, 0))
        self.lc_ports[node] = int(url.rsplit(":", 1)[1])
        return proc

    def wait_connected(self, node: str) -> None:
        wait_for(f"{node} connected", lambda: http_get(f"http://127.0.0.1:{self.lc_ports[node]}/readyz")[0] == 200,
                 timeout=TIMEOUT)


@pytest.fixture(scope="module")
def sedna(module_procs: Processes, module_tmp: Path, module_cluster: tuple[str, Clientset]) -> Iterator[Sedna]:
    kubeconfig, cs = module_cluster
    config = module_tmp / "gm.yaml"
    config.write_text("controllers: [Dataset, Model, IncrementalLearning, LifelongLearning]\n")
    system = Sedna(cs, module_procs, {n: module_tmp / f"rootfs-{n}" for n in NODES},
                   gm_args=(kubeconfig, "--no-leader-elect", "--config", str(config)))
    system.start_gm()
    for node in NODES:
        system.start_lc(node)
    for node in NODES:
        system.wait_connected(node)
    start_workersim(module_procs, kubeconfig, {n: f"http://127.0.0.1:{p}" for n, p in system.lc_ports.items()},
                    system.rootfs)
    yield system
    assert system.gm.poll() is None, module_procs.log("gm")  # it never crashed


# -- the objects -------------------------------------------------------------------------------------------------
def samples(start: int, stop: int) -> str:
    """Samples ``start`` … ``stop - 1`` as the text of a txt Dataset's index file."""
    return "".join(f"{line}\n" for line in sample_lines(start, stop))


@dataclass
class Storage:
    """Where a job keeps its Dataset, Models and output: host paths on the nodes, or a bucket (``s3``)."""

    sedna: Sedna
    job: str
    s3: S3Server | None = None
    bucket: str = ""

    @property
    def credential(self) -> dict[str, str]:
        return {"credentialName": f"{self.job}-s3"} if self.s3 else {}

    def url(self, path: str) -> str:
        return f"s3://{self.bucket}/{self.job}/{path}" if self.s3 else f"/{self.job}/{path}"

    def setup(self) -> None:
        if self.s3 is None:
            return
        self.s3.client().create_bucket(Bucket=self.bucket)
        keys = {"ACCESS_KEY_ID": self.s3.credential()["ACCESS_KEY_ID"],
                "SECRET_ACCESS_KEY": self.s3.credential()["SECRET_ACCESS_KEY"]}
        self.sedna.cs.core_v1().secrets(NS).create({
            "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": f"{self.job}-s3", "namespace": NS,
                         "annotations": {"s3-endpoint": self.s3.endpoint, "s3-usehttps": "0"}},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in keys.items()}})

    def write(self, path: str, text: str, node: str = DATASET_NODE) -> None:
        if self.s3 is not None:
            self.s3.client().put_object(Bucket=self.bucket, Key=f"{self.job}/{path}", Body=text.encode())
            return
        local = self.sedna.rootfs[node] / self.job / path
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_text(text)

    def append(self, path: str, text: str) -> None:
        """Grow a file: on the node's disk replaced in one step by a longer one (an LC never counts half of it); in
        S3 the object is replaced by a longer one."""
        if self.s3 is None:
            local = self.sedna.rootfs[DATASET_NODE] / self.job / path
            replace_file(local, local.read_text() + text)
            return
        self.write(path, self.read(path) + text)

    def read(self, path: str, node: str = WORKER_NODE) -> str:
        if self.s3 is not None:
            return self.s3.client().get_object(Bucket=self.bucket, Key=f"{self.job}/{path}")["Body"].read().decode()
        return (self.sedna.rootfs[node] / self.job / path).read_text()


def template(node: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"annotations": {**DELAY, **(annotations or {})}},
            "spec": {"nodeName": node, "containers": [{"name": "worker", "image": "kubeedge/worker:v1"}]}}


def create(cs: Clientset, resource: str, kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    client = getattr(cs.sedna_v1alpha1(), resource)(NS)
    return client.create({"apiVersion": "sedna.io/v1alpha1", "kind": kind,
                          "metadata": {"name": name, "namespace": NS}, "spec": spec})


def create_dataset(store: Storage) -> None:
    store.write("data/index.txt", samples(0, FIRST))
    create(store.sedna.cs, "datasets", "Dataset", f"{store.job}-ds",
           {"url": store.url("data/index.txt"), "format": "txt", "nodeName": DATASET_NODE, **store.credential})


def train_trigger() -> dict[str, Any]:
    return {"checkPeriodSeconds": 1, "condition": {"operator": ">", "threshold": 10, "metric": "num_of_samples"}}


def create_il_job(store: Storage, eval_annotations: dict[str, str] | None = None, hot_update: bool = False,
                  train_annotations: dict[str, str] | None = None,
                  deploy_annotations: dict[str, str] | None = None) -> None:
    cs, job = store.sedna.cs, store.job
    store.setup()
    create_dataset(store)
    store.write("models/initial/model.pb", "the initial model", node=WORKER_NODE)
    store.write("models/deploy/model.pb", "the deployed model", node=WORKER_NODE)
    for role in ("initial", "deploy"):
        create(cs, "models", "Model", f"{job}-{role}",
               {"url": store.url(f"models/{role}/model.pb"), "format": "pb", **store.credential})
    create(cs, "incremental_learning_jobs", "IncrementalLearningJob", job, {
        "dataset": {"name": f"{job}-ds", "trainProb": 0.8},
        "initialModel": {"name": f"{job}-initial"},
        "trainSpec": {"template": template(WORKER_NODE, train_annotations), "trigger": train_trigger()},
        "evalSpec": {"template": template(WORKER_NODE, eval_annotations)},
        "deploySpec": {"model": {"name": f"{job}-deploy", **HOT_UPDATE} if hot_update else {"name": f"{job}-deploy"},
                       "trigger": {"condition": {"operator": ">", "threshold": 0.1, "metric": "precision_delta[0]"}},
                       "hardExampleMining": {"name": "IBT"}, "template": template(WORKER_NODE, deploy_annotations)},
        "outputDir": store.url("output"),
        **store.credential,
    })


HOT_UPDATE = {"hotUpdateEnabled": True, "pollPeriodSeconds": 1}


# -- reading the job ---------------------------------------------------------------------------------------------
def conditions(cs: Clientset, resource: str, name: str) -> list[dict[str, Any]]:
    """Every condition the job has had: our GM prunes finished rounds from the object (testkit's history)."""
    return job_history(cs, resource, NS, name).conditions()


def states(cs: Clientset, resource: str, name: str) -> list[str]:
    return [f"{c.get('stage')}/{c.get('type')}" for c in conditions(cs, resource, name)]


def il_states(cs: Clientset, name: str) -> list[str]:
    return states(cs, "incremental_learning_jobs", name)


def rounds_done(count: int) -> Any:
    return lambda got: got.count("Train/Waiting") == count + 1 and got[-1] == "Train/Waiting"


def wait_rounds(cs: Clientset, resource: str, name: str, count: int) -> list[str]:
    return wait_for(f"{name} to finish {count} round(s)", lambda: states(cs, resource, name),
                    check=rounds_done(count), timeout=TIMEOUT)


def wait_train_waiting(cs: Clientset, resource: str, name: str) -> None:
    wait_for(f"{name} at Train/Waiting", lambda: states(cs, resource, name), check=lambda s: s == ["Train/Waiting"],
             timeout=TIMEOUT)


def data(condition: dict[str, Any]) -> dict[str, Any]:
    return json.loads(condition.get("data") or "{}")


def worker_pods(cs: Clientset, kind: str, job: str, worker: str) -> list[dict[str, Any]]:
    selector = f"{kind}.sedna.io/name={job},{kind}.sedna.io/worker-type={worker}"
    return [p for p in cs.core_v1().pods(NS).list(label_selector=selector)["items"]
            if not meta.deletion_timestamp(p)]


# -- IncrementalLearningJob ----------------------------------------------------------------------------------------
def run_two_rounds(store: Storage) -> list[dict[str, Any]]:
    cs, job = store.sedna.cs, store.job
    create_il_job(store)
    wait_train_waiting(cs, "incremental_learning_jobs", job)
    start = FIRST
    for done, more in enumerate(MORE, 1):
        store.append("data/index.txt", samples(start, start + more))
        start += more
        wait_rounds(cs, "incremental_learning_jobs", job, done)
    conds = conditions(cs, "incremental_learning_jobs", job)
    assert_stages([f"{c['stage']}/{c['type']}" for c in conds], ["Train/Waiting", *IL_ROUND, *IL_ROUND])
    return conds


@pytest.mark.parametrize("backend", ["local", "s3"])
def test_il_job_goes_train_eval_deploy_twice(sedna, request, backend):
    job = f"il-{backend}"
    store = Storage(sedna, job)
    if backend == "s3":
        store = Storage(sedna, job, request.getfixturevalue("s3_server"), bucket="sedna-il")
    conds = run_two_rounds(store)
    cs = sedna.cs

    # every stage's outcome came from the edge: the LC's Ready inputs, the workers' outputs relayed by the LC
    trained = [data(c)["output"]["models"] for c in conds if (c["stage"], c["type"]) == ("Train", "Completed")]
    assert [m[0]["url"] for m in trained] == [store.url(f"output/train/{r}/model_finetune_tensorflow.pb")
                                             for r in (1, 2)]
    train_inputs = [data(c)["input"] for c in conds if (c["stage"], c["type"]) == ("Train", "Ready")]
    assert [i["models"][0]["url"] for i in train_inputs] == [store.url("models/initial/model.pb"), trained[0][0]["url"]]
    assert [i["outputDir"] for i in train_inputs] == [store.url(f"output/train/{r}") for r in (1, 2)]
    assert [i["dataURL"] for i in train_inputs] == [store.url(f"output/data/train/{r}/data.txt") for r in (1, 2)]
    # the round's training samples: the 8 + 4 new ones of round 1, the 12 of round 2; an S3 Dataset's samples are
    # indexed with its URL prefix (dataIndex.txt), as Go's LC writes them
    assert [len(store.read(f"output/data/train/{r}/data.txt", DATASET_NODE).splitlines()) for r in (1, 2)] == [12, 12]
    if backend == "s3":
        assert [i["dataIndexURL"] for i in train_inputs] == [
            store.url(f"output/data/train/{r}/dataIndex.txt") for r in (1, 2)]
        assert store.read("output/data/train/1/dataIndex.txt").splitlines()[0] == store.url("data/")
    else:
        assert not any("dataIndexURL" in i for i in train_inputs)
    evaluated = [data(c)["output"]["models"] for c in conds if (c["stage"], c["type"]) == ("Eval", "Completed")]
    assert [[m["metrics"]["precision"] for m in models] for models in evaluated] == [[[0.9], [0.7]]] * 2
    deployed = [data(c)["input"]["models"] for c in conds if (c["stage"], c["type"]) == ("Deploy", "Ready")]
    assert [[m["url"] for m in models] for models in deployed] == [
        [trained[r][0]["url"], store.url("models/deploy/model.pb")] for r in (0, 1)]

    # the second round's trained model replaced the deployed one (copied by the eval node's LC)
    assert store.read("models/deploy/model.pb") == store.read("output/train/2/model_finetune_tensorflow.pb")
    assert json.loads(store.read("models/deploy/model.pb"))["pod"] == max(
        (p for p in worker_pods(cs, "incrementallearningjob", job, "train")),
        key=lambda p: int(meta.annotations(p)["sedna.io/condition-count"]))["metadata"]["name"]
    # the train and eval pods ran on the worker node and succeeded; when round 3 began the GM deleted round 1's
    # (round 2's stay, with their logs: a job's pods do not pile up with its rounds); one inference pod runs
    for worker in ("train", "eval"):
        pods = worker_pods(cs, "incrementallearningjob", job, worker)
        assert [(p["spec"]["nodeName"], p["status"]["phase"]) for p in pods] == [(WORKER_NODE, "Succeeded")]
    assert len(worker_pods(cs, "incrementallearningjob", job, "inference")) == 1
    annotations = meta.annotations(cs.sedna_v1alpha1().incremental_learning_jobs(NS).get(job))
    assert annotations.get("sedna.io/Train") == WORKER_NODE and annotations.get("sedna.io/Eval") == WORKER_NODE


def open_as_mounted(directory: Path) -> int:
    """What a hostPath (``DirectoryOrCreate``) mount gives a pod when it starts: the directory itself, made if
    missing. A directory removed and made again later is another one, which the pod never sees."""
    directory.mkdir(parents=True, exist_ok=True)
    return os.open(directory, os.O_RDONLY | os.O_DIRECTORY)


def read_through(mount: int, name: str) -> str:
    fd = os.open(name, os.O_RDONLY, dir_fd=mount)
    with os.fdopen(fd, encoding="utf-8") as file:
        return file.read()


def test_il_job_with_model_hot_update(sedna):
    """Train and eval run on the inference pod's node, not the Dataset's (the sample job's topology): the hot update
    written at Deploy/Running is seen through the directory the inference pod mounted when it started."""
    cs, job = sedna.cs, "il-hot"
    store = Storage(sedna, job)
    create_il_job(store, hot_update=True)
    wait_train_waiting(cs, "incremental_learning_jobs", job)
    [pod] = wait_for("the inference pod", lambda: worker_pods(cs, "incrementallearningjob", job, "inference"),
                     check=lambda pods: len(pods) == 1, timeout=TIMEOUT)
    config = meta.annotations(pod)["sedna.io/model-hot-update-config"]
    mount = open_as_mounted((sedna.rootfs[WORKER_NODE] / config.lstrip("/")).parent)
    try:
        store.append("data/index.txt", samples(FIRST, FIRST + MORE[0]))
        wait_rounds(cs, "incremental_learning_jobs", job, 1)
        assert_stages(il_states(cs, job), ["Train/Waiting", *IL_HOT_UPDATE_ROUND])
        # the inference pod was never restarted: the deploy node's LC put the model beside its model_config.json,
        # which the worker polled and reported as loaded
        assert [meta.name(p) for p in worker_pods(cs, "incrementallearningjob", job, "inference")] == [meta.name(pod)]
        written = json.loads(read_through(mount, "model_config.json"))["model_config"]
        assert read_through(mount, "model_finetune_tensorflow.pb") == store.read(
            "output/train/1/model_finetune_tensorflow.pb")
    finally:
        os.close(mount)
    assert written["model_path"] == "/model-hot-update/model_finetune_tensorflow.pb"
    assert store.read("models/deploy/model.pb") == store.read("output/train/1/model_finetune_tensorflow.pb")
    assert meta.annotations(cs.sedna_v1alpha1().incremental_learning_jobs(NS).get(job))["sedna.io/Deploy"] == WORKER_NODE


def test_a_gm_restart_at_deploy_running_leaves_the_hot_update_to_the_deploy_node(sedna):
    """A new GM sends every node the job is resident on its current copy: the Dataset's LC gets Deploy/Running. Only
    the deploy node (``sedna.io/Deploy``) acts on it; the Dataset's LC, which has no trained model, leaves it (Go's
    LC ran the hot update there and reported Deploy/Failed)."""
    cs, job = sedna.cs, "il-gm-restart"
    store = Storage(sedna, job)
    # the inference worker polls its config once an hour: the job stays at Deploy/Running for the restart
    create_il_job(store, hot_update=True, deploy_annotations={"sandbox.sedna.io/worker-period-seconds": "3600"})
    wait_train_waiting(cs, "incremental_learning_jobs", job)
    store.append("data/index.txt", samples(FIRST, FIRST + MORE[0]))
    wait_for("Deploy/Running", lambda: il_states(cs, job), check=lambda s: s[-1:] == ["Deploy/Running"],
             timeout=TIMEOUT)
    sedna.restart_gm()

    def left_alone() -> list[dict[str, Any]]:
        return [e for e in json_log_lines(sedna.procs.log(DATASET_NODE))
                if e.get("event") == "the Deploy stage is another node's: leaving it" and e.get("object") == f"{NS}/{job}"]

    wait_for("the Dataset's LC to answer the copy it was sent", lambda: left_alone() or "Deploy/Failed" in il_states(
        cs, job), timeout=TIMEOUT)
    assert_stages(il_states(cs, job), ["Train/Waiting", *IL_HOT_UPDATE_ROUND[:13]])
    [left] = left_alone()
    assert (left["node"], left["annotation"], left["stage"]) == (WORKER_NODE, "sedna.io/Deploy", "Deploy/Running")
    # the deploy node wrote the hot update, which its worker loads at its next poll
    config = meta.annotations(cs.sedna_v1alpha1().incremental_learning_jobs(NS).get(job))[
        "sedna.io/model-hot-update-config"]
    written = wait_for("the deploy node's hot update", lambda: (sedna.rootfs[WORKER_NODE] / config.lstrip("/")).exists(),
                       timeout=TIMEOUT)
    assert written and not (sedna.rootfs[DATASET_NODE] / config.lstrip("/")).exists()


def test_il_round_survives_kill_9_of_the_dataset_lc(sedna):
    cs, job = sedna.cs, "il-kill"
    store = Storage(sedna, job)
    create_il_job(store, train_annotations={"sandbox.sedna.io/worker-delay-seconds": "2"})
    wait_train_waiting(cs, "incremental_learning_jobs", job)
    store.append("data/index.txt", samples(FIRST, FIRST + MORE[0]))
    # the LC that started the round (it holds the Dataset) dies while the train worker (2 s) runs on the other node
    wait_for("the round to start", lambda: il_states(cs, job), check=lambda s: "Train/Ready" in s, timeout=TIMEOUT)
    lc = sedna.procs.procs[DATASET_NODE]
    lc.send_signal(signal.SIGKILL)
    assert lc.wait(10) == -signal.SIGKILL
    assert "Train/Completed" not in il_states(cs, job)
    # the round goes on without it up to where it needs it: the eval data is the Dataset node's to write
    wait_for("Eval/Waiting", lambda: il_states(cs, job), check=lambda s: "Eval/Waiting" in s, timeout=TIMEOUT)
    assert il_states(cs, job)[-1] == "Eval/Waiting"
    assert sedna.start_lc(DATASET_NODE).poll() is None
    sedna.wait_connected(DATASET_NODE)
    wait_rounds(cs, "incremental_learning_jobs", job, 1)
    assert_stages(il_states(cs, job), ["Train/Waiting", *IL_ROUND])
    assert "resumed" in sedna.procs.log(DATASET_NODE)


@pytest.mark.parametrize("mode", ["report", "crash"])
def test_failed_eval_worker_fails_the_stage_and_waits_for_the_next_round(sedna, mode):
    cs, job = sedna.cs, f"il-evalfail-{mode}"
    store = Storage(sedna, job)
    create_il_job(store, eval_annotations={"sandbox.sedna.io/worker-fail": mode})
    wait_train_waiting(cs, "incremental_learning_jobs", job)
    store.append("data/index.txt", samples(FIRST, FIRST + MORE[0]))
    wait_rounds(cs, "incremental_learning_jobs", job, 1)
    assert_stages(il_states(cs, job), ["Train/Waiting", *IL_ROUND[:8], "Eval/Failed", "Train/Waiting"])
    failed = conditions(cs, "incremental_learning_jobs", job)[-2]
    # reported by the eval node's LC (relaying the worker), or, without a report, by the GM from the pod's end
    assert failed.get("message", "") == ("reported by lc" if mode == "report" else "")
    [pod] = worker_pods(cs, "incrementallearningjob", job, "eval")
    assert pod["status"]["phase"] == "Failed"


def test_a_deploy_copy_that_fails_is_reported_with_the_lcs_reason(sedna):
    cs, job = sedna.cs, "il-deployfail"
    store = Storage(sedna, job)
    create_il_job(store)
    blocked = sedna.rootfs[WORKER_NODE] / job / "models/deploy"
    shutil.rmtree(blocked)
    blocked.write_text("a file where the deploy model's directory should be")
    wait_train_waiting(cs, "incremental_learning_jobs", job)
    store.append("data/index.txt", samples(FIRST, FIRST + MORE[0]))
    wait_rounds(cs, "incremental_learning_jobs", job, 1)
    assert_stages(il_states(cs, job), ["Train/Waiting", *IL_ROUND[:10], "Deploy/Failed", "Train/Waiting"])
    failed = conditions(cs, "incremental_learning_jobs", job)[-2]
    assert failed["message"].startswith("reported by lc: copying the trained model to the deploy model failed: ")
    assert f"{job}/models/deploy/model.pb" in failed["message"]
    assert [m["url"] for m in data(failed)["input"]["models"]] == [
        store.url("output/train/1/model_finetune_tensorflow.pb"), store.url("models/deploy/model.pb")]


def test_a_train_trigger_on_an_unknown_metric_is_shown_on_the_job(sedna):
    """Silent forever in Go Sedna: the GM says it on the job's condition and with a Warning Event (what ``kubectl
    describe`` shows), and the note goes once the spec is fixed."""
    cs, job = sedna.cs, "il-badmetric"
    store = Storage(sedna, job)
    create_il_job(store)
    jobs = cs.sedna_v1alpha1().incremental_learning_jobs(NS)
    # a merge patch of the one field: the GM writes the job's status meanwhile, so a get-then-update may conflict
    jobs.patch(job, {"spec": {"trainSpec": {"trigger": {"condition": {"metric": "no_such_metric"}}}}})
    last = wait_for("the job's note", lambda: (conditions(cs, "incremental_learning_jobs", job) or [{}])[-1],
                    check=lambda c: c.get("reason") == "UnknownTriggerMetric", timeout=TIMEOUT)
    assert (last["stage"], last["type"]) == ("Train", "Waiting") and "'no_such_metric'" in last["message"]
    wait_for("the Warning Event", lambda: [(e["type"], e["involvedObject"]["name"])
                                           for e in cs.core_v1().events(NS).list()["items"]
                                           if e["reason"] == "UnknownTriggerMetric"],
             check=lambda got: got == [("Warning", job)], timeout=TIMEOUT)
    # a merge patch of the one field: the GM writes the job's status meanwhile, so a get-then-update may conflict
    jobs.patch(job, {"spec": {"trainSpec": {"trigger": {"condition": {"metric": "num_of_samples"}}}}})
    wait_for("the note cleared", lambda: conditions(cs, "incremental_learning_jobs", job)[-1],
             check=lambda c: "reason" not in c, timeout=TIMEOUT)
    store.append("data/index.txt", samples(FIRST, FIRST + MORE[0]))
    wait_rounds(cs, "incremental_learning_jobs", job, 1)


# -- LifelongLearningJob -------------------------------------------------------------------------------------------
MODEL_INFO = {"classes": ["helmet", "person"], "current_metric": {"task-0": {"precision": 0.875}},
              "number_of_labeled_unseen_sample": 12}


def test_ll_job_reaches_deploy_with_its_knowledge_base(sedna):
    """As Go Sedna's, the LL LC that deploys is the Dataset's: with host paths, the workers run on its node."""
    cs, job = sedna.cs, "ll"
    store = Storage(sedna, job)
    create_dataset(store)
    worker = template(DATASET_NODE, {"sandbox.sedna.io/worker-model-info": json.dumps(MODEL_INFO)})
    create(cs, "lifelong_learning_jobs", "LifelongLearningJob", job, {
        "dataset": {"name": f"{job}-ds", "trainProb": 0.8},
        "trainSpec": {"template": worker, "trigger": train_trigger()},
        "evalSpec": {"template": worker},
        "deploySpec": {"template": template(DATASET_NODE)},
        "outputDir": store.url("output"),
    })
    wait_train_waiting(cs, "lifelong_learning_jobs", job)
    store.append("data/index.txt", samples(FIRST, FIRST + MORE[0]))
    wait_rounds(cs, "lifelong_learning_jobs", job, 1)
    assert_stages(states(cs, "lifelong_learning_jobs", job), ["Train/Waiting", *IL_ROUND])
    status = cs.sedna_v1alpha1().lifelong_learning_jobs(NS).get(job)["status"]
    assert status["knowledgeBase"] == {
        "AIModels": {"numberOfAIModels": 1, "listOfAIModels": [
            {"modelID": "task-0", "averagePrecision": 0.875, "numberOfTrainSamples": 12}]},
        "AIClasses": {"numberOfAIClasses": 2, "listOfAIClasses": ["helmet", "person"]},
        "samples": {"numberOfLabeledUnseenSample": 12, "numberOfUnseenSample": 0},
    }
    # the evaluated knowledge-base index was deployed by the eval node's LC
    deploy = [data(c)["input"]["models"] for c in conditions(cs, "lifelong_learning_jobs", job)
              if (c["stage"], c["type"]) == ("Deploy", "Ready")]
    assert deploy == [[{"format": "pkl", "url": store.url("output/eval/1/index.pkl"), "classes": None}]]
    assert store.read("output/deploy/index.pkl", DATASET_NODE) == store.read("output/eval/1/index.pkl", DATASET_NODE)
