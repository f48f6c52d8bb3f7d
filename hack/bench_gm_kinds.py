"""What ``hack.bench_gm`` creates and when each object counts as done: one builder per kind, the Models and Datasets
they name, and how N objects are split over the kinds."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hack import bench_gm_edge as il_edge

__all__ = ["EDGE_KINDS", "GO_KINDS", "IL_WORK_SECONDS", "KINDS", "MIX", "NS", "RUN_SECONDS", "Kind", "elastic_ai_job",
           "federated_learning_job", "incremental_learning_job", "joint_inference_service", "plan",
           "referenced_objects"]

NS = "bench"
RUN_SECONDS = "sandbox.sedna.io/run-seconds"


# -- what is created and what "done" means ---------------------------------------------------------------------------
def elastic_ai_job(name: str, run_seconds: float) -> dict[str, Any]:
    return {"apiVersion": "elasticdl.org/v1alpha1", "kind": "ElasticAIJob",
            "metadata": {"name": name, "namespace": NS, "annotations": {RUN_SECONDS: str(run_seconds)}},
            "spec": {"jobArgs": ["--model_zoo /model_zoo"], "master": {"image": "elasticdl:bench"}}}


def joint_inference_service(name: str, run_seconds: float) -> dict[str, Any]:
    def worker(model: str, node: str) -> dict[str, Any]:
        return {"model": {"name": model},
                "template": {"spec": {"nodeName": node, "containers": [{"name": "w", "image": "ji:bench"}]}}}

    edge = worker("little", "edge-1")
    edge["hardExampleMining"] = {"name": "IBT", "parameters": [{"key": "threshold", "value": "0.9"}]}
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "JointInferenceService",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"edgeWorker": edge, "cloudWorker": worker("big", "cloud-1")}}


def federated_learning_job(name: str, run_seconds: float) -> dict[str, Any]:
    steer = {"annotations": {RUN_SECONDS: str(run_seconds)}}

    def trainer(i: int) -> dict[str, Any]:
        return {"dataset": {"name": f"data-{i}"},
                "template": {"metadata": steer, "spec": {"nodeName": f"edge-{i}", "containers": [
                    {"name": "t", "image": "fl-train:bench"}]}}}

    return {"apiVersion": "sedna.io/v1alpha1", "kind": "FederatedLearningJob",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"aggregationWorker": {"model": {"name": "agg"}, "template": {"metadata": steer, "spec": {
                "nodeName": "cloud-1", "containers": [{"name": "a", "image": "fl-agg:bench"}]}}},
                "trainingWorkers": [trainer(1), trainer(2)]}}


def incremental_learning_job(name: str, run_seconds: float) -> dict[str, Any]:
    """A job for the edge nodes of ``hack.bench_gm_edge``: with their LCs and the worker simulator running it goes
    through one round, without them it stays at its first condition (``Train/Waiting``)."""
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "IncrementalLearningJob",
            "metadata": {"name": name, "namespace": NS}, "spec": il_edge.il_job_spec(run_seconds)}


def _phase_succeeded(obj: Mapping[str, Any]) -> bool:
    return (obj.get("status") or {}).get("phase") == "Succeeded"


def _last_condition_running(obj: Mapping[str, Any]) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return bool(conditions) and conditions[-1].get("type") == "Running"


@dataclass(frozen=True)
class Kind:
    controller: str  # the sedna-gm controller that reconciles it
    api_version: str
    prefix: str  # object names: <prefix>-<i>
    build: Callable[[str, float], dict[str, Any]]
    done: Callable[[Mapping[str, Any]], bool]


KINDS = {
    "ElasticAIJob": Kind("ElasticAIJob", "elasticdl.org/v1alpha1", "eaij", elastic_ai_job, _phase_succeeded),
    "JointInferenceService": Kind("JointInference", "sedna.io/v1alpha1", "ji", joint_inference_service,
                                  _last_condition_running),
    "FederatedLearningJob": Kind("FederatedLearning", "sedna.io/v1alpha1", "fl", federated_learning_job,
                                 _phase_succeeded),
    "IncrementalLearningJob": Kind("IncrementalLearning", "sedna.io/v1alpha1", "il", incremental_learning_job,
                                   il_edge.deploy_completed),
}
MIX = ("ElasticAIJob", "JointInferenceService", "FederatedLearningJob")
GO_KINDS = ("FederatedLearningJob", "JointInferenceService", "IncrementalLearningJob")  # Go Sedna has no ElasticAIJob
EDGE_KINDS = ("IncrementalLearningJob",)  # run with LCs and the worker simulator (hack.bench_gm_edge) unless told not
IL_WORK_SECONDS = 5.0  # an IncrementalLearningJob's train/eval work by default (test/interop: WORK_SECONDS)


def referenced_objects() -> list[dict[str, Any]]:
    """The Models and Datasets the mixed kinds name (shared by all of them)."""
    objs: list[dict[str, Any]] = [
        {"apiVersion": "sedna.io/v1alpha1", "kind": "Model", "metadata": {"name": name, "namespace": NS},
         "spec": {"url": f"/models/{name}.pb", "format": "pb"}} for name in ("little", "big", "agg")]
    objs += [{"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": f"data-{i}", "namespace": NS},
              "spec": {"url": f"/data/{i}.txt", "format": "txt", "nodeName": f"edge-{i}"}} for i in (1, 2)]
    return objs


def plan(total: int, mix: bool, kind: str = "ElasticAIJob") -> dict[str, int]:
    """How many objects of each kind: all of ``kind``, or ``total`` split evenly over ``MIX``."""
    if not mix:
        return {kind: total}
    share, extra = divmod(total, len(MIX))
    return {k: share + (1 if i < extra else 0) for i, k in enumerate(MIX)}
