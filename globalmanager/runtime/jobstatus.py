"""Status of Sedna's run-to-completion kinds whose workers are pods (FederatedLearning, Reid, VideoAnalytics).

``phase`` ``Pending``/``Running``/``Succeeded``/``Failed``; conditions appended: ``Failed`` (reason
``workerFailed``) as soon as a worker pod failed (unless its failures are being retried, ``retried``), the
completion type (``Complete`` for FL) once every worker succeeded; ``active``/``succeeded``/``failed`` pod counts,
``startTime`` and ``completionTime``. A finished job (a ``Failed`` or completion condition that is ``True``, written
by the GM: a condition reported by the edge, reason ``ReportedByEdge``, never finishes a job) is never changed
again by the GM. Conditions appended by the edge (FL's ``Training``) are kept: the status is folded in place into a
fresh copy, field by field. ``write_job_status`` writes it with the Events of a finished job; ``create_or_wait``
turns what keeps a job's workers from being created into a Pending job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from apis.record import NORMAL, WARNING

from .owned_errors import NotOwnedError
from .references import MissingReference
from .status import append_condition

if TYPE_CHECKING:
    from .context import KindContext

__all__ = [
    "JobObservation",
    "PHASE_FAILED",
    "PHASE_PENDING",
    "PHASE_RUNNING",
    "PHASE_SUCCEEDED",
    "REPORTED_BY_EDGE",
    "apply_job_status",
    "create_or_wait",
    "is_job_finished",
    "write_job_status",
]

PHASE_PENDING = "Pending"
PHASE_RUNNING = "Running"
PHASE_SUCCEEDED = "Succeeded"
PHASE_FAILED = "Failed"
COND_FAILED = "Failed"
WORKER_FAILED = "workerFailed"
REPORTED_BY_EDGE = "ReportedByEdge"  # the reason of a condition appended from an edge report


@dataclass
class JobObservation:
    counts: dict[str, int] = field(default_factory=lambda: {"active": 0, "succeeded": 0, "failed": 0})
    failure: tuple[str, str] | None = None  # (reason, message): the job failed
    waiting: bool = False  # the workers cannot be created yet (a missing Model, Dataset...): phase Pending
    retried: bool = False  # failed pods are being retried (a backoff limit not reached): they do not fail the job


def is_job_finished(status: Mapping[str, Any] | None, complete_type: str) -> bool:
    return any(
        c.get("type") in (complete_type, COND_FAILED) and c.get("status") == "True" and c.get("reason") != REPORTED_BY_EDGE
        for c in (status or {}).get("conditions") or []
    )


def apply_job_status(
    status: dict[str, Any],
    obs: JobObservation,
    now: str,
    *,
    complete_type: str,
    time_fields: tuple[str, ...] = ("lastProbeTime", "lastHeartbeatTime"),
    failed_message: str = "the worker of the job failed",
) -> bool:
    """Fold ``obs`` into ``status`` in place; True when something changed."""
    if is_job_finished(status, complete_type):
        return False
    changed = False

    def put(key: str, value: Any) -> None:
        nonlocal changed
        if status.get(key) != value:
            status[key] = value
            changed = True

    if not status.get("startTime"):
        put("startTime", now)
    for key in ("active", "succeeded", "failed"):
        put(key, obs.counts.get(key, 0))
    conditions = list(status.get("conditions") or [])
    failure = obs.failure or ((WORKER_FAILED, failed_message) if obs.counts.get("failed") and not obs.retried else None)
    times = dict.fromkeys(time_fields, now)
    if failure is not None:
        cond = {"type": COND_FAILED, "status": "True", **times, "reason": failure[0], "message": failure[1]}
        changed |= append_condition(conditions, cond)
        put("phase", PHASE_FAILED)
    elif obs.counts.get("succeeded") and not obs.counts.get("active") and not obs.waiting:
        changed |= append_condition(conditions, {"type": complete_type, "status": "True", **times})
        put("completionTime", now)
        put("phase", PHASE_SUCCEEDED)
    else:
        put("phase", PHASE_PENDING if obs.waiting else PHASE_RUNNING)
    if conditions:
        put("conditions", conditions)
    return changed


def write_job_status(
    ctx: KindContext[Any],
    key: str,
    job: Mapping[str, Any],
    obs: JobObservation,
    *,
    complete_type: str,
    time_fields: tuple[str, ...] = ("lastProbeTime", "lastHeartbeatTime"),
    failed_message: str = "the worker of the job failed",
) -> None:
    """``apply_job_status`` through the status subresource; a new phase is logged, ``Succeeded`` recorded as a
    Normal Event ``Completed`` and ``Failed`` as a Warning Event with the failure's reason and message."""
    old_phase = (job.get("status") or {}).get("phase")
    written = ctx.update_job_status(job, lambda obj: apply_job_status(
        obj.setdefault("status", {}), obs, ctx.now(), complete_type=complete_type, time_fields=time_fields,
        failed_message=failed_message))
    phase = ((written or {}).get("status") or {}).get("phase", old_phase)
    if written is None or phase == old_phase:
        return
    ctx.log.info("job phase changed", key=key, phase=phase, previous=old_phase)
    if phase == PHASE_SUCCEEDED:
        ctx.events.event(job, NORMAL, "Completed", f"{ctx.kind} completed")
    elif phase == PHASE_FAILED:
        cond = (written.get("status") or {}).get("conditions", [{}])[-1]
        ctx.events.event(job, WARNING, cond.get("reason") or "Failed", cond.get("message") or failed_message)


def create_or_wait(ctx: KindContext[Any], job: Mapping[str, Any], obs: JobObservation, create: Callable[[], None]) -> bool:
    """Run ``create()`` (which creates the job's workers); a missing Model/Dataset/Secret (``MissingReference``) or an
    object of a worker's name the job does not own (``NotOwnedError``) makes the job wait (``obs.waiting``: phase
    ``Pending``) with a Warning Event naming it. Returns True when the job must be retried later (no informer event
    ends the wait: a Secret, a foreign object)."""
    try:
        create()
    except MissingReference as exc:
        obs.waiting = True
        ctx.events.event(job, WARNING, exc.reason, f"cannot create the workers: {exc}")
        return exc.reason == "SecretNotFound"
    except NotOwnedError as exc:
        obs.waiting = True
        ctx.events.event(job, WARNING, "FailedCreate", str(exc))
        return True
    return False
