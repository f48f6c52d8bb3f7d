"""The sandbox's Deployment controller (run by ``sandbox.simulator.PodSimulator``), ported from kube-controller-manager's (release 1.30):

- A Deployment owns ReplicaSets named ``<deployment>-<pod-template-hash>`` (controller ownerReference, template
  labels plus ``pod-template-hash``, selector narrowed by it, the Deployment's annotations, the
  ``deployment.kubernetes.io/revision``, ``desired-replicas`` and ``max-replicas`` annotations); matching orphan
  ReplicaSets are adopted. The ReplicaSets own the pods (``replicasets``).
- RollingUpdate scales the new ReplicaSet up within ``maxSurge`` and the old ones down within ``maxUnavailable``
  (unhealthy old replicas first); Recreate scales the old ones to 0, waits until their pods are gone, then scales
  the new one up. A change of ``spec.replicas`` alone scales the active ReplicaSets (proportionally during a
  rollout); a paused Deployment only scales. Old ReplicaSets scaled to 0 are kept up to
  ``revisionHistoryLimit`` (default 10), the oldest revisions deleted first.
- Status: ``replicas``, ``updatedReplicas``, ``readyReplicas``, ``availableReplicas``, ``unavailableReplicas``,
  ``observedGeneration``, ``collisionCount``, and the conditions ``Available`` (``MinimumReplicasAvailable`` /
  ``MinimumReplicasUnavailable``), ``Progressing`` (``NewReplicaSetCreated``, ``FoundNewReplicaSet``,
  ``ReplicaSetUpdated``, ``NewReplicaSetAvailable``, ``ProgressDeadlineExceeded`` once ``progressDeadlineSeconds``
  pass without progress, ``DeploymentPaused``/``DeploymentResumed``) and ``ReplicaFailure`` copied from a
  ReplicaSet that cannot create pods. Events ``ScalingReplicaSet``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from apis import meta
from apis.errors import ApiError, is_already_exists, is_not_found
from apis.logs import get_logger
from apis.resources import DEPLOYMENTS, PODS, REPLICA_SETS
from apis.watch import ListOptions
from sandbox.events import record_event
from sandbox.tracker_api import TrackerAPI

from . import rollout
from .claim import claim, selector_text
from .deployment_status import calculate_status, progress_recheck, rollout_status, status_of
from .replicasets import TERMINAL_PHASES
from .rollout import (
    POD_TEMPLATE_HASH_LABEL,
    get_condition,
    new_condition,
    pod_template_hash,
    replicas_of,
    set_condition,
)

__all__ = ["DeploymentSimulator", "POD_TEMPLATE_HASH_LABEL", "template_hash"]

log = get_logger(__name__)

COMPONENT = "deployment-controller"
template_hash = pod_template_hash  # the name this module exported before ReplicaSets were simulated
_COLLISION_RETRY_SECONDS = 0.05
_OMITTED_WHEN_ZERO = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas",
                      "observedGeneration")


def _created_order(rs: Mapping[str, Any]) -> tuple[str, str]:
    return meta.creation_timestamp(rs) or "", meta.name(rs)


class DeploymentSimulator:
    """Reconciles one Deployment at a time against the tracker (called from the simulator's single worker)."""

    def __init__(self, tracker: TrackerAPI, clock: Callable[[], float] = time.time) -> None:
        self.tracker = tracker
        self.wall_clock = clock

    def sync(self, namespace: str, name: str) -> float | None:
        """One syncDeployment; returns in how many seconds to sync again (a progress deadline), or None. Raises
        ConflictError to be retried from a fresh read."""
        try:
            d = self.tracker.get(DEPLOYMENTS, namespace, name)
        except ApiError as err:
            if is_not_found(err):
                return None  # its ReplicaSets and pods are garbage-collected by the tracker
            raise
        selector = (d.get("spec") or {}).get("selector")
        if selector == {}:
            record_event(self.tracker, d, "Warning", "SelectingAll",
                         "This deployment is selecting all pods. A non-empty selector is required.", COMPONENT)
            return None
        rs_list = self._claim_replica_sets(d)
        if meta.deletion_timestamp(d):
            new_rs, old = self._all_replica_sets(d, rs_list, create=False)
            self._sync_status(d, [*old, new_rs], new_rs)
            return None
        d = self._check_paused_conditions(d)
        if (d.get("spec") or {}).get("paused") or self._is_scaling_event(d, rs_list):
            return self._sync_scale(d, rs_list)
        if rollout.is_rolling(d):
            return self._rollout_rolling(d, rs_list)
        return self._rollout_recreate(d, rs_list)

    # -- replica sets -------------------------------------------------------------------------------------------------
    def _claim_replica_sets(self, d: Mapping[str, Any]) -> list[dict[str, Any]]:
        spec = d.get("spec") or {}
        selector = spec.get("selector")
        if selector is None:  # apps/v1 requires one; fall back to the template's labels
            selector = {"matchLabels": ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}}
        return claim(self.tracker, d, ("apps/v1", "Deployment"), REPLICA_SETS, selector_text(selector))

    def _find_new(self, d: Mapping[str, Any], rs_list: list[dict[str, Any]]) -> dict[str, Any] | None:
        template = (d.get("spec") or {}).get("template") or {}
        for rs in sorted(rs_list, key=_created_order):
            if rollout.equal_ignore_hash((rs.get("spec") or {}).get("template") or {}, template):
                return rs
        return None

    def _all_replica_sets(
        self, d: dict[str, Any], rs_list: list[dict[str, Any]], create: bool
    ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """getAllReplicaSetsAndSyncRevision: (the new ReplicaSet or None, the old ones); ``rs_list`` is kept current
        with what it writes, so that a later call in the same sync does not write from a stale copy."""
        existing = self._find_new(d, rs_list)
        old = [rs for rs in rs_list if existing is None or meta.uid(rs) != meta.uid(existing)]
        new_rs = self._new_replica_set(d, existing, old, create)
        if existing is not None and new_rs is not None:
            self._replace(rs_list, new_rs)
        return new_rs, old

    def _new_replica_set(
        self, d: dict[str, Any], existing: dict[str, Any] | None, old: list[dict[str, Any]], create: bool
    ) -> dict[str, Any] | None:
        new_revision = max((rollout.revision(rs) for rs in old), default=0) + 1
        spec = d.get("spec") or {}
        min_ready = spec.get("minReadySeconds") or 0
        if existing is not None:
            rs = meta.deep_copy(existing)
            annotations_changed = rollout.set_new_rs_annotations(d, rs, new_revision, exists=True)
            if annotations_changed or ((rs.get("spec") or {}).get("minReadySeconds") or 0) != min_ready:
                rs.setdefault("spec", {})["minReadySeconds"] = min_ready
                return self.tracker.update(REPLICA_SETS, rs, meta.namespace(rs))
            self._set_revision(d, meta.annotations(rs).get(rollout.REVISION_ANNOTATION, ""))
            if rollout.progress_deadline(d) is not None and get_condition(d.get("status") or {}, "Progressing") is None:
                status = dict(d.get("status") or {})
                set_condition(status, new_condition("Progressing", "True", rollout.FOUND_NEW_RS,
                                                    f'Found new replica set "{meta.name(rs)}"'))
                self._write_status(d, status)
            return rs
        if not create:
            return None
        collision_count = (d.get("status") or {}).get("collisionCount")
        template = meta.deep_copy(spec.get("template") or {})
        pod_hash = pod_template_hash(template, collision_count)
        template.setdefault("metadata", {})["labels"] = {**(template["metadata"].get("labels") or {}),
                                                         POD_TEMPLATE_HASH_LABEL: pod_hash}
        selector = meta.deep_copy(spec.get("selector") or {"matchLabels": dict(template["metadata"]["labels"])})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH_LABEL: pod_hash}
        new_rs: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta.name(d)}-{pod_hash}",
                "namespace": meta.namespace(d),
                "labels": dict(template["metadata"]["labels"]),
                "ownerReferences": [meta.new_controller_ref(d, ("apps/v1", "Deployment"))],
            },
            "spec": {"replicas": 0, "minReadySeconds": min_ready, "selector": selector, "template": template},
        }
        replicas = rollout.new_rs_new_replicas(d, [*old, new_rs], new_rs)
        new_rs["spec"]["replicas"] = replicas
        rollout.set_new_rs_annotations(d, new_rs, new_revision, exists=False)
        try:
            created = self.tracker.create(REPLICA_SETS, new_rs, meta.namespace(d))
        except ApiError as err:
            if is_already_exists(err):
                return self._on_name_collision(d, new_rs)
            message = f'Failed to create new replica set "{meta.name(new_rs)}": {err.message}'
            if rollout.progress_deadline(d) is not None:
                status = dict(d.get("status") or {})
                set_condition(status, new_condition("Progressing", "False", rollout.FAILED_RS_CREATE, message))
                self._write_status(d, status)
            record_event(self.tracker, d, "Warning", rollout.FAILED_RS_CREATE, message, COMPONENT)
            raise
        if replicas > 0:
            record_event(self.tracker, d, "Normal", "ScalingReplicaSet",
                         f"Scaled up replica set {meta.name(created)} from 0 to {replicas}", COMPONENT)
        self._set_revision(d, str(new_revision))
        if rollout.progress_deadline(d) is not None:
            status = dict(d.get("status") or {})
            set_condition(status, new_condition("Progressing", "True", rollout.NEW_RS_CREATED,
                                                f'Created new replica set "{meta.name(created)}"'))
            self._write_status(d, status)
        return created

    def _on_name_collision(self, d: dict[str, Any], wanted: Mapping[str, Any]) -> dict[str, Any] | None:
        rs = self.tracker.get(REPLICA_SETS, meta.namespace(d), meta.name(wanted))
        ref = meta.get_controller_of(rs)
        template = (d.get("spec") or {}).get("template") or {}
        if ref is not None and ref.get("uid") == meta.uid(d) and rollout.equal_ignore_hash(
            (rs.get("spec") or {}).get("template") or {}, template
        ):
            return rs
        status = dict(d.get("status") or {})
        status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
        self._write_status(d, status)
        return None  # the next sync tries a name with the new collision count

    def _set_revision(self, d: dict[str, Any], revision: str) -> None:
        """SetDeploymentRevision (written as metadata, which kube-apiserver keeps on a status update)."""
        if not revision or meta.annotations(d).get(rollout.REVISION_ANNOTATION) == revision:
            return
        updated = meta.deep_copy(d)
        updated["metadata"].setdefault("annotations", {})[rollout.REVISION_ANNOTATION] = revision
        stored = self.tracker.update(DEPLOYMENTS, updated, meta.namespace(d))
        d["metadata"] = stored["metadata"]

    def _scale(self, d: Mapping[str, Any], rs: dict[str, Any], replicas: int) -> tuple[bool, dict[str, Any]]:
        """scaleReplicaSetAndRecordEvent: (whether the size changed, the stored ReplicaSet)."""
        size_changed = replicas_of(rs) != replicas
        updated = meta.deep_copy(rs)
        desired = replicas_of(d)
        annotations_changed = rollout.set_replicas_annotations(updated, desired, desired + rollout.max_surge(d))
        if not size_changed and not annotations_changed:
            return False, rs
        updated.setdefault("spec", {})["replicas"] = replicas
        stored = self.tracker.update(REPLICA_SETS, updated, meta.namespace(rs))
        if size_changed:
            direction = "up" if replicas > replicas_of(rs) else "down"
            record_event(self.tracker, d, "Normal", "ScalingReplicaSet",
                         f"Scaled {direction} replica set {meta.name(rs)} from {replicas_of(rs)} to {replicas}", COMPONENT)
        return size_changed, stored

    # -- strategies -----------------------------------------------------------------------------------------------------
    def _rollout_rolling(self, d: dict[str, Any], rs_list: list[dict[str, Any]]) -> float | None:
        new_rs, old = self._all_replica_sets(d, rs_list, create=True)
        if new_rs is None:
            return _COLLISION_RETRY_SECONDS  # a name collision was counted: try the next name shortly
        all_rss = [*old, *([new_rs] if new_rs else [])]
        if new_rs is not None and replicas_of(new_rs) != replicas_of(d):
            wanted = replicas_of(d) if replicas_of(new_rs) > replicas_of(d) else rollout.new_rs_new_replicas(d, all_rss, new_rs)
            scaled, new_rs = self._scale(d, new_rs, wanted)
            if scaled:
                return self._sync_rollout_status(d, [*old, new_rs], new_rs)
        if self._reconcile_old(d, old, new_rs):
            return self._sync_rollout_status(d, [*old, *([new_rs] if new_rs else [])], new_rs)
        if rollout.deployment_complete(d, d.get("status") or {}):
            self._cleanup(d, old)
        return self._sync_rollout_status(d, [*old, *([new_rs] if new_rs else [])], new_rs)

    def _reconcile_old(self, d: Mapping[str, Any], old: list[dict[str, Any]], new_rs: dict[str, Any] | None) -> bool:
        """reconcileOldReplicaSets: scale unhealthy old replicas down, then old ones within maxUnavailable; ``old``
        is updated in place with what was stored."""
        active = [rs for rs in old if replicas_of(rs) > 0]
        if not active:
            return False
        all_count = sum(replicas_of(rs) for rs in old) + replicas_of(new_rs)
        min_available = replicas_of(d) - rollout.max_unavailable(d)
        new_unavailable = replicas_of(new_rs) - status_of(new_rs, "availableReplicas")
        budget = all_count - min_available - new_unavailable
        if budget <= 0:
            return False
        index = {meta.uid(rs): i for i, rs in enumerate(old)}
        scaled_down = 0
        for rs in sorted(active, key=_created_order):  # cleanupUnhealthyReplicas
            if scaled_down >= budget:
                break
            unhealthy = replicas_of(rs) - status_of(rs, "availableReplicas")
            if replicas_of(rs) == 0 or unhealthy <= 0:
                continue
            count = min(budget - scaled_down, unhealthy)
            _, old[index[meta.uid(rs)]] = self._scale(d, rs, replicas_of(rs) - count)
            scaled_down += count
        available = sum(status_of(rs, "availableReplicas") for rs in old) + status_of(new_rs, "availableReplicas")
        total = available - min_available
        down = 0
        for i in sorted(range(len(old)), key=lambda j: _created_order(old[j])):
            rs = old[i]
            if down >= total:
                break
            if replicas_of(rs) == 0:
                continue
            count = min(replicas_of(rs), total - down)
            _, old[i] = self._scale(d, rs, replicas_of(rs) - count)
            down += count
        return scaled_down + max(down, 0) > 0

    def _rollout_recreate(self, d: dict[str, Any], rs_list: list[dict[str, Any]]) -> float | None:
        new_rs, old = self._all_replica_sets(d, rs_list, create=False)
        scaled = False
        for i, rs in enumerate(old):
            if replicas_of(rs) > 0:
                changed, old[i] = self._scale(d, rs, 0)
                scaled = scaled or changed
        if scaled or self._old_pods_running(new_rs, old):
            return self._sync_rollout_status(d, [*old, *([new_rs] if new_rs else [])], new_rs)
        if new_rs is None:
            new_rs, old = self._all_replica_sets(d, self._claim_replica_sets(d), create=True)
        if new_rs is not None:
            _, new_rs = self._scale(d, new_rs, replicas_of(d))
        if rollout.deployment_complete(d, d.get("status") or {}):
            self._cleanup(d, old)
        return self._sync_rollout_status(d, [*old, *([new_rs] if new_rs else [])], new_rs)

    def _old_pods_running(self, new_rs: Mapping[str, Any] | None, old: list[dict[str, Any]]) -> bool:
        """oldPodsRunning: an old ReplicaSet still reports replicas, or one of its pods has not terminated."""
        if sum(status_of(rs, "replicas") for rs in old) > 0:
            return True
        for rs in old:
            selector = selector_text((rs.get("spec") or {}).get("selector"))
            if not selector or (new_rs is not None and meta.uid(rs) == meta.uid(new_rs)):
                continue
            pods = self.tracker.list(PODS, meta.namespace(rs), ListOptions(label_selector=selector))["items"]
            if any((p.get("status") or {}).get("phase") not in TERMINAL_PHASES
                   for p in pods if (meta.get_controller_of(p) or {}).get("uid") == meta.uid(rs)):
                return True
        return False

    def _is_scaling_event(self, d: dict[str, Any], rs_list: list[dict[str, Any]]) -> bool:
        new_rs, old = self._all_replica_sets(d, rs_list, create=False)
        for rs in [*old, *([new_rs] if new_rs else [])]:
            desired = meta.annotations(rs).get(rollout.DESIRED_REPLICAS_ANNOTATION)
            if replicas_of(rs) > 0 and desired is not None and desired != str(replicas_of(d)):
                return True
        return False

    def _sync_scale(self, d: dict[str, Any], rs_list: list[dict[str, Any]]) -> float | None:
        """sync(): scale the active ReplicaSets to spec.replicas (proportionally during a rollout), clean up a paused
        Deployment, write the status without estimating progress."""
        new_rs, old = self._all_replica_sets(d, rs_list, create=False)
        all_rss = [*old, *([new_rs] if new_rs else [])]
        active = [rs for rs in all_rss if replicas_of(rs) > 0]
        desired = replicas_of(d)
        if len(active) <= 1:
            target = active[0] if active else (new_rs or (max(old, key=_created_order) if old else None))
            if target is not None:
                self._replace(all_rss, self._scale(d, target, desired)[1])
        elif new_rs is not None and replicas_of(new_rs) == desired and status_of(new_rs, "availableReplicas") == desired:
            for rs in [rs for rs in old if replicas_of(rs) > 0]:
                self._replace(all_rss, self._scale(d, rs, 0)[1])
        elif rollout.is_rolling(d):
            allowed = desired + rollout.max_surge(d) if desired > 0 else 0
            current = sum(replicas_of(rs) for rs in active)
            to_add = allowed - current
            order = sorted(active, key=lambda rs: (replicas_of(rs), _created_order(rs)), reverse=to_add > 0)
            sizes = {meta.uid(rs): replicas_of(rs) + (to_add * replicas_of(rs)) // max(current, 1) for rs in order}
            sizes[meta.uid(order[0])] += to_add - sum(sizes[meta.uid(rs)] - replicas_of(rs) for rs in order)
            for rs in order:
                self._replace(all_rss, self._scale(d, rs, max(sizes[meta.uid(rs)], 0))[1])
        if (d.get("spec") or {}).get("paused"):
            self._cleanup(d, [rs for rs in all_rss if new_rs is None or meta.uid(rs) != meta.uid(new_rs)])
        new_rs = next((rs for rs in all_rss if new_rs is not None and meta.uid(rs) == meta.uid(new_rs)), None)
        self._sync_status(d, all_rss, new_rs)
        return None

    @staticmethod
    def _replace(rss: list[dict[str, Any]], stored: dict[str, Any]) -> None:
        for i, rs in enumerate(rss):
            if meta.uid(rs) == meta.uid(stored):
                rss[i] = stored

    def _cleanup(self, d: Mapping[str, Any], old: list[dict[str, Any]]) -> None:
        limit = rollout.revision_history_limit(d)
        if limit is None:
            return
        alive = [rs for rs in old if not meta.deletion_timestamp(rs)]
        for rs in sorted(alive, key=lambda r: (rollout.revision(r), _created_order(r)))[: max(len(alive) - limit, 0)]:
            if status_of(rs, "replicas") or replicas_of(rs) or meta.generation(rs) > status_of(rs, "observedGeneration"):
                continue
            try:
                self.tracker.delete(REPLICA_SETS, meta.namespace(rs), meta.name(rs))
            except ApiError as err:
                if not is_not_found(err):
                    raise

    def _check_paused_conditions(self, d: dict[str, Any]) -> dict[str, Any]:
        if rollout.progress_deadline(d) is None:
            return d
        cond = get_condition(d.get("status") or {}, "Progressing")
        if cond is not None and cond.get("reason") == rollout.TIMED_OUT:
            return d
        paused, paused_cond = bool((d.get("spec") or {}).get("paused")), cond is not None and cond.get("reason") == rollout.PAUSED
        if paused == paused_cond:
            return d
        status = dict(d.get("status") or {})
        reason, message = (rollout.PAUSED, "Deployment is paused") if paused else (rollout.RESUMED, "Deployment is resumed")
        set_condition(status, new_condition("Progressing", "Unknown", reason, message))
        self._write_status(d, status)
        return d

    # -- status ---------------------------------------------------------------------------------------------------------
    def _sync_status(self, d: dict[str, Any], all_rss: list[Any], new_rs: Mapping[str, Any] | None) -> None:
        self._write_status(d, calculate_status(d, [rs for rs in all_rss if rs is not None], new_rs))

    def _sync_rollout_status(self, d: dict[str, Any], all_rss: list[dict[str, Any]], new_rs: Mapping[str, Any] | None) -> float | None:
        """syncRolloutStatus; returns the seconds until the progress deadline needs checking, or None."""
        now = self.wall_clock()
        status = rollout_status(d, all_rss, new_rs, now)
        self._write_status(d, status)
        return progress_recheck(d, status, now)

    def _write_status(self, d: dict[str, Any], status: dict[str, Any]) -> None:
        status = {k: v for k, v in status.items() if not (k in _OMITTED_WHEN_ZERO and not v)}
        if not status.get("conditions"):
            status.pop("conditions", None)
        if status == (d.get("status") or {}):
            return
        updated = dict(d)
        updated["status"] = status
        stored = self.tracker.update(DEPLOYMENTS, updated, meta.namespace(d), subresource="status")
        d["metadata"], d["status"] = stored["metadata"], stored.get("status") or {}
