"""Status of Sedna's service kinds (JointInference, FeatureExtraction, ObjectSearch, ObjectTracking).

Conditions ``Pending``/``Running``/``Failed`` are appended (the last one is the current state), with ``active`` and
``failed`` worker counts and ``startTime``. Unlike Go Sedna, the state is re-evaluated on every sync from the
workers' real health: a Deployment still progressing is ``Pending`` (not a failure); ``Failed`` means a worker failed
(Deployment ``Progressing=False``/``ProgressDeadlineExceeded`` or ``ReplicaFailure=True``, a failed pod) or the
service cannot be built (invalid spec, a missing Model...), and a service recovers to ``Running`` once every worker
is available again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from apis import meta

from .deployments import deployment_available, deployment_failure
from .status import append_condition, last_condition

__all__ = [
    "COND_FAILED",
    "COND_PENDING",
    "COND_RUNNING",
    "ServiceObservation",
    "apply_service_status",
    "observe_deployments",
    "service_condition",
]

COND_PENDING = "Pending"
COND_RUNNING = "Running"
COND_FAILED = "Failed"
WORKER_FAILED = "workerFailed"


@dataclass
class ServiceObservation:
    needed: int  # how many workers the service should have
    active: int = 0  # present, not being deleted, not failed
    available: int = 0  # of those, available
    failed_workers: list[str] = field(default_factory=list)  # "<kind> <name>: <why>"
    failure: tuple[str, str] | None = None  # (reason, message) of a failure that is not a worker's

    def add_failure(self, reason: str, message: str) -> None:
        if self.failure is None:
            self.failure = (reason, message)


def observe_deployments(deployments: Iterable[Mapping[str, Any]], needed: int) -> ServiceObservation:
    """Count the service's worker Deployments by health."""
    obs = ServiceObservation(needed=needed)
    for d in deployments:
        if meta.deletion_timestamp(d) is not None:
            continue
        why = deployment_failure(d)
        if why:
            obs.failed_workers.append(f"deployment {meta.name(d)}: {why}")
            continue
        obs.active += 1
        if deployment_available(d):
            obs.available += 1
    return obs


def service_condition(obs: ServiceObservation) -> tuple[str, str, str]:
    """``(type, reason, message)`` of the service's current state."""
    if obs.failure is not None:
        return COND_FAILED, obs.failure[0], obs.failure[1]
    if obs.failed_workers:
        return COND_FAILED, WORKER_FAILED, "the worker of service failed: " + "; ".join(sorted(obs.failed_workers))
    if obs.available >= obs.needed:
        return COND_RUNNING, "", ""
    return COND_PENDING, "WorkersNotReady", "waiting for the workers to become available"


def apply_service_status(status: dict[str, Any], obs: ServiceObservation, now: str) -> bool:
    """Fold ``obs`` into ``status`` in place (``startTime``, ``active``, ``failed``, a new condition when the state
    changed); True when something changed. Other fields (``metrics``...) are left alone."""
    changed = False
    if not status.get("startTime"):
        status["startTime"] = now
        changed = True
    ctype, reason, message = service_condition(obs)
    failed = max(0, obs.needed - obs.active) if ctype == COND_FAILED else 0
    for key, value in (("active", obs.active), ("failed", failed)):
        if status.get(key) != value:
            status[key] = value
            changed = True
    cond: dict[str, Any] = {"type": ctype, "status": "True", "lastHeartbeatTime": now, "lastTransitionTime": now}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    conditions = status.setdefault("conditions", [])
    return append_condition(conditions, cond) or changed


def current_condition(status: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return last_condition((status or {}).get("conditions"))
