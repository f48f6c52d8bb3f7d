"""Reports from the edge about an IL/LL job (Sedna's ``updateFromEdge``).

Accepted content: ``{"phase": train|eval|deploy, "status": ready|completed|failed|waiting, "input"?: {"model"?,
"models"?, "dataURL"?, "dataIndexURL"?, "outputDir"?}, "output"?: {"model"?, "models"?}}`` (phase and status in any
case; other fields ignored), relayed by a node entitled to it (``entitlement``: a worker's report from that
worker's node, the LC's own from the job's resident node or a node running one of its workers; else
``NotEntitled``). It becomes an appended condition ``{type, stage, status: "True", message: "reported by
lc", data: JSON({input, output})}``; with our LC's optional ``message`` (why a stage failed or did not deploy),
``"reported by lc: <message>"`` and a Warning Event (reason ``<Stage><Type>``, e.g. ``DeployFailed``, or the
report's optional ``reason``, e.g. ``PathOutsideJob``, which the condition carries too). Anything
else (a worker's ``running``, phase ``inference``, a field of the wrong type) raises ``InvalidReport``: the edge link
logs and counts it, as Go returns an error.

The write goes through the status subresource and changes only what the report owns (the appended condition, and
for LL ``knowledgeBase``), re-applied to a fresh copy on conflict, so a GM write never loses it. A report whose
condition the current cycle already has (same stage, type and data: a resend after a reconnect or a GM restart) is
applied once. A report that does not answer the job's current condition (``conditions.out_of_stage``: e.g. a restarted
inference worker reporting ``deploy completed`` again during the next round's Eval) is not applied: logged with the
job's current stage and counted (``sedna_gm_controller_edge_reports_total{result="out_of_stage"}``), except a
late ``Completed`` with an output whose stage the GM ended from the pod without it (the LC was cut off when the worker
reported): its data fills in that ``Completed`` (``conditions.ended_without_report``) and the flow goes on from
where it is, so the trained model or the metrics are never lost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from apis import meta
from apis.record import WARNING
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.edge import UpstreamMessage

from .conditions import (
    Report,
    ended_without_report,
    is_resent,
    out_of_stage,
    parse_report,
    reported_condition,
)
from .entitlement import check_entitled

__all__ = ["APPLIED", "OUT_OF_STAGE", "RESENT", "StatusExtra", "apply_report", "from_edge"]

log = structlog.get_logger(__name__)

APPLIED, RESENT, OUT_OF_STAGE = "applied", "resent", "out_of_stage"  # results counted per controller

StatusExtra = Callable[[dict[str, Any], Report], bool]
"""``extra(status, report) -> changed``: more status fields a kind derives from a report (LL's knowledge base)."""


def from_edge(ctx: KindContext[Any], msg: UpstreamMessage) -> None:
    """IL's upstream handler (``Kind.from_edge``): the report's condition, nothing else."""
    apply_report(ctx, msg)


def apply_report(ctx: KindContext[Any], msg: UpstreamMessage, extra: StatusExtra | None = None) -> None:
    """Apply one LC report to its job; ``extra`` derives more status fields from it in the same write."""
    report = parse_report(msg.content)
    key = f"{msg.namespace}/{msg.name}"
    job = ctx.get_job(key)
    if job is None:
        ctx.log_report_dropped(msg, f"no such {ctx.kind}")
        return
    check_entitled(ctx, job, msg, report)
    condition = reported_condition(report, ctx.now())
    outcome = {"result": APPLIED, "why": "", "at": "", "filled": ""}

    def mutate(obj: dict[str, Any]) -> bool:
        status = obj.get("status")
        if not isinstance(status, dict):
            status = obj["status"] = {}
        conditions = status.get("conditions") or []
        last = conditions[-1] if conditions else {}
        outcome.update(result=APPLIED, why="", filled="", at=f"{last.get('stage', '')}/{last.get('type', '')}")
        if is_resent(conditions, condition):
            outcome["result"] = RESENT
            return False
        why = out_of_stage(conditions, report)
        ended = ended_without_report(conditions, report) if why else None
        if why and ended is None:
            outcome.update(result=OUT_OF_STAGE, why=why)
            return False
        if extra is not None:
            extra(status, report)
        if ended is None:
            status["conditions"] = [*conditions, condition]
        else:  # the GM ended the stage from its pod before this report came: the report's data fills that end in
            filled = {k: v for k, v in conditions[ended].items() if k != "reason"}  # a note is re-made by a sync
            filled.update(message=condition["message"], data=condition["data"],
                          lastHeartbeatTime=condition["lastHeartbeatTime"])
            status["conditions"] = [*conditions[:ended], filled, *conditions[ended + 1:]]
            outcome["filled"] = "yes"
        return True

    written = ctx.update_job_status(job, mutate)
    fields = {"controller": ctx.name, "key": key, "node": msg.node, "stage": report.stage, "type": report.type}
    if outcome["result"] == APPLIED and written is None:
        ctx.log_report_dropped(msg, f"{ctx.kind} is gone")
        return
    ctx.metrics.edge_reports.labels(controller=ctx.name, result=outcome["result"]).inc()
    if outcome["result"] == RESENT:
        log.info("resent report: its condition is recorded already", **fields)
    elif outcome["result"] == OUT_OF_STAGE:
        log.warning("report not applied: it does not answer the job's current stage", current=outcome["at"],
                    reason=outcome["why"], **fields)
    elif outcome["filled"]:
        log.info("late report applied to the stage's end the GM recorded from its pod", uid=meta.uid(job),
                 current=outcome["at"], **fields)
    else:
        log.info("report applied", uid=meta.uid(job), **fields)
        if report.reason:  # the LC says why a stage failed or did nothing: kubectl describe shows it
            ctx.events.event(job, WARNING, report.event_reason or f"{report.stage}{report.type}", report.reason)
