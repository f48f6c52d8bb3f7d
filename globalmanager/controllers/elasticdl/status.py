"""ElasticAIJob status from what the controller observed (the master pod, the worker/ps pods the master launched).

``apply_observation(status, obs, now)`` changes a status dict in place and only the fields this controller owns:
``phase``, ``conditions`` (Created, Running, Succeeded, Failed; lastTransitionTime moves only when a status flips),
``startTime``, ``completionTime``, ``replicaStatuses`` and ``observedGeneration`` (the generation the controller has
acted on: its master exists or was just created, or its invalid spec was reported; during a spec roll it still names
the generation whose master runs). A finished job is never changed again; a job that failed with ``InvalidSpec`` is
not finished: its spec is checked again on every sync, so fixing the spec starts it. The generation a master pod was
built for is also an annotation of the pod.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from apis import meta
from globalmanager.runtime.pods import count_pods
from globalmanager.runtime.status import get_condition, set_condition

__all__ = [
    "COND_CREATED",
    "COND_FAILED",
    "COND_RUNNING",
    "COND_SUCCEEDED",
    "INVALID_SPEC",
    "Observation",
    "PHASE_FAILED",
    "PHASE_PENDING",
    "PHASE_RUNNING",
    "PHASE_SUCCEEDED",
    "apply_observation",
    "count_pods",
    "is_finished",
    "master_failure_message",
]

PHASE_PENDING = "Pending"
PHASE_RUNNING = "Running"
PHASE_SUCCEEDED = "Succeeded"
PHASE_FAILED = "Failed"

COND_CREATED = "Created"
COND_RUNNING = "Running"
COND_SUCCEEDED = "Succeeded"
COND_FAILED = "Failed"

INVALID_SPEC = "InvalidSpec"


@dataclass
class Observation:
    generation: int
    master_name: str
    master: Mapping[str, Any] | None = None  # the master pod of the current generation, if any
    master_created: bool = False  # created by this sync (not yet in the cache)
    restarting: bool = False  # an old-generation master is being replaced
    invalid_spec: str = ""  # the SpecError message when the spec is invalid
    conflict: str = ""  # why the master could not be created (a same-name pod that is not ours)
    observed_generation: int | None = None  # set when the controller has acted on ``generation``
    replicas: dict[str, dict[str, int]] = field(default_factory=dict)


def is_finished(status: Mapping[str, Any] | None, generation: int) -> bool:
    """Succeeded, or Failed for any reason but an invalid spec (which is re-checked on every sync)."""
    status = status or {}
    phase = status.get("phase")
    if phase == PHASE_SUCCEEDED:
        return True
    if phase != PHASE_FAILED:
        return False
    failed = get_condition(status.get("conditions"), COND_FAILED)
    return not (failed is not None and failed.get("reason") == INVALID_SPEC)


def master_failure_message(pod: Mapping[str, Any]) -> str:
    name = meta.name(pod)
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        term = (cs.get("state") or {}).get("terminated")
        if term:
            reason = term.get("reason") or "Error"
            return f"master pod {name} failed: {reason} (exit code {term.get('exitCode')})"
    reason = (pod.get("status") or {}).get("reason") or (pod.get("status") or {}).get("message")
    return f"master pod {name} failed" + (f": {reason}" if reason else "")


def _set(status: dict[str, Any], key: str, value: Any) -> bool:
    if status.get(key) == value:
        return False
    status[key] = value
    return True


def apply_observation(status: dict[str, Any], obs: Observation, now: str) -> bool:
    """Fold ``obs`` into ``status`` in place; True when something changed."""
    if is_finished(status, obs.generation):
        return False
    conditions: list[dict[str, Any]] = status.setdefault("conditions", [])
    changed = False
    if obs.observed_generation is not None:
        changed |= _set(status, "observedGeneration", obs.observed_generation)
    if obs.invalid_spec:
        # no pod runs for an invalid spec (an older master and its replicas are being deleted)
        changed |= _set(status, "phase", PHASE_FAILED)
        changed |= set_condition(conditions, COND_FAILED, "True", INVALID_SPEC, obs.invalid_spec, now)
        if get_condition(conditions, COND_RUNNING) is not None:
            changed |= set_condition(conditions, COND_RUNNING, "False", INVALID_SPEC, "the spec is invalid", now)
        return _set_replicas(status, obs) or changed
    failed = get_condition(conditions, COND_FAILED)
    if failed is not None and failed.get("status") == "True":  # an InvalidSpec failure, the spec is fixed now
        changed |= set_condition(conditions, COND_FAILED, "False", "SpecValid", "the spec is valid", now)

    master = obs.master
    if master is not None or obs.master_created:
        changed |= set_condition(
            conditions, COND_CREATED, "True", "MasterCreated", f"master pod {obs.master_name} created", now
        )
        if not status.get("startTime"):
            status["startTime"] = now
            changed = True
    phase = (master.get("status") or {}).get("phase") if master is not None else None
    if phase == "Running":
        changed |= _set(status, "phase", PHASE_RUNNING)
        changed |= set_condition(conditions, COND_RUNNING, "True", "MasterRunning", f"master pod {obs.master_name} is running", now)
    elif phase == "Succeeded":
        changed |= _set(status, "phase", PHASE_SUCCEEDED)
        changed |= set_condition(conditions, COND_RUNNING, "False", "MasterSucceeded", "the job has finished", now)
        changed |= set_condition(
            conditions, COND_SUCCEEDED, "True", "MasterSucceeded", f"master pod {obs.master_name} succeeded", now
        )
        changed |= _set(status, "completionTime", now) if not status.get("completionTime") else False
    elif phase == "Failed":
        assert master is not None
        message = master_failure_message(master)
        changed |= _set(status, "phase", PHASE_FAILED)
        changed |= set_condition(conditions, COND_RUNNING, "False", "MasterFailed", "the job has finished", now)
        changed |= set_condition(conditions, COND_FAILED, "True", "MasterFailed", message, now)
        changed |= _set(status, "completionTime", now) if not status.get("completionTime") else False
    else:  # no master yet, being replaced, or Pending/Unknown
        changed |= _set(status, "phase", PHASE_PENDING)
        if obs.restarting or (master is None and not obs.master_created):
            running = get_condition(conditions, COND_RUNNING)
            if running is not None and running.get("status") == "True":
                reason = "MasterRestarting" if obs.restarting else "MasterMissing"
                changed |= set_condition(conditions, COND_RUNNING, "False", reason, "the master pod is being replaced", now)
    if obs.conflict:
        changed |= set_condition(conditions, COND_CREATED, "False", "FailedCreate", obs.conflict, now)
    return _set_replicas(status, obs) or changed


def _set_replicas(status: dict[str, Any], obs: Observation) -> bool:
    replicas = {role: dict(counts) for role, counts in obs.replicas.items()}
    if replicas and status.get("replicaStatuses") != replicas:
        status["replicaStatuses"] = replicas
        return True
    return False

