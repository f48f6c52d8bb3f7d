"""The sandbox's ReplicaSet controller (run by ``sandbox.simulator.PodSimulator``), as kube-controller-manager's
(release 1.30) acts:

- A ReplicaSet owns the active pods (not Succeeded/Failed, not being deleted) its selector matches and that it
  controls; matching pods with no controller are adopted (controller ownerReference added).
- It creates pods from its template (``generateName: <rs>-``, the template's labels, annotations and spec, a
  controller ownerReference) until it has ``spec.replicas``, and deletes the surplus, least useful first
  (unscheduled, pending, not ready, newest).
- Status: ``replicas``, ``fullyLabeledReplicas``, ``readyReplicas``, ``availableReplicas`` (ready for
  ``minReadySeconds``), ``observedGeneration``, computed from the pods seen before this sync's creations and
  deletions (as kube's does), and the ``ReplicaFailure`` condition (``FailedCreate``/``FailedDelete``) while pods
  cannot be created or deleted. Events ``SuccessfulCreate``, ``SuccessfulDelete``, ``FailedCreate``.

Sandbox steering: ``sandbox.sedna.io/fail-pod-creation`` on the ReplicaSet (its Deployment's annotations are copied
to it) or on its pod template refuses every pod creation with its value as the reason; the other
``sandbox.sedna.io/*`` annotations of the ReplicaSet are added to the pods it creates (so annotating a Deployment
steers its pods; a real cluster ignores them).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from apis import meta
from apis.errors import ApiError, ForbiddenError, is_not_found
from apis.logs import get_logger
from apis.resources import PODS, REPLICA_SETS
from sandbox.events import record_event
from sandbox.steering import ANNOTATION_FAIL_POD_CREATION, ANNOTATION_PREFIX
from sandbox.tracker_api import TrackerAPI

from .claim import claim, selector_text
from .rollout import get_condition, new_condition, remove_condition, replicas_of

__all__ = ["ReplicaSetSimulator", "pod_is_ready", "pod_is_active"]

log = get_logger(__name__)

COMPONENT = "replicaset-controller"
BURST_REPLICAS = 500  # kube's burstReplicas: at most this many creations or deletions per sync
TERMINAL_PHASES = ("Succeeded", "Failed")
_OMITTED_WHEN_ZERO = ("fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration")


def pod_is_ready(pod: Mapping[str, Any]) -> bool:
    return _ready_condition(pod).get("status") == "True"


def pod_is_active(pod: Mapping[str, Any]) -> bool:
    return not meta.deletion_timestamp(pod) and (pod.get("status") or {}).get("phase") not in TERMINAL_PHASES


def _ready_condition(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), {})


def _ready_since(pod: Mapping[str, Any]) -> float:
    try:
        return meta.parse_time(_ready_condition(pod).get("lastTransitionTime") or "").timestamp()
    except ValueError:
        return 0.0


def _deletion_rank(pod: Mapping[str, Any]) -> tuple[int, int, int, float, int, str]:
    """getPodsToDelete's order: unassigned, pending < unknown < running, not ready, ready for less time, more
    restarts, newer first."""
    status = pod.get("status") or {}
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}.get(status.get("phase", ""), 0)
    restarts = sum(int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or [])
    ready = pod_is_ready(pod)
    return (
        1 if (pod.get("spec") or {}).get("nodeName") else 0,
        phase_rank,
        1 if ready else 0,
        -_ready_since(pod) if ready else 0.0,
        -restarts,
        "".join(chr(255 - ord(c)) for c in meta.creation_timestamp(pod) or ""),
    )


class ReplicaSetSimulator:
    """Reconciles one ReplicaSet at a time against the tracker (called from the simulator's single worker)."""

    def __init__(self, tracker: TrackerAPI, clock: Callable[[], float] = time.time) -> None:
        self.tracker = tracker
        self.wall_clock = clock

    def sync(self, namespace: str, name: str) -> float | None:
        """Adopt, create or delete pods toward ``spec.replicas`` and write the status; returns in how many seconds
        to sync again (a ready pod becomes available after minReadySeconds), or None."""
        try:
            rs = self.tracker.get(REPLICA_SETS, namespace, name)
        except ApiError as err:
            if is_not_found(err):
                return None
            raise
        selector = selector_text((rs.get("spec") or {}).get("selector"))
        pods = claim(self.tracker, rs, ("apps/v1", "ReplicaSet"), PODS, selector)
        active = [p for p in pods if pod_is_active(p)]
        error: ApiError | None = None
        if not meta.deletion_timestamp(rs):
            error = self._manage_replicas(rs, active)
        return self._write_status(rs, active, error)

    # -- pods ---------------------------------------------------------------------------------------------------------
    def _manage_replicas(self, rs: Mapping[str, Any], active: list[dict[str, Any]]) -> ApiError | None:
        diff = len(active) - replicas_of(rs)
        if diff < 0:
            for _ in range(min(-diff, BURST_REPLICAS)):
                error = self._create_pod(rs)
                if error is not None:
                    return error  # kube's slow start stops at the first failed batch
        elif diff > 0:
            for pod in sorted(active, key=_deletion_rank)[: min(diff, BURST_REPLICAS)]:
                try:
                    self.tracker.delete(PODS, meta.namespace(pod), meta.name(pod))
                except ApiError as err:
                    if is_not_found(err):
                        continue
                    record_event(self.tracker, rs, "Warning", "FailedDelete", f"Error deleting: {err}", COMPONENT)
                    return err
                record_event(self.tracker, rs, "Normal", "SuccessfulDelete", f"Deleted pod: {meta.name(pod)}", COMPONENT)
        return None

    def _create_pod(self, rs: Mapping[str, Any]) -> ApiError | None:
        template = (rs.get("spec") or {}).get("template") or {}
        tmeta = template.get("metadata") or {}
        rs_annotations = meta.annotations(rs)
        annotations = {k: v for k, v in rs_annotations.items() if k.startswith(ANNOTATION_PREFIX)}
        annotations.update(tmeta.get("annotations") or {})
        prefix = f"{meta.name(rs)}-"
        try:
            refusal = annotations.get(ANNOTATION_FAIL_POD_CREATION) or rs_annotations.get(ANNOTATION_FAIL_POD_CREATION)
            if refusal is not None:
                reason = refusal if refusal not in ("", "true") else f"refused by the sandbox ({ANNOTATION_FAIL_POD_CREATION})"
                raise ForbiddenError(403, "Forbidden", f'pods "{prefix}" is forbidden: {reason}')
            md: dict[str, Any] = {
                "generateName": prefix,
                "namespace": meta.namespace(rs),
                "labels": dict(tmeta.get("labels") or {}),
                "ownerReferences": [meta.new_controller_ref(rs, ("apps/v1", "ReplicaSet"))],
            }
            if annotations:
                md["annotations"] = annotations
            if tmeta.get("finalizers"):
                md["finalizers"] = list(tmeta["finalizers"])
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": meta.deep_copy(template.get("spec") or {})}
            created = self.tracker.create(PODS, pod, meta.namespace(rs))
        except ApiError as err:
            record_event(self.tracker, rs, "Warning", "FailedCreate", f"Error creating: {err.message}", COMPONENT)
            log.info("sandbox replicaset failed to create a pod", key=f"{meta.namespace(rs)}/{meta.name(rs)}",
                     error=err.message)
            return err
        record_event(self.tracker, rs, "Normal", "SuccessfulCreate", f"Created pod: {meta.name(created)}", COMPONENT)
        return None

    # -- status -------------------------------------------------------------------------------------------------------
    def _write_status(self, rs: dict[str, Any], active: list[dict[str, Any]], error: ApiError | None) -> float | None:
        spec = rs.get("spec") or {}
        min_ready = spec.get("minReadySeconds") or 0
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        now = self.wall_clock()
        status: dict[str, Any] = meta.deep_copy(rs.get("status") or {})
        ready = [p for p in active if pod_is_ready(p)]
        pending_availability = [_ready_since(p) + min_ready for p in ready if min_ready and _ready_since(p) + min_ready >= now]
        failure = get_condition(status, "ReplicaFailure")
        if error is not None and failure is None:
            reason = "FailedCreate" if len(active) < replicas_of(rs) else "FailedDelete"
            status["conditions"] = [*(status.get("conditions") or []),
                                    new_condition("ReplicaFailure", "True", reason, error.message, with_update_time=False)]
        elif error is None and failure is not None:
            remove_condition(status, "ReplicaFailure")
            if not status["conditions"]:
                del status["conditions"]
        status.update(
            replicas=len(active),
            fullyLabeledReplicas=sum(1 for p in active if all(meta.labels(p).get(k) == v for k, v in template_labels.items())),
            readyReplicas=len(ready),
            availableReplicas=len(ready) - len(pending_availability),
            observedGeneration=meta.generation(rs),
        )
        for key in _OMITTED_WHEN_ZERO:
            if not status.get(key):
                status.pop(key, None)
        if status != (rs.get("status") or {}):
            updated = dict(rs)
            updated["status"] = status
            self.tracker.update(REPLICA_SETS, updated, meta.namespace(rs), subresource="status")
        if pending_availability:
            return max(min(pending_availability) - now, 0.0) + 0.01
        return None
