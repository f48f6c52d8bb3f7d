"""Reports from the edge about a FederatedLearningJob (Sedna's ``upstream.go``): ``{"phase", "status", "output":
{"models": [{"metrics": {...}, ...}], "ownerInfo": {"currentRound": n, "updateTime": t}}}``.

* ``output.models[0].metrics`` (non-empty) → the aggregation Model's ``status.metrics`` (``convert_map_to_metrics``)
  and ``status.updateTime``.
* ``ownerInfo.currentRound`` > 0 → the job's one ``Training`` condition (reason ``DoTraining``, message
  ``Round <n> reaches at <updateTime>``) shows the latest report, and each report is recorded as a Normal Event
  (reason ``DoTraining``, the same message): Go appends a condition per report, without bound. A resent report (an
  LC reconnecting: the same round and updateTime) changes nothing; one older than the condition's (Sedna's
  ``%Y-%m-%d %H:%M:%S`` updateTimes compare) is not shown over it, while the rounds of a run started again (a spec
  change, an aggregator restart: round 1 again at a later updateTime) are.
Only those fields are written (status subresource, re-read on conflict), so a GM status write never loses them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from apis import errors, meta
from apis.meta import Obj
from apis.record import NORMAL
from apis.resources import MODELS
from apis.sedna.v1alpha1 import FLJobConditionType
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.edge import UpstreamMessage
from globalmanager.runtime.status import convert_map_to_metrics, update_status

from .refs import model_names, readable_spec

__all__ = ["COND_TRAINING", "REASON_TRAINING", "from_edge"]

COND_TRAINING = FLJobConditionType.TRAINING
REASON_TRAINING = "DoTraining"
_ROUND_MESSAGE = re.compile(r"^Round -?\d+ reaches at (.*)$", re.DOTALL)
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")  # Sedna's updateTime: compares as text

Ctx = KindContext[None]


def _round(info: Any) -> int | None:
    value = info.get("currentRound") if isinstance(info, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        return None
    return int(value)


def from_edge(ctx: Ctx, msg: UpstreamMessage) -> None:
    output = msg.content.get("output")
    if output is None:
        return
    if not isinstance(output, Mapping):
        ctx.log_report_dropped(msg, "output is not an object")
        return
    job = ctx.get_job(f"{msg.namespace}/{msg.name}")
    if job is None:
        ctx.log_report_dropped(msg, "no such FederatedLearningJob")
        return
    models = output.get("models")
    first = models[0] if isinstance(models, list) and models and isinstance(models[0], Mapping) else {}
    metrics = first.get("metrics")
    if isinstance(metrics, Mapping) and metrics:
        _update_model_metrics(ctx, msg, job, convert_map_to_metrics(metrics))
    info = output.get("ownerInfo")
    current_round = _round(info)
    if info is not None and current_round is None:
        ctx.log_report_dropped(msg, "ownerInfo.currentRound is not an integer")
    elif info is not None and current_round is not None and current_round > 0:
        _record_round(ctx, job, current_round, str(info.get("updateTime") or ""))


def _update_model_metrics(ctx: Ctx, msg: UpstreamMessage, job: Obj, metrics: list[Any]) -> None:
    spec = readable_spec(job)
    if spec is None:
        ctx.log_report_dropped(msg, "the job's spec is invalid: no aggregation model to update")
        return
    name = model_names(spec)[0]
    try:
        model = ctx.lister(MODELS).namespaced(meta.namespace(job)).get(name)
    except errors.NotFoundError:
        ctx.log_report_dropped(msg, f"aggregation model {meta.namespace(job)}/{name} not found")
        return
    now = ctx.now()

    def mutate(obj: dict[str, Any]) -> bool:
        status = obj.setdefault("status", {})
        status["metrics"] = metrics
        status["updateTime"] = now
        return True

    update_status(ctx.clientset.resource(MODELS, meta.namespace(job)), model, mutate)


def _shown_time(condition: Mapping[str, Any] | None) -> str:
    """The updateTime in a ``Training`` condition's message (``""`` when none)."""
    match = _ROUND_MESSAGE.match(str((condition or {}).get("message") or ""))
    return match.group(1) if match else ""


def _record_round(ctx: Ctx, job: Obj, n: int, update_time: str) -> None:
    message = f"Round {n} reaches at {update_time}"
    now = ctx.now()
    cond = {"type": COND_TRAINING, "status": "True", "lastProbeTime": now, "lastHeartbeatTime": now,
            "reason": REASON_TRAINING, "message": message}
    def mutate(obj: dict[str, Any]) -> bool:
        status = obj.setdefault("status", {})
        conditions = status.get("conditions") or []
        shown = [c for c in conditions if c.get("type") == COND_TRAINING]
        if any(c.get("message") == message for c in shown[-1:]) and len(shown) == 1:
            return False  # this report is shown already (a resend)
        previous = _shown_time(shown[-1] if shown else None)
        if _TIME.match(update_time) and _TIME.match(previous) and update_time < previous:
            return False  # older than the report shown (a late resend through another node's LC)
        status["conditions"] = [*(c for c in conditions if c.get("type") != COND_TRAINING), cond]
        return True

    if ctx.update_job_status(job, mutate) is not None:
        ctx.events.event(job, NORMAL, REASON_TRAINING, message)
