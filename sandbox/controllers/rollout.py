"""The arithmetic and bookkeeping of Deployment rollouts, ported from kube-controller-manager's
``pkg/controller/deployment/util`` (release 1.30): pod-template hashes, maxSurge/maxUnavailable fenceposts,
revision and replica annotations, and the Deployment conditions with their exact reasons.

Objects are plain dicts as the API serves them; values the API server would have defaulted (``replicas`` 1,
``strategy`` RollingUpdate 25%/25%, ``progressDeadlineSeconds`` 600, ``revisionHistoryLimit`` 10) are read with
those defaults, since the sandbox stores objects undefaulted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from apis import meta

__all__ = [
    "POD_TEMPLATE_HASH_LABEL",
    "REVISION_ANNOTATION",
    "DESIRED_REPLICAS_ANNOTATION",
    "MAX_REPLICAS_ANNOTATION",
    "pod_template_hash",
    "replicas_of",
    "max_surge",
    "max_unavailable",
    "new_rs_new_replicas",
    "new_condition",
    "get_condition",
    "set_condition",
    "remove_condition",
    "deployment_complete",
    "deployment_progressing",
    "deployment_timed_out",
    "progress_deadline",
    "revision_history_limit",
    "revision",
    "equal_ignore_hash",
    "set_new_rs_annotations",
    "set_replicas_annotations",
    "is_rolling",
]

POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
_NOT_COPIED = frozenset({
    "kubectl.kubernetes.io/last-applied-configuration", REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
    DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, "deprecated.deployment.rollback.to",
})
_MAX_INT32 = 2**31 - 1
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's rand.SafeEncodeString alphabet

# Condition reasons (deployment util's constants).
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
FAILED_RS_CREATE = "ReplicaSetCreateError"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"


def _fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def pod_template_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    """controller.ComputeHash: FNV-32a of the template (and the collision count), its decimal digits mapped onto
    rand.SafeEncodeString's alphabet. Same template → same hash; the Go hash of the Go struct differs."""
    data = orjson.dumps(template, option=orjson.OPT_SORT_KEYS)
    if collision_count is not None:
        data += collision_count.to_bytes(4, "little", signed=False)
    return "".join(_SAFE_ALPHABET[b % len(_SAFE_ALPHABET)] for b in str(_fnv32a(data)).encode())


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def replicas_of(obj: Mapping[str, Any] | None) -> int:
    """``spec.replicas`` (defaulted to 1; 0 for None)."""
    if obj is None:
        return 0
    value = _spec(obj).get("replicas", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def is_rolling(deployment: Mapping[str, Any]) -> bool:
    return ((_spec(deployment).get("strategy") or {}).get("type") or "RollingUpdate") == "RollingUpdate"


def _scaled_value(value: object, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.endswith("%"):
        try:
            percent = int(value[:-1])
        except ValueError:
            return 0
        scaled = total * percent / 100
        return math.ceil(scaled) if round_up else math.floor(scaled)
    return 0


def _fenceposts(deployment: Mapping[str, Any]) -> tuple[int, int]:
    """ResolveFenceposts: (surge, unavailable); both 0 → unavailable 1."""
    rolling = (_spec(deployment).get("strategy") or {}).get("rollingUpdate") or {}
    desired = replicas_of(deployment)
    surge = _scaled_value(rolling.get("maxSurge", "25%"), desired, True)
    unavailable = _scaled_value(rolling.get("maxUnavailable", "25%"), desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(deployment: Mapping[str, Any]) -> int:
    return _fenceposts(deployment)[0] if is_rolling(deployment) else 0


def max_unavailable(deployment: Mapping[str, Any]) -> int:
    desired = replicas_of(deployment)
    if not is_rolling(deployment) or desired == 0:
        return 0
    return min(_fenceposts(deployment)[1], desired)


def new_rs_new_replicas(deployment: Mapping[str, Any], all_rss: Iterable[Mapping[str, Any]], new_rs: Mapping[str, Any]) -> int:
    """NewRSNewReplicas: how many replicas the new ReplicaSet may have now."""
    if not is_rolling(deployment):
        return replicas_of(deployment)
    current = sum(replicas_of(rs) for rs in all_rss)
    max_total = replicas_of(deployment) + max_surge(deployment)
    if current >= max_total:
        return replicas_of(new_rs)
    scale_up = min(max_total - current, replicas_of(deployment) - replicas_of(new_rs))
    return replicas_of(new_rs) + scale_up


def progress_deadline(deployment: Mapping[str, Any]) -> int | None:
    """``progressDeadlineSeconds`` (default 600); None when progress is not checked (MaxInt32)."""
    value = _spec(deployment).get("progressDeadlineSeconds", 600)
    if not isinstance(value, int) or value == _MAX_INT32:
        return None
    return value


def revision_history_limit(deployment: Mapping[str, Any]) -> int | None:
    value = _spec(deployment).get("revisionHistoryLimit", 10)
    if not isinstance(value, int) or value == _MAX_INT32:
        return None
    return value


# -- conditions ------------------------------------------------------------------------------------------------------
def new_condition(ctype: str, status: str, reason: str, message: str, with_update_time: bool = True) -> dict[str, Any]:
    """A condition stamped now (Deployment conditions carry lastUpdateTime, ReplicaSet ones do not)."""
    now = meta.now_rfc3339()
    cond: dict[str, Any] = {"type": ctype, "status": status}
    if with_update_time:
        cond["lastUpdateTime"] = now
    cond.update(lastTransitionTime=now, reason=reason, message=message)
    return cond


def get_condition(status: Mapping[str, Any], ctype: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == ctype), None)


def set_condition(status: dict[str, Any], cond: dict[str, Any]) -> None:
    """SetDeploymentCondition: no change for the same status and reason; a changed one keeps its transition time
    while the status stays; the condition moves to the end of the list."""
    current = get_condition(status, cond["type"])
    if current is not None and current.get("status") == cond["status"] and current.get("reason") == cond["reason"]:
        return
    if current is not None and current.get("status") == cond["status"]:
        cond = {**cond, "lastTransitionTime": current.get("lastTransitionTime", cond["lastTransitionTime"])}
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != cond["type"]] + [cond]


def remove_condition(status: dict[str, Any], ctype: str) -> None:
    if get_condition(status, ctype) is not None:
        status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != ctype]


