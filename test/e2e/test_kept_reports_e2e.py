"""A worker report that reaches its node's LC before the job does is kept and applied when the job arrives (issue 25
item 1), end to end with real processes: the sandbox, ``sedna-gm``, ``sedna-lc`` on ``edge-1`` (the Dataset) and on
``edge-2`` (the workers), the worker simulator for the eval and deploy workers.

The train worker on ``edge-2`` is played by the test, as Sedna's SDK: it reports ``train completed`` with its model
while ``edge-2``'s LC is cut off from the GM (started with an address where no GM listens), so that LC does not hold
the job yet and answers 200. The LC then restarts on its database, connected: the GM sends it the job, the kept report
goes upstream, and the round completes with that report's model (before, the report was dropped and the round never
got the trained model). And a report as large as the worker API accepts passes the LC and the edge link and, too
large for the API server, ends as a ``ReportTooLarge`` condition and Warning Event on the job.
"""

from __future__ import annotations

import http.client
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from testkit import (
    Processes,
    free_port,
    gm_edge_address,
    http_get,
    log_event,
    start_gm,
    start_lc,
    start_workersim,
    wait_for,
)
from testkit.learning import IL_ROUND, assert_stages, job_history, sample_lines

from apis.clientset import Clientset
from workersim import LCClient

pytestmark = pytest.mark.e2e

NS = "default"
JOB = "il-kept"
DATASET_NODE, WORKER_NODE = "edge-1", "edge-2"
TIMEOUT = 60.0
DELAY = {"sandbox.sedna.io/worker-delay-seconds": "0.5"}


def create(cs: Clientset, resource: str, kind: str, name: str, spec: dict[str, Any]) -> None:
    getattr(cs.sedna_v1alpha1(), resource)(NS).create(
        {"apiVersion": "sedna.io/v1alpha1", "kind": kind, "metadata": {"name": name, "namespace": NS}, "spec": spec})


def template(annotations: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"annotations": annotations},
            "spec": {"nodeName": WORKER_NODE, "containers": [{"name": "worker", "image": "kubeedge/worker:v1"}]}}


def write(rootfs: Path, path: str, text: str) -> None:
    target = rootfs / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def states(cs: Clientset) -> list[str]:
    return [f"{c.get('stage')}/{c.get('type')}" for c in conditions(cs)]


def conditions(cs: Clientset) -> list[dict[str, Any]]:
    """Every condition the job has had (our GM prunes finished rounds from the object: testkit's history)."""
    return job_history(cs, "incremental_learning_jobs", NS, JOB).conditions()


def running_train_pod(cs: Clientset) -> dict[str, Any] | None:
    selector = f"incrementallearningjob.sedna.io/name={JOB},incrementallearningjob.sedna.io/worker-type=train"
    pods = [p for p in cs.core_v1().pods(NS).list(label_selector=selector)["items"]
            if (p.get("status") or {}).get("phase") == "Running"]
    return pods[0] if pods else None


def env_of(pod: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in pod["spec"]["containers"][0].get("env", [])}


@dataclass
class System:
    cs: Clientset
    gm_address: str
    rootfs: dict[str, Path]
    ports: dict[str, int]
    worker_lc: subprocess.Popen[bytes]

    def url(self, node: str) -> str:
        return f"http://127.0.0.1:{self.ports[node]}"


