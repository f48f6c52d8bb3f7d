"""What the edge's reports (``{"phase", "status", "input"?, "output"?}``, relayed by an LC from a worker) become in the
status of a service or job kind. Each writes only its own fields (status subresource, re-read on conflict), so a GM
status write never loses them and they never lose the GM's.

* ``owner_info_metrics(ctx, msg)`` (JointInference, FeatureExtraction; Go's ``upstream.go``):
  ``output.ownerInfo`` without ``startTime``/``updateTime`` → ``status.metrics`` (``convert_map_to_metrics``). A
  report without ``ownerInfo`` changes nothing.
* ``report_condition(ctx, msg)`` (Reid, VideoAnalytics; Go parses and discards them): the report becomes a
  condition of the type its ``status`` names (``ready`` → ``Ready``, ``running`` → ``Running``, ``completed`` →
  ``Completed``, ``failed`` → ``Failed``, ``waiting`` → ``Waiting``), reason ``ReportedByEdge``, ``data`` = the
  report as JSON. Reports of the same type in a row update that condition (``lastHeartbeatTime``, ``data``) instead of
  appending, so a worker reporting every period keeps the list short, and a report of a type reported before
  replaces that earlier condition (at most one per type: the list stays bounded however long the worker reports
  and whatever it alternates between; Go discards these reports). Such a condition never finishes the job
  (``jobstatus.REPORTED_BY_EDGE``): the GM decides that from the pods. A report with another ``status`` is dropped
  (logged with its node and object).
* ``report_too_large(ctx, msg, exc)`` (every kind, from ``JobController``'s upstream guard when writing a
  report failed because the object would be larger than the API server accepts: ``is_too_large``): the report is not
  lost silently. The job gets a condition saying so (IL/LL: ``{stage: <the report's phase>, type: Failed}``, as if
  the worker had failed, so the round moves on; other kinds: type ``ReportTooLarge``), reason ``ReportTooLarge``, and
  a Warning Event with the same message. A worker resending such a report on its period finds that condition last:
  it is updated (message, heartbeat), not appended again, and no other Event is recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

from apis import errors
from apis.sedna.constants import COMPLETED, FAILED, READY, RUNNING, WAITING

from .edge import UpstreamMessage
from .jobstatus import REPORTED_BY_EDGE
from .status import convert_map_to_metrics, go_json, last_condition

if TYPE_CHECKING:
    from .context import KindContext

__all__ = ["REPORT_CONDITION_TYPES", "REPORT_TOO_LARGE", "is_too_large", "owner_info_metrics", "report_condition",
           "report_too_large"]

REPORT_TOO_LARGE = "ReportTooLarge"
_STAGED_KINDS = ("IncrementalLearningJob", "LifelongLearningJob")  # conditions carry a stage; Failed ends that stage

_IGNORED_KEYS = ("startTime", "updateTime")
REPORT_CONDITION_TYPES = {t.lower(): t for t in (READY, RUNNING, COMPLETED, FAILED, WAITING)}


def owner_info_metrics(ctx: KindContext[Any], msg: UpstreamMessage) -> None:
    output = msg.content.get("output")
    info = output.get("ownerInfo") if isinstance(output, Mapping) else None
    if not isinstance(info, Mapping) or not info:
        ctx.log_report_dropped(msg, "no output.ownerInfo in the report")
        return
    metrics = convert_map_to_metrics({k: v for k, v in info.items() if k not in _IGNORED_KEYS})
    obj = ctx.get_job(f"{msg.namespace}/{msg.name}")
    if obj is None:
        ctx.log_report_dropped(msg, f"no such {ctx.kind}")
        return

    def mutate(current: dict[str, Any]) -> bool:
        status = current.setdefault("status", {})
        if status.get("metrics") == metrics:
            return False
        status["metrics"] = metrics
        return True

    ctx.update_job_status(obj, mutate)


def report_condition(ctx: KindContext[Any], msg: UpstreamMessage) -> None:
    reported = msg.content.get("status")
    ctype = REPORT_CONDITION_TYPES.get(str(reported).lower()) if isinstance(reported, str) else None
    if ctype is None:
        ctx.log_report_dropped(msg, f"status {reported!r} is none of {', '.join(REPORT_CONDITION_TYPES)}")
        return
    job = ctx.get_job(f"{msg.namespace}/{msg.name}")
    if job is None:
        ctx.log_report_dropped(msg, f"no such {ctx.kind}")
        return
    data = go_json({k: msg.content[k] for k in ("phase", "status", "input", "output") if k in msg.content})
    now = ctx.now()
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
        conditions[:] = [c for c in conditions if not (c.get("reason") == REPORTED_BY_EDGE and c.get("type") == ctype)]
        conditions.append({"type": ctype, "status": "True", "lastHeartbeatTime": now, "lastTransitionTime": now,
                           "reason": REPORTED_BY_EDGE, "message": message, "data": data})
        return True

    ctx.update_job_status(job, mutate)


def is_too_large(exc: errors.ApiError) -> bool:
    """The API server refused a write because the object or request is too large (kube-apiserver: 413; etcd's
    ``request is too large`` comes back as a 500 with that message)."""
    return exc.status == 413 or exc.reason == "RequestEntityTooLarge" or "request is too large" in exc.message


def report_too_large(ctx: KindContext[Any], msg: UpstreamMessage, exc: errors.ApiError) -> None:
    job = ctx.get_job(f"{msg.namespace}/{msg.name}")
    if job is None:
        ctx.log_report_dropped(msg, f"no such {ctx.kind}")
        return
    phase = str(msg.content.get("phase") or "")
    reported = str(msg.content.get("status") or "")
    size = len(orjson.dumps(dict(msg.content)))
    what = " ".join(part for part in (phase, reported, "report") if part)
    message = (f"the {what} from node {msg.node} ({size} bytes as JSON) makes the {ctx.kind} larger than "
               f"the API server accepts ({exc.message}); it was not recorded")
    now = ctx.now()
    condition: dict[str, Any] = {"type": REPORT_TOO_LARGE, "status": "True", "lastHeartbeatTime": now,
                                 "lastTransitionTime": now, "reason": REPORT_TOO_LARGE, "message": message}
    if ctx.kind in _STAGED_KINDS and phase:
        condition.update(type=FAILED, stage=phase.capitalize())

    shown = {"again": False}

    def mutate(current: dict[str, Any]) -> bool:
        conditions = current.setdefault("status", {}).setdefault("conditions", [])
        last = last_condition(conditions)
        shown["again"] = last is not None and all(last.get(k) == condition.get(k) for k in ("reason", "type", "stage"))
        if last is not None and shown["again"]:  # a worker resending on its period: the condition says so already
            if last.get("message") == message:
                return False
            last.update(message=message, lastHeartbeatTime=now)
            return True
        conditions.append(condition)
        return True

    ctx.update_job_status(job, mutate)
    if not shown["again"]:
        ctx.events.event(job, "Warning", REPORT_TOO_LARGE, message)
    ctx.log_report_dropped(msg, message)
