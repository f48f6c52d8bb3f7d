"""JointInferenceService and FederatedLearningJob run by a real ``sedna-gm`` process against the sandbox API server
over HTTP (its pod and Deployment simulation): each kind comes up, heals a deleted worker, rolls on a spec change
and cascades on delete. Deployments are judged by their status (not by who owns their pods), so the checks hold
whether or not the sandbox puts ReplicaSets between Deployments and pods."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from testkit import CRDS, start_gm, update_with_retry, wait_for
from testkit.objects import controlled_pods, deployment_rolled_out, gone

from apis import meta
from apis.clientset import Clientset

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(crd_dirs=[str(CRDS)])]

NS = "default"


@pytest.fixture
def gm(sandbox, procs, tmp_path: Path):
    config = tmp_path / "gm.yaml"
    config.write_text("controllers: [JointInference, FederatedLearning]\nlocalController:\n  server: http://lc.test:9100\n")
    proc, _ = start_gm(procs, "gm", sandbox.kubeconfig, "--no-leader-elect", "--config", str(config), wait=True)
    cs = Clientset.from_kubeconfig(sandbox.kubeconfig)
    yield cs
    cs.close()
    assert proc.poll() is None, procs.log("gm")  # it never crashed


def model(name: str, url: str) -> dict[str, Any]:
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "Model", "metadata": {"name": name, "namespace": NS},
            "spec": {"url": url, "format": "pb"}}


def joint_inference_service(name: str) -> dict[str, Any]:
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "JointInferenceService", "metadata": {"name": name, "namespace": NS},
            "spec": {"edgeWorker": {"model": {"name": "little"},
                                    "hardExampleMining": {"name": "IBT", "parameters": [{"key": "t", "value": "0.9"}]},
                                    "template": {"spec": {"nodeName": "edge-1", "containers": [{"name": "e", "image": "e:1"}]}}},
                     "cloudWorker": {"model": {"name": "big"},
                                     "template": {"spec": {"containers": [{"name": "c", "image": "c:1"}]}}}}}


def test_joint_inference_service(gm):
    cs = gm
    for name, url in (("big", "/models/big.pb"), ("little", "/models/little.pb")):
        cs.sedna_v1alpha1().models(NS).create(model(name, url))
    services = cs.sedna_v1alpha1().joint_inference_services(NS)
    deployments = cs.apps_v1().deployments(NS)
    services.create(joint_inference_service("ji"))

    def state(name: str = "ji") -> str:
        conds = (services.get(name).get("status") or {}).get("conditions") or []
        return conds[-1]["type"] if conds else ""

    # comes up: both Deployments available → Running
    wait_for("the service to run", lambda: state() == "Running", timeout=30)
    status = services.get("ji")["status"]
    assert status["active"] == 2 and status["failed"] == 0 and status["startTime"]
    assert cs.core_v1().services(NS).get("ji-cloud")["spec"]["ports"][0]["port"] == 5000
    edge = deployments.get("ji-deployment-edge")
    env = {e["name"]: e.get("value") for e in edge["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["BIG_MODEL_IP"] == "ji-cloud.default" and env["LC_SERVER"] == "http://lc.test:9100"

    # heals: a Deployment deleted from under it comes back, and the service runs again
    first = meta.uid(edge)
    deployments.delete("ji-deployment-edge")
    wait_for("the edge Deployment to be recreated",
             lambda: not gone(deployments, "ji-deployment-edge") and meta.uid(deployments.get("ji-deployment-edge")) != first)
    wait_for("the recreated Deployment to be available", lambda: deployment_rolled_out(deployments.get("ji-deployment-edge")))
    wait_for("the service to run again", lambda: state() == "Running", timeout=30)

    # rolls: a changed HEM parameter updates the edge Deployment in place, the cloud one is left alone
    cloud_generation = meta.generation(deployments.get("ji-deployment-cloud"))
    uid = meta.uid(deployments.get("ji-deployment-edge"))
    update_with_retry(services, "ji",
                      lambda svc: svc["spec"]["edgeWorker"]["hardExampleMining"]["parameters"][0].update(value="0.5"))

    def edge_param() -> str:
        d = deployments.get("ji-deployment-edge")
        return {e["name"]: e.get("value") for e in d["spec"]["template"]["spec"]["containers"][0]["env"]}["HEM_PARAMETERS"]

    wait_for("the edge Deployment to carry the new parameter", lambda: edge_param() == '[{"key":"t","value":"0.5"}]')
    wait_for("the new template to be rolled out", lambda: deployment_rolled_out(deployments.get("ji-deployment-edge")))
    assert meta.uid(deployments.get("ji-deployment-edge")) == uid  # in place
    assert meta.generation(deployments.get("ji-deployment-cloud")) == cloud_generation

    # cascades: deleting the service deletes its Deployments and Service, and nothing comes back
    services.delete("ji")
    for client, name in ((deployments, "ji-deployment-edge"), (deployments, "ji-deployment-cloud"),
                         (cs.core_v1().services(NS), "ji-cloud")):
        wait_for(f"{name} to be garbage-collected", lambda client=client, name=name: gone(client, name))
    # a late delete event must not bring one back: once the GM has seen the Deployments of a service created now
    # become available (Deployment events come in order), it has handled the old ones' delete events
    services.create(joint_inference_service("marker"))
    wait_for("the marker service to run", lambda: state("marker") == "Running", timeout=30)
    assert {meta.name(d) for d in deployments.list()["items"]} == {"marker-deployment-edge", "marker-deployment-cloud"}


def test_federated_learning_job(gm):
    cs = gm
    cs.sedna_v1alpha1().models(NS).create(model("agg-model", "/models/agg"))
    for i in (1, 2):
        cs.sedna_v1alpha1().datasets(NS).create({
            "apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": f"d{i}", "namespace": NS},
            "spec": {"url": f"/data/d{i}.txt", "format": "txt", "nodeName": f"edge-{i}"}})
    jobs = cs.sedna_v1alpha1().federated_learning_jobs(NS)
    pods = cs.core_v1().pods(NS)

    def trainer(i: int) -> dict[str, Any]:
        return {"dataset": {"name": f"d{i}"}, "template": {"spec": {"nodeName": f"edge-{i}", "containers": [
            {"name": "t", "image": "t:1", "env": [{"name": "batch_size", "value": "32"}]}]}}}

    jobs.create({"apiVersion": "sedna.io/v1alpha1", "kind": "FederatedLearningJob", "metadata": {"name": "fl", "namespace": NS},
                 "spec": {"aggregationWorker": {"model": {"name": "agg-model"},
                                                "template": {"spec": {"containers": [{"name": "a", "image": "a:1"}]}}},
                          "trainingWorkers": [trainer(1), trainer(2)]}})

    def job_pods(generation: int | None = None) -> list[dict[str, Any]]:
        return controlled_pods(pods, jobs.get("fl"), generation)

    def status() -> dict[str, Any]:
        return jobs.get("fl").get("status") or {}

    # comes up: the aggregation pod, its Service and two training pods
    wait_for("three running pods", lambda: len(job_pods()) == 3
             and all((p.get("status") or {}).get("phase") == "Running" for p in job_pods()), timeout=30)
    wait_for("phase Running", lambda: status().get("phase") == "Running" and status().get("active") == 3)
    assert cs.core_v1().services(NS).get("fl-aggregation")["spec"]["ports"][0]["port"] == 7363

    # heals: a training pod deleted by hand is recreated under its name
    victim = next(p for p in job_pods() if "-train-" in meta.name(p))
    pods.delete(meta.name(victim))
    wait_for("the training pod to be recreated", lambda: not gone(pods, meta.name(victim))
             and meta.uid(pods.get(meta.name(victim))) != meta.uid(victim))
    assert len(job_pods()) == 3

    # rolls: a new batch size replaces the job's pods with pods of the new spec
    update_with_retry(jobs, "fl", lambda job: job["spec"]["trainingWorkers"][0]["template"]["spec"]["containers"][0]
                      ["env"][0].update(value="16"))

    def rolled() -> bool:
        current = job_pods(2)
        sizes = sorted({e["name"]: e.get("value") for e in p["spec"]["containers"][0]["env"]}.get("batch_size", "")
                       for p in current if "-train-" in meta.name(p))
        return len(current) == 3 and sizes == ["16", "32"] and not job_pods(1)

    wait_for("the pods of generation 2", rolled, timeout=30)
    # the old pods' late delete events must not bring them back: a pod deleted now is recreated by a sync of the job
    # that comes after every earlier event of its pods
    victim = next(p for p in job_pods(2) if "-train-" in meta.name(p))
    pods.delete(meta.name(victim))
    wait_for("the training pod to be recreated", lambda: not gone(pods, meta.name(victim))
             and meta.uid(pods.get(meta.name(victim))) != meta.uid(victim))
    assert job_pods(1) == [] and len(job_pods()) == 3

    # cascades: deleting the job deletes its pods and Service
    jobs.delete("fl")
    wait_for("the job's pods to be garbage-collected",
             lambda: [p for p in pods.list()["items"] if p["metadata"]["name"].startswith("fl-")] == [])
    wait_for("the aggregation Service to be garbage-collected", lambda: gone(cs.core_v1().services(NS), "fl-aggregation"))
    # nothing comes back: once the GM has seen the pods of a job created now run (pod events come in order), it has
    # handled the old pods' delete events
    jobs.create({"apiVersion": "sedna.io/v1alpha1", "kind": "FederatedLearningJob",
                 "metadata": {"name": "marker", "namespace": NS},
                 "spec": {"aggregationWorker": {"model": {"name": "agg-model"},
                                                "template": {"spec": {"containers": [{"name": "a", "image": "a:1"}]}}},
                          "trainingWorkers": [trainer(1)]}})
    wait_for("the marker job to run", lambda: (jobs.get("marker").get("status") or {}).get("phase") == "Running")
    assert [p for p in pods.list()["items"] if p["metadata"]["name"].startswith("fl-")] == []


def test_federated_learning_job_completes(gm):
    cs = gm
    cs.sedna_v1alpha1().models(NS).create(model("m", "/models/m"))
    cs.sedna_v1alpha1().datasets(NS).create({
        "apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": "d", "namespace": NS},
        "spec": {"url": "/data/d.txt", "format": "txt", "nodeName": "edge-1"}})
    quick = {"metadata": {"annotations": {"sandbox.sedna.io/run-seconds": "1"}},
             "spec": {"containers": [{"name": "w", "image": "w:1"}]}}
    jobs = cs.sedna_v1alpha1().federated_learning_jobs(NS)
    jobs.create({"apiVersion": "sedna.io/v1alpha1", "kind": "FederatedLearningJob", "metadata": {"name": "done", "namespace": NS},
                 "spec": {"aggregationWorker": {"model": {"name": "m"}, "template": quick},
                          "trainingWorkers": [{"dataset": {"name": "d"}, "template": quick}]}})
    wait_for("the job to succeed", lambda: (jobs.get("done").get("status") or {}).get("phase") == "Succeeded", timeout=30)
    status = jobs.get("done")["status"]
    assert status["succeeded"] == 2 and status["completionTime"] and status["conditions"][-1]["type"] == "Complete"
    # the Events are recorded after the status write that the wait above saw
    wait_for("the job's Events", lambda: {"SuccessfulCreate", "Completed"}
             <= {e["reason"] for e in cs.core_v1().events(NS).list()["items"]}, timeout=10)