def start_system(procs: Processes, tmp_path: Path, cluster: tuple[str, Clientset], worker_connected: bool) -> System:
    """The GM, both LCs (``edge-2``'s cut off from the GM unless ``worker_connected``), the worker simulator, and an
    IL job whose train worker the test plays."""
    kubeconfig, cs = cluster
    config = tmp_path / "gm.yaml"
    config.write_text("controllers: [Dataset, Model, IncrementalLearning]\n")
    start_gm(procs, "gm", kubeconfig, "--no-leader-elect", "--config", str(config), wait=True, timeout=TIMEOUT)
    gm_address = gm_edge_address(procs, timeout=TIMEOUT)
    rootfs = {node: tmp_path / f"rootfs-{node}" for node in (DATASET_NODE, WORKER_NODE)}
    _, dataset_lc_url = start_lc(procs, DATASET_NODE, gm_address, rootfs[DATASET_NODE], "--dataset-check-period",
                                 "0.3")
    cut_off = f"127.0.0.1:{free_port()}"  # no GM there (nothing listens): the LC serves its workers but never gets the job
    worker_lc, worker_lc_url = start_lc(procs, WORKER_NODE, gm_address if worker_connected else cut_off,
                                        rootfs[WORKER_NODE])
    ports = {node: int(url.rsplit(":", 1)[1]) for node, url in ((DATASET_NODE, dataset_lc_url),
                                                                 (WORKER_NODE, worker_lc_url))}
    system = System(cs, gm_address, rootfs, ports, worker_lc)
    urls = {node: system.url(node) for node in rootfs}
    for url in urls.values():
        wait_for("an LC's worker API", lambda u=url: http_get(f"{u}/healthz")[0] == 200, timeout=TIMEOUT)
    start_workersim(procs, kubeconfig, urls, rootfs)

    write(rootfs[DATASET_NODE], f"/{JOB}/data/index.txt", "".join(f"{s}\n" for s in sample_lines(0, 12)))
    for role in ("initial", "deploy"):
        write(rootfs[WORKER_NODE], f"/{JOB}/models/{role}/model.pb", f"the {role} model")
        create(cs, "models", "Model", f"{JOB}-{role}", {"url": f"/{JOB}/models/{role}/model.pb", "format": "pb"})
    create(cs, "datasets", "Dataset", f"{JOB}-ds",
           {"url": f"/{JOB}/data/index.txt", "format": "txt", "nodeName": DATASET_NODE})
    create(cs, "incremental_learning_jobs", "IncrementalLearningJob", JOB, {
        "dataset": {"name": f"{JOB}-ds", "trainProb": 0.8},
        "initialModel": {"name": f"{JOB}-initial"},
        # the test plays the train worker: the simulator leaves it alone, the sandbox keeps its pod Running
        "trainSpec": {"template": template({**DELAY, "sandbox.sedna.io/worker-simulated": "false"}),
                      "trigger": {"checkPeriodSeconds": 1,
                                  "condition": {"operator": ">", "threshold": 5, "metric": "num_of_samples"}}},
        "evalSpec": {"template": template(DELAY)},
        "deploySpec": {"model": {"name": f"{JOB}-deploy"}, "hardExampleMining": {"name": "IBT"},
                       "trigger": {"condition": {"operator": ">", "threshold": 0.1, "metric": "precision_delta[0]"}},
                       "template": template(DELAY)},
        "outputDir": f"/{JOB}/output",
    })
    return system


def train_report(env: dict[str, str], model: str, metrics: dict[str, Any]) -> dict[str, Any]:
    """The train worker's ``train completed``, as Sedna's SDK posts it."""
    return {"name": env["WORKER_NAME"], "namespace": NS, "ownerName": JOB, "ownerKind": "incrementallearningjob",
            "kind": "train", "status": "completed", "results": [{"format": "pb", "url": model, "metrics": metrics}]}


def flood(url: str, count: int) -> None:
    """``count`` tiny reports for jobs that do not exist (each its own job and worker name), as one client posts them
    (one keep-alive connection); every one answered 200: kept."""
    conn = http.client.HTTPConnection(urlsplit(url).hostname, urlsplit(url).port, timeout=30)
    try:
        for i in range(count):
            body = json.dumps({"name": f"w-{i}", "namespace": NS, "ownerName": f"nosuchjob-{i}",
                               "ownerKind": "incrementallearningjob", "kind": "train", "status": "running"})
            conn.request("POST", f"/sedna/workers/w-{i}/info", body, {"Content-Type": "application/json"})
            answer = conn.getresponse()
            assert answer.status == 200, answer.read()
            answer.read()
    finally:
        conn.close()


