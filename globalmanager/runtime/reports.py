"""What the edge's reports (``{"phase", "status", "input"?, "output"?}``, relayed by an LC from a worker) become in the
status of a service or job kind. Each writes only its own fields (status subresource, re-read on conflict), so a GM
status write never loses them and they never lose the GM's.

* ``owner_info_metrics(controller, msg)`` (JointInference, FeatureExtraction; Go's ``upstream.go``):
  ``output.ownerInfo`` without ``startTime``/``updateTime`` → ``status.metrics`` (``convert_map_to_metrics``). A
  report without ``ownerInfo`` changes nothing.
* ``report_condition(controller, msg)`` (Reid, VideoAnalytics; Go parses and discards them): the report becomes a
  condition of the type its ``status`` names (``ready`` → ``Ready``, ``running`` → ``Running``, ``completed`` →
  ``Completed``, ``failed`` → ``Failed``, ``waiting`` → ``Waiting``), reason ``ReportedByEdge``, ``data`` = the
  report as JSON. Reports of the same type in a row update that condition (``lastHeartbeatTime``, ``data``) instead of
  appending, so a worker reporting every period keeps the list short. Such a condition never finishes the job
  (``jobstatus.REPORTED_BY_EDGE``): the GM decides that from the pods. A report with another ``status`` is dropped
  (logged with its node and object).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .edge import UpstreamMessage
from .jobstatus import REPORTED_BY_EDGE
from .status import convert_map_to_metrics, go_json, last_condition

if TYPE_CHECKING:
    from .controller import BaseController

__all__ = ["REPORT_CONDITION_TYPES", "owner_info_metrics", "report_condition"]

_IGNORED_KEYS = ("startTime", "updateTime")
REPORT_CONDITION_TYPES = {
    "ready": "Ready", "running": "Running", "completed": "Completed", "failed": "Failed", "waiting": "Waiting",
}


def owner_info_metrics(controller: BaseController, msg: UpstreamMessage) -> None:
    output = msg.content.get("output")
    info = output.get("ownerInfo") if isinstance(output, Mapping) else None
    if not isinstance(info, Mapping) or not info:
        controller.log_report_dropped(msg, "no output.ownerInfo in the report")
        return
    metrics = convert_map_to_metrics({k: v for k, v in info.items() if k not in _IGNORED_KEYS})
    obj = controller.get_job(f"{msg.namespace}/{msg.name}")
    if obj is None:
        controller.log_report_dropped(msg, f"no such {controller.kind}")
        return

    def mutate(current: dict[str, Any]) -> bool:
        status = current.setdefault("status", {})
        if status.get("metrics") == metrics:
            return False
        status["metrics"] = metrics
        return True

    controller.update_job_status(obj, mutate)


def report_condition(controller: BaseController, msg: UpstreamMessage) -> None:
    reported = msg.content.get("status")
    ctype = REPORT_CONDITION_TYPES.get(str(reported).lower()) if isinstance(reported, str) else None
    if ctype is None:
        controller.log_report_dropped(msg, f"status {reported!r} is none of {', '.join(REPORT_CONDITION_TYPES)}")
        return
    job = controller.get_job(f"{msg.namespace}/{msg.name}")
    if job is None:
        controller.log_report_dropped(msg, f"no such {controller.kind}")
        return
    data = go_json({k: msg.content[k] for k in ("phase", "status", "input", "output") if k in msg.content})
    now = controller.now()
    phase = msg.content.get("phase")
    message = f"reported by the edge (node {msg.node}" + (f", phase {phase})" if phase else ")")

    def mutate(current: dict[str, Any]) -> bool:
        conditions = current.setdefault("status", {}).setdefault("conditions", [])
        last = last_condition(conditions)
        if last is not None and last.get("reason") == REPORTED_BY_EDGE and last.get("type") == ctype:
            if last.get("data") == data and last.get("message") == message:
                return False
            last.update(lastHeartbeatTime=now, message=message, data=data)
            return True
        conditions.append({"type": ctype, "status": "True", "lastHeartbeatTime": now, "lastTransitionTime": now,
                           "reason": REPORTED_BY_EDGE, "message": message, "data": data})
        return True

    controller.update_job_status(job, mutate)
