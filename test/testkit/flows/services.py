"""Flows of the service kinds, whose workers run for good: JointInference, FeatureExtraction, ObjectSearch,
ObjectTracking. Each reaches ``Running``, has a worker deleted from under it (recreated), its spec changed (the
Deployments updated in place or scaled, tracking pods replaced, an HPA updated and deleted), and is deleted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apis import meta
from apis.resources import DEPLOYMENTS, HORIZONTAL_POD_AUTOSCALERS, PODS, SERVICES

from .base import Flow, FlowRun, Step
from .checks import all_of, delete_owned, label_templates, last_condition_is, recreated, replaced

__all__ = ["SERVICE_FLOWS"]

ROLLOUT_LABEL = "sedna-e2e/rollout"
TRACKING_INDEX = "sedna.io/tracking-worker-index"
running = last_condition_is("Running")


def _rolled_out(generation: int) -> Callable[[FlowRun], bool]:
    def check(run: FlowRun) -> bool:
        current = run.current()
        conditions = (current.get("status") or {}).get("conditions") or []
        return current["metadata"].get("generation", 1) >= generation and run.idle() and bool(conditions) and (
            conditions[-1].get("type") == "Running")
    return check


def _deployment(name: str, replicas: int | None = None, label: str | None = None) -> Callable[[FlowRun], bool]:
    """Deployment ``name`` has ``replicas`` and its template the rollout ``label`` (when given)."""
    def check(run: FlowRun) -> bool:
        found = [d for d in run.owned(DEPLOYMENTS) if meta.name(d) == name]
        if not found:
            return False
        spec = found[0].get("spec") or {}
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        return (replicas is None or spec.get("replicas") == replicas) and (
            label is None or labels.get(ROLLOUT_LABEL) == label)
    return check


def _tracking(index: int) -> Callable[[dict[str, Any]], bool]:
    return lambda pod: meta.annotations(pod).get(TRACKING_INDEX) == str(index)


def _tracking_pods(labels: dict[int, str | None]) -> Callable[[FlowRun], bool]:
    """Exactly one running tracking pod per index of ``labels``, with that rollout label, and no other."""
    def check(run: FlowRun) -> bool:
        pods = run.owned(PODS)
        tracking = [p for p in pods if TRACKING_INDEX in meta.annotations(p)]
        if len(tracking) != len(labels):
            return False
        for index, label in labels.items():
            mine = [p for p in tracking if _tracking(index)(p)]
            if len(mine) != 1 or (mine[0].get("status") or {}).get("phase") != "Running":
                return False
            if meta.labels(mine[0]).get(ROLLOUT_LABEL) != label:
                return False
        return True
    return check


# -- JointInference ---------------------------------------------------------------------------------------------------
def _ji_scale_up(obj: dict[str, Any]) -> None:
    """A new edge template and a larger HPA: the edge Deployment and the HPA are updated."""
    label_templates("2")(obj)
    obj["spec"]["edgeWorker"]["hpa"]["maxReplicas"] = 3


def _ji_drop_hpa(obj: dict[str, Any]) -> None:
    """Another edge template and no HPA: the Deployment is updated again (the same Event, now patched: count 2)
    and the HPA deleted."""
    label_templates("3")(obj)
    del obj["spec"]["edgeWorker"]["hpa"]


def _hpa_gone(run: FlowRun) -> bool:
    return _rolled_out(3)(run) and not run.client(HORIZONTAL_POD_AUTOSCALERS).list()["items"]


# -- FeatureExtraction ------------------------------------------------------------------------------------------------
FE_DEPLOYMENT = "feature-extraction-deployment-fe"


def _fe_scale(obj: dict[str, Any]) -> None:
    """Only ``replicas`` changed: the Deployment is scaled, its template left alone."""
    obj["spec"]["replicas"] = 2


# -- ObjectSearch / ObjectTracking ------------------------------------------------------------------------------------
def _os_change(obj: dict[str, Any]) -> None:
    """Tracking worker 0 and the user worker get a new template, the ReID workers one more replica: the tracking
    pod is replaced, the user Deployment updated, the ReID Deployment scaled."""
    label_templates("2", lambda spec: spec["trackingWorkers"][0])(obj)
    label_templates("2", lambda spec: spec["userWorker"])(obj)
    obj["spec"]["reidWorkers"]["replicas"] = 3


def _drop_tracking_worker(obj: dict[str, Any]) -> None:
    del obj["spec"]["trackingWorkers"][1]


def _ot_change(obj: dict[str, Any]) -> None:
    label_templates("2", lambda spec: spec["trackingWorkers"][0])(obj)
    obj["spec"]["reidWorkers"]["replicas"] = 2


SERVICE_FLOWS: dict[str, Flow] = {
    "JointInference": Flow("jointinferenceservice.yaml", running, steps=(
        Step(None, all_of(recreated(DEPLOYMENTS), running),
             action=delete_owned(DEPLOYMENTS, "helmet-detection-inference-deployment-edge")),
        Step(_ji_scale_up, _rolled_out(2)),
        Step(_ji_drop_hpa, _hpa_gone),
    )),
    "FeatureExtraction": Flow("featureextractionservice.yaml", running, steps=(
        Step(None, all_of(recreated(DEPLOYMENTS), running), action=delete_owned(DEPLOYMENTS, FE_DEPLOYMENT)),
        Step(None, all_of(recreated(SERVICES), running), action=delete_owned(SERVICES, "feature-extraction-fe")),
        Step(label_templates("2"), all_of(_deployment(FE_DEPLOYMENT, label="2"), _rolled_out(2))),
        Step(_fe_scale, all_of(_deployment(FE_DEPLOYMENT, replicas=2, label="2"), _rolled_out(3))),
    )),
    "ObjectSearch": Flow("objectsearchservice.yaml", running, steps=(
        Step(None, all_of(replaced(_tracking(0)), _tracking_pods({0: None, 1: None}), running),
             action=delete_owned(PODS, pick=_tracking(0))),
        Step(None, all_of(recreated(DEPLOYMENTS), running),
             action=delete_owned(DEPLOYMENTS, "object-search-deployment-reidworker")),
        Step(_os_change, all_of(_tracking_pods({0: "2", 1: None}),
                                _deployment("object-search-deployment-userworker", label="2"),
                                _deployment("object-search-deployment-reidworker", replicas=3), _rolled_out(2))),
        Step(_drop_tracking_worker, all_of(_tracking_pods({0: "2"}), _rolled_out(3))),
    )),
    "ObjectTracking": Flow("objecttrackingservice.yaml", running, steps=(
        Step(None, all_of(recreated(DEPLOYMENTS), running),
             action=delete_owned(DEPLOYMENTS, "object-tracking-deployment-reidworker")),
        Step(None, all_of(replaced(_tracking(0)), _tracking_pods({0: None}), running),
             action=delete_owned(PODS, pick=_tracking(0))),
        Step(_ot_change, all_of(_tracking_pods({0: "2"}), _deployment("object-tracking-deployment-reidworker",
                                                                       replicas=2), _rolled_out(2))),
    )),
}
