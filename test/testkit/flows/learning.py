"""Flows of IncrementalLearning and LifelongLearning: the samples' triggers made to fire on the flow's Dataset
(samples without a time window, a threshold the Dataset's 4 training samples pass, checked every second), then whole
Train → Eval → Deploy rounds played by the LCs of the edge nodes and the worker simulator: the GM creates the
inference, train and eval pods, patches ``sedna.io/<Stage>`` (and IL's hot-update config) on the job, appends the
conditions; a second round, after a spec change and new samples, restarts the inference pod (a pod deleted by the
controller). The job's first status write is answered 409 once, so the controller's re-read happens too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apis import meta
from apis.resources import PODS

from ..wait import wait_for
from .base import Flow, FlowRun, Step
from .checks import all_of, arm_status_conflict, conflict_taken, count_conditions, grow_dataset

__all__ = ["LEARNING_FLOWS"]

HOT_UPDATE_CONFIG = "sedna.io/model-hot-update-config"


def _trigger(operator: str, threshold: int) -> dict[str, Any]:
    return {"checkPeriodSeconds": 1, "condition": {"operator": operator, "threshold": threshold,
                                                   "metric": "num_of_samples"}}


def _il_adjust(obj: dict[str, Any]) -> None:
    """Train on 4 new samples at any hour (the sample waits for 500 at night); the deploy trigger stays: the
    simulated eval scores the new model 0.2 higher (``precision_delta`` > 0.1)."""
    obj["spec"]["trainSpec"]["trigger"] = _trigger(">", 3)


def _il_without_hot_update(obj: dict[str, Any]) -> None:
    """Deploy by restarting the inference pod (its Deploy/Ready deletes the old pod and creates one)."""
    obj["spec"]["deploySpec"]["model"]["hotUpdateEnabled"] = False


def _ll_adjust(obj: dict[str, Any]) -> None:
    """Train on 4 new samples at any hour; the knowledge base on the node (S3 is not simulated)."""
    obj["spec"]["trainSpec"]["trigger"] = _trigger("ge", 4)
    obj["spec"]["outputDir"] = "/lifelong_learning/atcii/output"


def _ll_lower_threshold(obj: dict[str, Any]) -> None:
    obj["spec"]["trainSpec"]["trigger"] = _trigger("ge", 2)


def _inference_pods(run: FlowRun) -> list[dict[str, Any]]:
    label = f"{run.obj['kind'].lower()}.sedna.io/worker-type"
    return [p for p in run.owned(PODS) if meta.labels(p).get(label) == "inference"]


def _inference_running(run: FlowRun) -> bool:
    return any((p.get("status") or {}).get("phase") == "Running" for p in _inference_pods(run))


def _remember_inference_pod(run: FlowRun) -> None:
    """The first round's inference pod, once it is the only one and runs (a restart at Deploy may still be under
    way when the round's conditions are all there: the old pod deleted, the new one throttled for a moment)."""
    pods = wait_for("the first round's inference pod", lambda: _inference_pods(run),
                    check=lambda pods: len(pods) == 1 and (pods[0].get("status") or {}).get("phase") == "Running")
    run.memo["inference"] = meta.name(pods[0])


def _inference_restarted(run: FlowRun) -> bool:
    """The inference pod of the first round was deleted by the controller and another one runs."""
    pods = _inference_pods(run)
    return bool(pods) and all(meta.name(p) != run.memo["inference"] for p in pods) and _inference_running(run)


def _annotated(*keys: str) -> Callable[[FlowRun], bool]:
    return lambda run: all(key in meta.annotations(run.current()) for key in keys)


def _next_round(run: FlowRun) -> None:
    _remember_inference_pod(run)
    grow_dataset()(run)


def _idle(run: FlowRun) -> bool:
    return run.idle()


LEARNING_FLOWS: dict[str, Flow] = {
    "IncrementalLearning": Flow(
        "incrementallearningjob.yaml",
        all_of(count_conditions("Deploy", "Completed", 1), _inference_running, conflict_taken("incrementallearningjobs"),
               _annotated("sedna.io/Train", "sedna.io/Eval", "sedna.io/Deploy", HOT_UPDATE_CONFIG)),
        adjust=_il_adjust, setup=arm_status_conflict("incrementallearningjobs"),
        steps=(Step(_il_without_hot_update, all_of(count_conditions("Deploy", "Completed", 2), _inference_restarted,
                                                   _idle),
                    action=_next_round),)),
    "LifelongLearning": Flow(
        "lifelonglearningjob.yaml",
        all_of(count_conditions("Deploy", "Completed", 1), _inference_running, conflict_taken("lifelonglearningjobs"),
               _annotated("sedna.io/Train", "sedna.io/Eval")),
        adjust=_ll_adjust, setup=arm_status_conflict("lifelonglearningjobs"),
        steps=(Step(_ll_lower_threshold, all_of(count_conditions("Deploy", "Completed", 2), _inference_restarted,
                                                _idle),
                    action=_next_round),)),
}