# issue 38 item 2: 1,000 reports for jobs that do not exist filled the node-wide bound of kept reports for an hour, and
# the train worker's report (this node did not hold the job yet) was answered 503 until the worker gave up
@pytest.mark.parametrize("flooded", [0, 1000], ids=["alone", "after-1000-reports-for-jobs-that-do-not-exist"])
def test_a_train_report_before_the_job_reaches_the_gm_and_the_round_completes(
        procs: Processes, tmp_path: Path, cluster: tuple[str, Clientset], flooded: int) -> None:
    system = start_system(procs, tmp_path, cluster, worker_connected=False)
    cs, rootfs = system.cs, system.rootfs
    flood(system.url(WORKER_NODE), flooded)
    pod = wait_for("the train pod Running", lambda: running_train_pod(cs), timeout=TIMEOUT)
    env = env_of(pod)
    # the SDK reports its model's host path: the container path without DATA_PATH_PREFIX (the hostPath mount)
    model = f"{env['MODEL_URL'].rstrip('/')}/model.pb".removeprefix(env["DATA_PATH_PREFIX"])
    write(rootfs[WORKER_NODE], model, "the trained model")
    report = train_report(env, model, {"precision": [0.9], "recall": [0.8]})
    assert LCClient(attempts=1, retry_wait=0, timeout=10).send(system.url(WORKER_NODE), env["WORKER_NAME"], report)
    assert log_event(procs.log(WORKER_NODE), "kept a worker report for a job this node does not hold yet; "
                                             "delivered when it arrives")

    system.worker_lc.terminate()  # back on the GM: the same node, rootfs (database) and worker API port
    assert system.worker_lc.wait(15) == 0
    start_lc(procs, WORKER_NODE, system.gm_address, rootfs[WORKER_NODE], port=system.ports[WORKER_NODE])
    wait_for("the train stage completed from the kept report", lambda: "Train/Completed" in states(cs),
             timeout=TIMEOUT)
    trained = next(c for c in conditions(cs) if (c["stage"], c["type"]) == ("Train", "Completed"))
    assert json.loads(trained["data"])["output"]["models"][0]["url"] == model

    # the pod ends as the SDK's process would after its report; the round goes on with the reported model
    pod["status"] = {**pod["status"], "phase": "Succeeded"}
    cs.core_v1().pods(NS).update_status(pod)
    got = wait_for("the round to complete", lambda: states(cs),
                   check=lambda s: s.count("Train/Waiting") == 2 and s[-1] == "Train/Waiting", timeout=TIMEOUT)
    assert_stages(got, ["Train/Waiting", *IL_ROUND])
    evaluated = next(c for c in conditions(cs) if (c["stage"], c["type"]) == ("Eval", "Ready"))
    assert model in [m["url"] for m in json.loads(evaluated["data"])["input"]["models"]]


def test_a_report_too_large_for_the_api_server_passes_the_chain_and_says_so_on_the_job(
        procs: Processes, tmp_path: Path, cluster: tuple[str, Clientset]) -> None:
    # 6 MiB: accepted by the worker API (8 MiB), the outbox and the frames (16 MiB base64), refused by the sandbox's
    # object size limit (3 MiB) when the GM writes the condition
    system = start_system(procs, tmp_path, cluster, worker_connected=True)
    cs = system.cs
    pod = wait_for("the train pod Running", lambda: running_train_pod(cs), timeout=TIMEOUT)
    env = env_of(pod)
    metrics = {f"metric_{i:05d}": [0.5] * 64 for i in range(30000)}
    report = train_report(env, f"{env['MODEL_URL'].rstrip('/')}/model.pb", metrics)
    assert len(json.dumps(report)) > 6 * 1024 * 1024
    assert LCClient(attempts=1, retry_wait=0, timeout=30).send(system.url(WORKER_NODE), env["WORKER_NAME"], report)
    failed = wait_for("the ReportTooLarge condition", lambda: [
        c for c in conditions(cs) if c.get("reason") == "ReportTooLarge"], timeout=TIMEOUT)
    assert (failed[0]["stage"], failed[0]["type"]) == ("Train", "Failed")
    assert f"from node {WORKER_NODE}" in failed[0]["message"]
    # the GM records the Event after it writes the condition
    wait_for("the ReportTooLarge Warning Event", lambda: [
        e for e in cs.core_v1().events(NS).list()["items"] if e["type"] == "Warning" and e["reason"] == "ReportTooLarge"],
        timeout=TIMEOUT)
