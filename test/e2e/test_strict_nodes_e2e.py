"""A typo'd node against a strict sandbox (issue 27 item 7), with real processes: the sandbox API server run with
``--strict-nodes --node edge-1`` and ``sedna-gm``. An IncrementalLearningJob whose workers are pinned to
``edge-nope`` (a node that does not exist) is not started: its condition says ``NodeNotFound`` naming the node and
where the job names it, with a Warning Event, both what ``kubectl describe`` shows; once the node registers, the job
goes on (its inference pod is created and the note is gone). A pod pinned to the unknown node stays Pending with a
``FailedScheduling`` Event."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import Processes, start_gm, start_sandbox, wait_for
from testkit.kubectl import MAIN_KUBECTL, Kubectl

from apis.clientset import Clientset

pytestmark = pytest.mark.e2e

NS = "default"
TIMEOUT = 30.0


@pytest.fixture
def strict(procs: Processes, tmp_path: Path) -> Iterator[tuple[str, Clientset]]:
    kubeconfig = tmp_path / "kubeconfig"
    start_sandbox(procs, kubeconfig, "--strict-nodes", "--node", "edge-1")
    cs = Clientset.from_kubeconfig(str(kubeconfig))
    config = tmp_path / "gm.yaml"
    config.write_text("controllers: [Dataset, Model, IncrementalLearning, JointInference, FederatedLearning]\n")
    start_gm(procs, "gm", str(kubeconfig), "--no-leader-elect", "--config", str(config), wait=True, timeout=TIMEOUT)
    yield str(kubeconfig), cs
    cs.close()


def _template(node: str) -> dict[str, Any]:
    return {"spec": {"nodeName": node, "containers": [{"name": "worker", "image": "kubeedge/worker:v1"}]}}


def _create(cs: Clientset, resource: str, kind: str, name: str, spec: dict[str, Any]) -> None:
    getattr(cs.sedna_v1alpha1(), resource)(NS).create(
        {"apiVersion": "sedna.io/v1alpha1", "kind": kind, "metadata": {"name": name, "namespace": NS}, "spec": spec})


def _create_job(cs: Clientset, worker_node: str) -> None:
    _create(cs, "datasets", "Dataset", "ds", {"url": "/data/index.txt", "format": "txt", "nodeName": "edge-1"})
    for role in ("initial", "deploy"):
        _create(cs, "models", "Model", role, {"url": f"/models/{role}/model.pb", "format": "pb"})
    _create(cs, "incremental_learning_jobs", "IncrementalLearningJob", "typo", {
        "dataset": {"name": "ds", "trainProb": 0.8},
        "initialModel": {"name": "initial"},
        "trainSpec": {"template": _template(worker_node), "trigger": {
            "condition": {"operator": ">", "threshold": 10, "metric": "num_of_samples"}}},
        "evalSpec": {"template": _template(worker_node)},
        "deploySpec": {"model": {"name": "deploy"}, "template": _template(worker_node),
                       "trigger": {"condition": {"operator": ">", "threshold": 0.1, "metric": "precision_delta"}},
                       "hardExampleMining": {"name": "IBT"}},
        "outputDir": "/output",
    })


def _last_condition(cs: Clientset) -> dict[str, Any]:
    job = cs.sedna_v1alpha1().incremental_learning_jobs(NS).get("typo")
    return ((job.get("status") or {}).get("conditions") or [{}])[-1]


def _warnings(cs: Clientset, name: str) -> list[dict[str, Any]]:
    return [e for e in cs.core_v1().events(NS).list()["items"]
            if e["involvedObject"]["name"] == name and e.get("type") == "Warning"]


def test_a_job_naming_an_unknown_node_says_so_until_the_node_exists(strict: tuple[str, Clientset],
                                                                      tmp_path: Path) -> None:
    kubeconfig, cs = strict
    _create_job(cs, "edge-nope")
    condition = wait_for("the job's NodeNotFound condition", lambda: _last_condition(cs),
                         check=lambda c: c.get("reason") == "NodeNotFound", timeout=TIMEOUT)
    assert "node edge-nope (spec.trainSpec.template.spec.nodeName) not found" in condition["message"]
    event = wait_for("the NodeNotFound Warning Event",
                     lambda: [e for e in _warnings(cs, "typo") if e["reason"] == "NodeNotFound"], timeout=TIMEOUT)[0]
    assert "edge-nope" in event["message"]
    assert cs.core_v1().pods(NS).list()["items"] == []  # nothing was started on a node that does not exist
    if MAIN_KUBECTL is not None:
        described = Kubectl(MAIN_KUBECTL, kubeconfig, tmp_path / "cache")("describe", "il", "typo").stdout
        assert "NodeNotFound" in described and "edge-nope" in described

    cs.core_v1().nodes().create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "edge-nope"}})
    pods = wait_for("the inference pod once the node exists", lambda: cs.core_v1().pods(NS).list()["items"],
                    timeout=TIMEOUT)
    assert pods[0]["spec"]["nodeName"] == "edge-nope"
    wait_for("the note cleared", lambda: _last_condition(cs), check=lambda c: c.get("reason") != "NodeNotFound",
             timeout=TIMEOUT)


def test_a_pod_for_an_unknown_node_stays_pending_with_a_failed_scheduling_event(
        strict: tuple[str, Clientset]) -> None:
    _, cs = strict
    cs.core_v1().pods(NS).create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "lost"},
                                  "spec": _template("edge-nope")["spec"]})
    event = wait_for("FailedScheduling", lambda: [e for e in _warnings(cs, "lost") if e["reason"] == "FailedScheduling"],
                     timeout=TIMEOUT)[0]
    assert 'pod is bound to node "edge-nope", which does not exist' in event["message"]
    assert cs.core_v1().pods(NS).get("lost")["status"]["phase"] == "Pending"


def _status(cs: Clientset, resource: str, name: str) -> dict[str, Any]:
    return getattr(cs.sedna_v1alpha1(), resource)(NS).get(name).get("status") or {}


def test_joint_inference_and_federated_learning_say_which_node_is_missing(strict: tuple[str, Clientset]) -> None:
    _, cs = strict
    _create(cs, "models", "Model", "small", {"url": "/models/small.pb", "format": "pb"})
    _create(cs, "models", "Model", "big", {"url": "/models/big.pb", "format": "pb"})
    _create(cs, "joint_inference_services", "JointInferenceService", "ji", {
        "edgeWorker": {"model": {"name": "small"}, "hardExampleMining": {"name": "IBT"}, "template": _template("edge-1")},
        "cloudWorker": {"model": {"name": "big"}, "template": _template("cloud-nope")},
    })
    _create(cs, "datasets", "Dataset", "fl-ds", {"url": "/data/fl.txt", "format": "txt", "nodeName": "edge-gone"})
    _create(cs, "federated_learning_jobs", "FederatedLearningJob", "fl", {
        "aggregationWorker": {"model": {"name": "big"}, "template": _template("edge-1")},
        "trainingWorkers": [{"dataset": {"name": "fl-ds"}, "template": _template("edge-1")}],
    })
    for name, node in (("ji", "cloud-nope"), ("fl", "edge-gone")):
        event = wait_for(f"{name}'s NodeNotFound Event",
                         lambda name=name: [e for e in _warnings(cs, name) if e["reason"] == "NodeNotFound"],
                         timeout=TIMEOUT)[0]
        assert f"node {node} (" in event["message"], event["message"]
    conditions = wait_for("ji's condition", lambda: _status(cs, "joint_inference_services", "ji").get("conditions"),
                          timeout=TIMEOUT)
    assert conditions[-1]["reason"] == "NodeNotFound" and "cloud-nope" in conditions[-1]["message"]
    assert cs.apps_v1().deployments(NS).list()["items"] == []
