"""Status of Sedna's service kinds (JointInference, FeatureExtraction, ObjectSearch, ObjectTracking).

Conditions ``Pending``/``Running``/``Failed`` are appended (the last one is the current state), with ``active`` and
``failed`` worker counts and ``startTime``. Unlike Go Sedna, the state is re-evaluated on every sync from the
workers' real health: a Deployment or pod still starting is ``Pending`` (not a failure); ``Failed`` means a worker
failed (Deployment ``Progressing=False``/``ProgressDeadlineExceeded`` or ``ReplicaFailure=True``, a pod that ended)
or the service cannot be built (invalid spec, a missing Model...), and a service recovers to ``Running`` once every
worker is available again. ``write_service_status`` writes it and logs/records (Warning Event) a change of state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from apis import meta
from apis.record import WARNING
from apis.sedna.v1alpha1.common import ServiceConditionType

from .deployments import deployment_available, deployment_failure
from .status import append_condition, last_condition

if TYPE_CHECKING:
    from .context import KindContext

__all__ = [
    "COND_FAILED",
    "COND_PENDING",
    "COND_RUNNING",
    "ServiceObservation",
    "apply_service_status",
    "observe_deployments",
    "observe_pods",
    "service_condition",
    "write_service_status",
]

COND_PENDING = ServiceConditionType.PENDING
COND_RUNNING = ServiceConditionType.RUNNING
COND_FAILED = ServiceConditionType.FAILED
WORKER_FAILED = "workerFailed"
_STATE = ("type", "reason", "message")


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


def observe_pods(pods: Iterable[Mapping[str, Any]], obs: ServiceObservation) -> list[str]:
    """Add a service's worker pods (running for good, never ending) to ``obs``; returns the failures found
    (``"pod <name>: <why>"``), also in ``obs.failed_workers``. A pod that ended (``Failed``, or ``Succeeded``: a
    service worker that exits stopped serving) is failed; a Running pod whose containers are ready is available."""
    failures: list[str] = []
    for pod in pods:
        if meta.deletion_timestamp(pod) is not None:
            continue
        status = pod.get("status") or {}
        phase = status.get("phase")
        if phase in ("Failed", "Succeeded"):
            why = status.get("reason") or status.get("message") or ("exited" if phase == "Succeeded" else "failed")
            failures.append(f"pod {meta.name(pod)}: {phase}: {why}")
            continue
        obs.active += 1
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
        if phase == "Running" and ready:
            obs.available += 1
    obs.failed_workers.extend(failures)
    return failures


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


def write_service_status(ctx: KindContext[Any], key: str, service: Mapping[str, Any], obs: ServiceObservation) -> None:
    """Fold ``obs`` into the service's status (status subresource, only the fields above); a new state is logged,
    and a ``Failed`` one recorded as a Warning Event with its reason and message."""
    written = ctx.update_job_status(service, lambda obj: apply_service_status(obj.setdefault("status", {}), obs, ctx.now()))
    if written is None:
        return
    before = current_condition(service.get("status")) or {}
    after = current_condition(written.get("status")) or {}
    if [before.get(k) for k in _STATE] != [after.get(k) for k in _STATE]:
        ctx.log.info("service state changed", key=key, state=after.get("type"), reason=after.get("reason"))
        if after.get("type") == COND_FAILED:
            ctx.events.event(service, WARNING, after.get("reason") or "Failed", after.get("message") or "")