def deployment_complete(deployment: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    desired = replicas_of(deployment)
    return bool(
        status.get("updatedReplicas", 0) == desired
        and status.get("replicas", 0) == desired
        and status.get("availableReplicas", 0) == desired
        and status.get("observedGeneration", 0) >= meta.generation(deployment)
    )


def deployment_progressing(deployment: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    old = deployment.get("status") or {}
    old_old = old.get("replicas", 0) - old.get("updatedReplicas", 0)
    new_old = new.get("replicas", 0) - new.get("updatedReplicas", 0)
    return bool(
        new.get("updatedReplicas", 0) > old.get("updatedReplicas", 0)
        or new_old < old_old
        or new.get("readyReplicas", 0) > old.get("readyReplicas", 0)
        or new.get("availableReplicas", 0) > old.get("availableReplicas", 0)
    )


def deployment_timed_out(deployment: Mapping[str, Any], status: Mapping[str, Any], now: float) -> bool:
    """Whether the Progressing condition was last updated more than progressDeadlineSeconds before ``now``."""
    deadline = progress_deadline(deployment)
    cond = get_condition(status, "Progressing")
    if deadline is None or cond is None or cond.get("reason") == NEW_RS_AVAILABLE:
        return False
    if cond.get("reason") == TIMED_OUT:
        return True
    return _timestamp(cond.get("lastUpdateTime")) + deadline < now


def _timestamp(value: object) -> float:
    try:
        return meta.parse_time(value).timestamp() if isinstance(value, str) else 0.0
    except ValueError:
        return 0.0


# -- revisions and annotations ---------------------------------------------------------------------------------------
def revision(obj: Mapping[str, Any]) -> int:
    try:
        return int(meta.annotations(obj).get(REVISION_ANNOTATION, "0"))
    except ValueError:
        return 0


def _without_hash(template: Mapping[str, Any]) -> dict[str, Any]:
    copied = meta.deep_copy(dict(template))
    labels = (copied.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH_LABEL, None)
        if not labels:
            copied["metadata"].pop("labels")
    if copied.get("metadata") == {}:
        copied.pop("metadata")
    return copied


def equal_ignore_hash(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """EqualIgnoreHash: two pod templates are equal but for the pod-template-hash label."""
    return _without_hash(a) == _without_hash(b)


def set_replicas_annotations(rs: dict[str, Any], desired: int, max_replicas: int) -> bool:
    annotations = rs.setdefault("metadata", {}).setdefault("annotations", {})
    wanted = {DESIRED_REPLICAS_ANNOTATION: str(desired), MAX_REPLICAS_ANNOTATION: str(max_replicas)}
    changed = any(annotations.get(k) != v for k, v in wanted.items())
    annotations.update(wanted)
    return changed


def set_new_rs_annotations(deployment: Mapping[str, Any], rs: dict[str, Any], new_revision: int, exists: bool) -> bool:
    """SetNewReplicaSetAnnotations: the Deployment's annotations (but kubectl's and the rollout ones), the
    revision when it grows (the old one moves to revision-history), and for a new ReplicaSet the replica
    annotations."""
    annotations = rs.setdefault("metadata", {}).setdefault("annotations", {})
    changed = False
    for key, value in meta.annotations(deployment).items():
        if key not in _NOT_COPIED and annotations.get(key) != value:
            annotations[key] = value
            changed = True
    old = annotations.get(REVISION_ANNOTATION)
    try:
        old_revision = int(old) if old is not None else 0
    except ValueError:
        return changed
    if old_revision < new_revision:
        annotations[REVISION_ANNOTATION] = str(new_revision)
        changed = True
        if old is not None:
            history = [h for h in annotations.get(REVISION_HISTORY_ANNOTATION, "").split(",") if h]
            annotations[REVISION_HISTORY_ANNOTATION] = ",".join([*history, old])
    if not exists:
        desired = replicas_of(deployment)
        changed = set_replicas_annotations(rs, desired, desired + max_surge(deployment)) or changed
    return changed
