"""The status a Deployment gets from its ReplicaSets, as kube-controller-manager computes it (``calculateStatus``,
``syncRolloutStatus``, ``requeueStuckDeployment``, release 1.30): counts summed over the ReplicaSets, the
``Available`` condition from maxUnavailable, the ``Progressing`` condition with its progress estimate and
deadline, and a ReplicaSet's ``ReplicaFailure`` copied over. Pure functions; the caller writes the result."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta

from . import rollout
from .rollout import get_condition, new_condition, remove_condition, replicas_of, set_condition

__all__ = ["calculate_status", "progress_recheck", "rollout_status", "status_of"]


def status_of(rs: Mapping[str, Any] | None, field: str) -> int:
    """An integer field of a ReplicaSet's status (0 when absent)."""
    value = ((rs or {}).get("status") or {}).get(field, 0)
    return value if isinstance(value, int) else 0


def calculate_status(d: Mapping[str, Any], all_rss: list[dict[str, Any]], new_rs: Mapping[str, Any] | None) -> dict[str, Any]:
    """calculateStatus: the counts and the Available condition; other conditions are kept as they are."""
    available = sum(status_of(rs, "availableReplicas") for rs in all_rss)
    old_status = d.get("status") or {}
    status: dict[str, Any] = {
        "observedGeneration": meta.generation(d),
        "replicas": sum(status_of(rs, "replicas") for rs in all_rss),
        "updatedReplicas": status_of(new_rs, "replicas"),
        "readyReplicas": sum(status_of(rs, "readyReplicas") for rs in all_rss),
        "availableReplicas": available,
        "unavailableReplicas": max(replicas_of(d) - available, 0),
    }
    if old_status.get("conditions"):
        status["conditions"] = meta.deep_copy(old_status["conditions"])
    if old_status.get("collisionCount") is not None:
        status["collisionCount"] = old_status["collisionCount"]
    if available >= replicas_of(d) - rollout.max_unavailable(d):
        set_condition(status, new_condition("Available", "True", rollout.MIN_AVAILABLE, "Deployment has minimum availability."))
    else:
        set_condition(status, new_condition("Available", "False", rollout.MIN_UNAVAILABLE,
                                            "Deployment does not have minimum availability."))
    return status


def rollout_status(d: Mapping[str, Any], all_rss: list[dict[str, Any]], new_rs: Mapping[str, Any] | None, now: float) -> dict[str, Any]:
    """syncRolloutStatus: ``calculate_status`` plus the Progressing estimate (complete, progressing, or timed out
    ``progressDeadlineSeconds`` after its last progress, as of ``now`` in epoch seconds) and ReplicaFailure."""
    status = calculate_status(d, all_rss, new_rs)
    deadline = rollout.progress_deadline(d)
    if deadline is None:
        remove_condition(status, "Progressing")
    current = get_condition(d.get("status") or {}, "Progressing")
    complete_before = (status["replicas"] == status["updatedReplicas"] and current is not None
                       and current.get("reason") == rollout.NEW_RS_AVAILABLE)
    subject = f'ReplicaSet "{meta.name(new_rs)}"' if new_rs is not None else f'Deployment "{meta.name(d)}"'
    if deadline is not None and not complete_before:
        if rollout.deployment_complete(d, status):
            set_condition(status, new_condition("Progressing", "True", rollout.NEW_RS_AVAILABLE,
                                                f"{subject} has successfully progressed."))
        elif rollout.deployment_progressing(d, status):
            cond = new_condition("Progressing", "True", rollout.RS_UPDATED, f"{subject} is progressing.")
            if current is not None:
                if current.get("status") == "True":
                    cond["lastTransitionTime"] = current.get("lastTransitionTime", cond["lastTransitionTime"])
                remove_condition(status, "Progressing")
            set_condition(status, cond)  # progress refreshes lastUpdateTime even with the same reason
        elif rollout.deployment_timed_out(d, status, now):
            set_condition(status, new_condition("Progressing", "False", rollout.TIMED_OUT,
                                                f"{subject} has timed out progressing."))
    failures = [c for rs in ([new_rs] if new_rs else []) + all_rss
                for c in ((rs or {}).get("status") or {}).get("conditions") or [] if c.get("type") == "ReplicaFailure"]
    if failures:  # the new ReplicaSet's failure first, as getReplicaFailures orders them
        c = failures[0]
        set_condition(status, {"type": "ReplicaFailure", "status": c.get("status", "True"),
                               "lastUpdateTime": c.get("lastTransitionTime"),
                               "lastTransitionTime": c.get("lastTransitionTime"),
                               "reason": c.get("reason", ""), "message": c.get("message", "")})
    else:
        remove_condition(status, "ReplicaFailure")
    return status


def progress_recheck(d: Mapping[str, Any], status: Mapping[str, Any], now: float) -> float | None:
    """requeueStuckDeployment: in how many seconds to look again for a timed-out rollout (None: no need)."""
    deadline = rollout.progress_deadline(d)
    cond = get_condition(status, "Progressing")
    if deadline is None or cond is None or cond.get("reason") in (rollout.TIMED_OUT, rollout.NEW_RS_AVAILABLE):
        return None
    if rollout.deployment_complete(d, status):
        return None
    try:
        updated = meta.parse_time(cond.get("lastUpdateTime") or "").timestamp()
    except ValueError:
        updated = now
    return max(updated + deadline - now, 0.0) + 1.0
