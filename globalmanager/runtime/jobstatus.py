"""Status of Sedna's run-to-completion kinds whose workers are pods (FederatedLearning, Reid, VideoAnalytics).

``phase`` ``Pending``/``Running``/``Succeeded``/``Failed``; conditions appended: ``Failed`` (reason
``workerFailed``) as soon as a worker pod failed, the completion type (``Complete`` for FL) once every worker
succeeded; ``active``/``succeeded``/``failed`` pod counts, ``startTime`` and ``completionTime``. A finished job
(a ``Failed`` or completion condition that is ``True``) is never changed again by the GM. Conditions appended by
the edge (FL's ``Training``) are kept: the status is folded in place into a fresh copy, field by field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .status import append_condition

__all__ = [
    "JobObservation",
    "PHASE_FAILED",
    "PHASE_PENDING",
    "PHASE_RUNNING",
    "PHASE_SUCCEEDED",
    "apply_job_status",
    "is_job_finished",
]

PHASE_PENDING = "Pending"
PHASE_RUNNING = "Running"
PHASE_SUCCEEDED = "Succeeded"
PHASE_FAILED = "Failed"
COND_FAILED = "Failed"
WORKER_FAILED = "workerFailed"


@dataclass
class JobObservation:
    counts: dict[str, int] = field(default_factory=lambda: {"active": 0, "succeeded": 0, "failed": 0})
    failure: tuple[str, str] | None = None  # (reason, message): the job failed
    waiting: bool = False  # the workers cannot be created yet (a missing Model, Dataset...): phase Pending


def is_job_finished(status: Mapping[str, Any] | None, complete_type: str) -> bool:
    return any(
        c.get("type") in (complete_type, COND_FAILED) and c.get("status") == "True"
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
    failure = obs.failure or ((WORKER_FAILED, failed_message) if obs.counts.get("failed") else None)
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
