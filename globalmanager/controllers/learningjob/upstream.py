"""Reports from the edge about an IL/LL job (Sedna's ``updateFromEdge``).

Accepted content: ``{"phase": train|eval|deploy, "status": ready|completed|failed|waiting, "input"?: {"model"?,
"models"?, "dataURL"?, "dataIndexURL"?, "outputDir"?}, "output"?: {"model"?, "models"?}}`` (phase and status in any
case; other fields ignored). It becomes an appended condition ``{type, stage, status: "True", message: "reported by
lc", data: JSON({input, output})}``. Anything else (a worker's ``running``, phase ``inference``, a field of the
wrong type) raises ``InvalidReport``: the edge link logs and counts it, as Go returns an error.

The write goes through the status subresource and changes only what the report owns (the appended condition, and
for LL ``knowledgeBase``), re-applied to a fresh copy on conflict, so a GM write never loses it. A report whose
condition the current cycle already has (same stage, type and data: a resend after a reconnect or a GM restart) is
applied once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from apis import meta
from globalmanager.runtime.edge import UpstreamMessage

from .conditions import Report, is_resent, parse_report, reported_condition

__all__ = ["StatusExtra", "apply_report"]

log = structlog.get_logger(__name__)

StatusExtra = Callable[[dict[str, Any], Report], bool]
"""``extra(status, report) -> changed``: more status fields a kind derives from a report (LL's knowledge base)."""


def apply_report(controller: Any, msg: UpstreamMessage, extra: StatusExtra | None = None) -> None:
    report = parse_report(msg.content)
    key = f"{msg.namespace}/{msg.name}"
    job = controller.get_job(key)
    if job is None:
        controller.log_report_dropped(msg, f"no such {controller.kind}")
        return
    condition = reported_condition(report, controller.now())
    outcome = {"appended": False}

    def mutate(obj: dict[str, Any]) -> bool:
        status = obj.get("status")
        if not isinstance(status, dict):
            status = obj["status"] = {}
        changed = extra(status, report) if extra is not None else False
        conditions = status.get("conditions") or []
        outcome["appended"] = not is_resent(conditions, condition)
        if outcome["appended"]:
            status["conditions"] = [*conditions, condition]
        return changed or outcome["appended"]

    written = controller.update_job_status(job, mutate)
    fields = {"controller": controller.name, "key": key, "node": msg.node, "stage": report.stage, "type": report.type}
    if not outcome["appended"]:
        log.info("resent report: its condition is recorded already", **fields)
    elif written is None:
        controller.log_report_dropped(msg, f"{controller.kind} is gone")
    else:
        log.info("report applied", uid=meta.uid(job), **fields)
