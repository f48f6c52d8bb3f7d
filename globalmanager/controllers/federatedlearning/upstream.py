"""Reports from the edge about a FederatedLearningJob (Sedna's ``upstream.go``): ``{"phase", "status", "output":
{"models": [{"metrics": {...}, ...}], "ownerInfo": {"currentRound": n, "updateTime": t}}}``.

* ``output.models[0].metrics`` (non-empty) → the aggregation Model's ``status.metrics`` (``convert_map_to_metrics``)
  and ``status.updateTime``.
* ``ownerInfo.currentRound`` > 0 → a ``Training`` condition (reason ``DoTraining``, message
  ``Round <n> reaches at <updateTime>``) appended once per report: a resent report (an LC reconnecting, a resent
  frame: the same round and updateTime) appends nothing, while the rounds of a run started again (a spec change, an
  aggregator restart: round 1 again at a new updateTime) are recorded.
Only those fields are written (status subresource, re-read on conflict), so a GM status write never loses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from apis import errors, meta
from apis.resources import MODELS
from globalmanager.runtime.edge import UpstreamMessage
from globalmanager.runtime.status import convert_map_to_metrics, update_status

if TYPE_CHECKING:
    from .controller import FederatedLearningController

__all__ = ["COND_TRAINING", "update_from_edge"]

COND_TRAINING = "Training"


def _round(info: Any) -> int | None:
    value = info.get("currentRound") if isinstance(info, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        return None
    return int(value)


def update_from_edge(controller: FederatedLearningController, msg: UpstreamMessage) -> None:
    output = msg.content.get("output")
    if output is None:
        return
    if not isinstance(output, Mapping):
        controller.log_report_dropped(msg, "output is not an object")
        return
    job = controller.get_job(f"{msg.namespace}/{msg.name}")
    if job is None:
        controller.log_report_dropped(msg, "no such FederatedLearningJob")
        return
    models = output.get("models")
    first = models[0] if isinstance(models, list) and models and isinstance(models[0], Mapping) else {}
    metrics = first.get("metrics")
    if isinstance(metrics, Mapping) and metrics:
        _update_model_metrics(controller, msg, job, convert_map_to_metrics(metrics))
    info = output.get("ownerInfo")
    current_round = _round(info)
    if info is not None and current_round is None:
        controller.log_report_dropped(msg, "ownerInfo.currentRound is not an integer")
    elif info is not None and current_round is not None and current_round > 0:
        _append_round(controller, job, current_round, str(info.get("updateTime") or ""))


def _update_model_metrics(
    controller: FederatedLearningController, msg: UpstreamMessage, job: Mapping[str, Any], metrics: list[Any]
) -> None:
    name = str((((job.get("spec") or {}).get("aggregationWorker") or {}).get("model") or {}).get("name") or "")
    try:
        model = controller.reference_listers[MODELS].namespaced(meta.namespace(job)).get(name)
    except errors.NotFoundError:
        controller.log_report_dropped(msg, f"aggregation model {meta.namespace(job)}/{name} not found")
        return
    now = controller.now()

    def mutate(obj: dict[str, Any]) -> bool:
        status = obj.setdefault("status", {})
        status["metrics"] = metrics
        status["updateTime"] = now
        return True

    update_status(controller.clientset.resource(MODELS, meta.namespace(job)), model, mutate)


def _append_round(controller: FederatedLearningController, job: Mapping[str, Any], n: int, update_time: str) -> None:
    message = f"Round {n} reaches at {update_time}"
    now = controller.now()
    cond = {"type": COND_TRAINING, "status": "True", "lastProbeTime": now, "lastHeartbeatTime": now,
            "reason": "DoTraining", "message": message}

    def mutate(obj: dict[str, Any]) -> bool:
        conditions = obj.setdefault("status", {}).setdefault("conditions", [])
        if any(c.get("type") == COND_TRAINING and c.get("message") == message for c in conditions):
            return False  # this report is recorded already
        conditions.append(cond)
        return True

    controller.update_job_status(job, mutate)
