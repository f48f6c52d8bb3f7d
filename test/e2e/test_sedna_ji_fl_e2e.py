"""JointInferenceService and FederatedLearningJob end to end with real processes: the sandbox API server (its pod and
Deployment simulation), ``sedna-gm``, two ``sedna-lc`` (``edge-1``, ``edge-2``, each with its own rootfs, database
and port) and the worker simulator playing Sedna's SDK inside the worker pods, each node's workers reporting to
that node's LC.

* JointInferenceService: both Deployments come up, the LC on edge-1 holds the service, the edge worker's periodic
  ``ownerInfo`` reaches ``status.metrics`` through LC → GM; a deleted edge Deployment is recreated; a changed env
  value of the edge template changes the edge Deployment in place (the cloud one untouched); deleting the service
  cascades and the LC drops it.
* FederatedLearningJob: the aggregation pod, its Service and two training pods come up, each LC holds the job, the
  trainers' round reports give one ``Training`` condition per round and the aggregation Model's metrics; a deleted
  training pod is recreated; a spec change replaces the job's pods; once the trainers complete the job is
  ``Succeeded`` with ``Complete``; deleting the job cascades and the LCs drop it.
Every wait is bounded and waits on state; every process is killed at teardown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from testkit import (
    Processes,
    fl_round_reports,
    gm_edge_address,
    http_get,
    start_gm,
    start_lc,
    start_workersim,
    update_with_retry,
    wait_for,
)
from testkit.lc import lc_resource
from testkit.objects import controlled_pods, deployment_rolled_out, gone

from apis import meta
from apis.clientset import Clientset

pytestmark = pytest.mark.e2e

NS = "default"
NODES = ("edge-1", "edge-2")
TIMEOUT = 30.0


@dataclass
class Sedna:
    cs: Clientset
    rootfs: dict[str, Path]

    def held(self, node: str, kind: str, name: str) -> Any:
        return lc_resource(self.rootfs[node], kind, NS, name)

    def model(self, name: str, url: str) -> None:
        self.cs.sedna_v1alpha1().models(NS).create({
            "apiVersion": "sedna.io/v1alpha1", "kind": "Model", "metadata": {"name": name, "namespace": NS},
            "spec": {"url": url, "format": "pb"}})


@pytest.fixture
def sedna(procs: Processes, tmp_path: Path, cluster: tuple[str, Clientset]) -> Iterator[Sedna]:
    kubeconfig, cs = cluster
    config = tmp_path / "gm.yaml"
    config.write_text("controllers: [Dataset, Model, JointInference, FederatedLearning]\n")
    gm, _ = start_gm(procs, "gm", kubeconfig, "--no-leader-elect", "--config", str(config), wait=True,
                     timeout=TIMEOUT)
    gm_address = gm_edge_address(procs, timeout=TIMEOUT)
    rootfs, lc_urls = {}, {}
    for node in NODES:
        rootfs[node] = tmp_path / f"rootfs-{node}"
        _, lc_urls[node] = start_lc(procs, node, gm_address, rootfs[node])
    for node in NODES:
        wait_for(f"{node} connected", lambda node=node: http_get(lc_urls[node] + "/readyz")[0] == 200,
                 timeout=TIMEOUT)
    start_workersim(procs, kubeconfig, lc_urls, rootfs)
    yield Sedna(cs, rootfs)
    assert gm.poll() is None, procs.log("gm")  # it never crashed


# -- JointInferenceService -----------------------------------------------------------------------------------------
def test_joint_inference_service(sedna):
    cs = sedna.cs
    sedna.model("big", "/models/big.pb")
    sedna.model("little", "/models/little.pb")
    services = cs.sedna_v1alpha1().joint_inference_services(NS)
    deployments = cs.apps_v1().deployments(NS)
    edge_template = {"metadata": {"annotations": {"sandbox.sedna.io/worker-period-seconds": "0.3"}},
                     "spec": {"nodeName": "edge-1", "containers": [
                         {"name": "e", "image": "e:1", "env": [{"name": "input_shape", "value": "416,736"}]}]}}
    services.create({
        "apiVersion": "sedna.io/v1alpha1", "kind": "JointInferenceService", "metadata": {"name": "ji", "namespace": NS},
        "spec": {"edgeWorker": {"model": {"name": "little"}, "template": edge_template,
                                "hardExampleMining": {"name": "IBT", "parameters": [{"key": "threshold_img", "value": "0.9"}]},
                                "hpa": {"minReplicas": 1, "maxReplicas": 2}},
                 "cloudWorker": {"model": {"name": "big"},
                                 "template": {"spec": {"containers": [{"name": "c", "image": "c:1"}]}}}}})

    def condition() -> str:
        conditions = (services.get("ji").get("status") or {}).get("conditions") or []
        return conditions[-1]["type"] if conditions else ""

    def metrics() -> dict[str, str]:
        return {m["key"]: m["value"] for m in (services.get("ji").get("status") or {}).get("metrics") or []}

    # comes up: both Deployments rolled out, the service Running; its edge node's LC holds it, the other does not
    wait_for("the service to run", condition, check=lambda c: c == "Running", timeout=TIMEOUT)
    for worker in ("cloud", "edge"):
        assert deployment_rolled_out(deployments.get(f"ji-deployment-{worker}"))
    assert cs.core_v1().services(NS).get("ji-cloud")["spec"]["ports"][0]["port"] == 5000
    assert cs.autoscaling_v2().horizontal_pod_autoscalers(NS).get("hpa-ji-deployment-edge")["spec"]["maxReplicas"] == 2
    wait_for("edge-1's LC to hold the service", lambda: sedna.held("edge-1", "JointInferenceService", "ji"))
    assert sedna.held("edge-2", "JointInferenceService", "ji") is None

    # the simulated edge worker's LCReporter → edge-1's LC → GM → status.metrics (times left out, as Sedna)
    reported = wait_for("the edge worker's counters in status.metrics", metrics,
                        check=lambda m: int(m.get("inferenceNumber", "0")) >= 20, timeout=TIMEOUT)
    assert set(reported) == {"inferenceNumber", "hardExampleNumber", "uploadCloudRatio"}
    assert float(reported["uploadCloudRatio"]) == pytest.approx(0.3)
    assert condition() == "Running"  # metrics never clobber the conditions

    # heals: the edge Deployment deleted by hand comes back and rolls out
    first = meta.uid(deployments.get("ji-deployment-edge"))
    deployments.delete("ji-deployment-edge")
    wait_for("the edge Deployment to be recreated", lambda: not gone(deployments, "ji-deployment-edge")
             and meta.uid(deployments.get("ji-deployment-edge")) != first, timeout=TIMEOUT)
    wait_for("the recreated Deployment to roll out", lambda: deployment_rolled_out(deployments.get("ji-deployment-edge")),
             timeout=TIMEOUT)
    wait_for("the service to run again", condition, check=lambda c: c == "Running", timeout=TIMEOUT)

    # rolls: an env value of the edge template changes the edge Deployment's template in place
    edge, cloud = deployments.get("ji-deployment-edge"), deployments.get("ji-deployment-cloud")
    update_with_retry(services, "ji", lambda svc: svc["spec"]["edgeWorker"]["template"]["spec"]["containers"][0]
                      ["env"][0].update(value="608,800"))

    def edge_env(name: str) -> str | None:
        container = deployments.get("ji-deployment-edge")["spec"]["template"]["spec"]["containers"][0]
        return {e["name"]: e.get("value") for e in container["env"]}.get(name)

    wait_for("the edge template to carry the new value", lambda: edge_env("input_shape"), check=lambda v: v == "608,800",
             timeout=TIMEOUT)
    wait_for("the new edge template to roll out", lambda: deployment_rolled_out(deployments.get("ji-deployment-edge")),
             timeout=TIMEOUT)
    assert meta.uid(deployments.get("ji-deployment-edge")) == meta.uid(edge)
    assert meta.generation(deployments.get("ji-deployment-edge")) > meta.generation(edge)
    assert edge_env("BIG_MODEL_IP") == "ji-cloud.default"
    now_cloud = deployments.get("ji-deployment-cloud")
    assert (meta.uid(now_cloud), meta.generation(now_cloud)) == (meta.uid(cloud), meta.generation(cloud))
    wait_for("edge-1's LC to hold the changed service", lambda: sedna.held("edge-1", "JointInferenceService", "ji"),
             check=lambda obj: "608,800" in str(obj), timeout=TIMEOUT)

    # cascades: the service's Deployments, Service and HPA are garbage-collected and the LC drops it
    services.delete("ji")
    for client, name in ((deployments, "ji-deployment-edge"), (deployments, "ji-deployment-cloud"),
                         (cs.core_v1().services(NS), "ji-cloud"),
                         (cs.autoscaling_v2().horizontal_pod_autoscalers(NS), "hpa-ji-deployment-edge")):
        wait_for(f"{name} to be garbage-collected", lambda client=client, name=name: gone(client, name), timeout=TIMEOUT)
    wait_for("edge-1's LC to drop the service", lambda: sedna.held("edge-1", "JointInferenceService", "ji"),
             check=lambda obj: obj is None, timeout=TIMEOUT)


# -- FederatedLearningJob ------------------------------------------------------------------------------------------
ROUND = re.compile(r"^Round (\d+) reaches at ")


def trainer(node: str, dataset: str, rounds: int, delay: float) -> dict[str, Any]:
    return {"dataset": {"name": dataset}, "template": {
        "metadata": {"annotations": {"sandbox.sedna.io/worker-rounds": str(rounds),
                                     "sandbox.sedna.io/worker-delay-seconds": str(delay)}},
        "spec": {"nodeName": node, "containers": [{"name": "t", "image": "t:1"}]}}}


def test_federated_learning_job(sedna):
    cs = sedna.cs
    sedna.model("agg-model", "/models/agg")
    for i, node in enumerate(NODES, 1):
        data = sedna.rootfs[node] / f"data/d{i}.txt"
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_text("a.jpg\nb.jpg\n")
        cs.sedna_v1alpha1().datasets(NS).create({
            "apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": f"d{i}", "namespace": NS},
            "spec": {"url": f"/data/d{i}.txt", "format": "txt", "nodeName": node}})
    jobs = cs.sedna_v1alpha1().federated_learning_jobs(NS)
    pods = cs.core_v1().pods(NS)
    # generation 1 trains on and on (a round a second): it is healed and replaced before it could end
    jobs.create({
        "apiVersion": "sedna.io/v1alpha1", "kind": "FederatedLearningJob", "metadata": {"name": "fl", "namespace": NS},
        "spec": {"aggregationWorker": {"model": {"name": "agg-model"},
                                       "template": {"spec": {"containers": [{"name": "a", "image": "a:1"}]}}},
                 "trainingWorkers": [trainer("edge-1", "d1", 1000, 1.0), trainer("edge-2", "d2", 1000, 1.0)]}})

    def job_pods(generation: int | None = None) -> list[dict[str, Any]]:
        return controlled_pods(pods, jobs.get("fl"), generation)

    def status() -> dict[str, Any]:
        return jobs.get("fl").get("status") or {}

    def rounds() -> list[int]:
        return [int(m.group(1)) for message in fl_round_reports(cs, "fl") if (m := ROUND.match(message))]

    # comes up: the aggregation pod, its Service and a training pod per worker, Running; each LC holds the job
    wait_for("three running pods", lambda: [(p.get("status") or {}).get("phase") for p in job_pods()],
             check=lambda phases: phases == ["Running"] * 3, timeout=TIMEOUT)
    wait_for("phase Running", lambda: status().get("phase"), check=lambda p: p == "Running", timeout=TIMEOUT)
    assert cs.core_v1().services(NS).get("fl-aggregation")["spec"]["ports"][0]["port"] == 7363
    for node in NODES:
        wait_for(f"{node}'s LC to hold the job", lambda node=node: sedna.held(node, "FederatedLearningJob", "fl"),
                 timeout=TIMEOUT)

    # both trainers' round reports (edge-1's and edge-2's LC) → one Training condition per round, model metrics
    wait_for("Training conditions for rounds 1 and 2", rounds, check=lambda r: r[:2] == [1, 2], timeout=TIMEOUT)
    model_metrics = wait_for("the aggregation Model's metrics", lambda: {
        m["key"]: m["value"] for m in (cs.sedna_v1alpha1().models(NS).get("agg-model").get("status") or {})
        .get("metrics") or []}, check=lambda m: {"accuracy", "loss"} <= set(m), timeout=TIMEOUT)
    assert model_metrics["accuracy"].startswith("[0.")

    # heals: a training pod deleted by hand is recreated under its name; it trains again from round 1
    victim = next(p for p in job_pods() if "-train-" in meta.name(p))
    pods.delete(meta.name(victim))
    wait_for("the training pod to be recreated", lambda: not gone(pods, meta.name(victim))
             and meta.uid(pods.get(meta.name(victim))) != meta.uid(victim), timeout=TIMEOUT)
    wait_for("three running pods again", lambda: [(p.get("status") or {}).get("phase") for p in job_pods()],
             check=lambda phases: phases == ["Running"] * 3, timeout=TIMEOUT)
    seen = rounds()
    wait_for("a later round", rounds, check=lambda r: len(r) > len(seen), timeout=TIMEOUT)

    # rolls: a spec change (two quick rounds) replaces the job's pods; the new trainers complete → Succeeded
    update_with_retry(jobs, "fl", lambda job: job["spec"].update(trainingWorkers=[
        trainer("edge-1", "d1", 2, 0.2), trainer("edge-2", "d2", 2, 0.2)]))
    wait_for("the job to succeed", lambda: status().get("phase"), check=lambda p: p == "Succeeded", timeout=TIMEOUT)
    final = status()
    assert final["completionTime"] and final["succeeded"] == 3
    assert [c["type"] for c in final["conditions"]].count("Complete") == 1
    assert job_pods(1) == [] and len(job_pods(2)) == 3
    # one Training condition (the latest report), each round recorded once; a run started again (the spec change)
    # counts from 1 again
    assert [c["type"] for c in final["conditions"]].count("Training") == 1
    messages = fl_round_reports(cs, "fl")
    assert len(messages) == len(set(messages))
    runs: list[list[int]] = []
    for n in rounds():
        if n == 1 or not runs:
            runs.append([])
        runs[-1].append(n)
    assert runs and all(run == list(range(1, len(run) + 1)) for run in runs)

    # cascades: the job's pods and Service are garbage-collected and both LCs drop it
    jobs.delete("fl")
    wait_for("the job's pods to be garbage-collected",
             lambda: [p for p in pods.list()["items"] if meta.name(p).startswith("fl-")] == [], timeout=TIMEOUT)
    wait_for("the aggregation Service to be garbage-collected",
             lambda: gone(cs.core_v1().services(NS), "fl-aggregation"), timeout=TIMEOUT)
    for node in NODES:
        wait_for(f"{node}'s LC to drop the job", lambda node=node: sedna.held(node, "FederatedLearningJob", "fl"),
                 check=lambda obj: obj is None, timeout=TIMEOUT)
