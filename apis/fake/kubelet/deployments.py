"""The deployment controller part of the pod simulator: keeps ``spec.replicas`` pods per Deployment.

Simplification (documented): no ReplicaSets. Pods are owned directly by their Deployment (controller
ownerReference), named ``<deployment>-<template-hash>-<5 random chars>`` and labelled with the template labels plus
``pod-template-hash``. A template change creates pods of the new hash and removes the old ones once the new ones are
all ready (immediately with ``strategy.type: Recreate``). Deployment status gets ``replicas``, ``updatedReplicas``,
``readyReplicas``, ``availableReplicas``, ``unavailableReplicas``, ``observedGeneration`` and the ``Available`` and
``Progressing`` conditions (minReadySeconds is not simulated: ready means available).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping
from typing import Any

import orjson
import structlog

from ... import meta
from ...errors import ApiError, is_already_exists, is_not_found
from ...resources import DEPLOYMENTS, PODS
from .tracker_api import TrackerAPI

__all__ = ["DeploymentSimulator", "template_hash", "POD_TEMPLATE_HASH_LABEL"]

log = structlog.get_logger()

POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's rand.SafeEncodeString alphabet
TERMINAL_PHASES = ("Succeeded", "Failed")
BURST_REPLICAS = 500  # pods created per sync at most, as the ReplicaSet controller's burstReplicas


def template_hash(template: Mapping[str, Any]) -> str:
    """A stable 10-character hash of a pod template (same template → same hash)."""
    digest = hashlib.sha256(orjson.dumps(template, option=orjson.OPT_SORT_KEYS)).digest()
    return "".join(_SAFE_ALPHABET[b % len(_SAFE_ALPHABET)] for b in digest[:10])


def pod_is_ready(pod: Mapping[str, Any]) -> bool:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def _max_unavailable(deployment: Mapping[str, Any], replicas: int) -> int:
    strategy = (deployment.get("spec") or {}).get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return replicas
    value = (strategy.get("rollingUpdate") or {}).get("maxUnavailable", "25%")
    if isinstance(value, str) and value.endswith("%"):
        try:
            return math.floor(replicas * int(value[:-1]) / 100)
        except ValueError:
            return 0
    return int(value) if isinstance(value, int) else 0


def _deletion_rank(pod: Mapping[str, Any]) -> tuple[int, int, str]:
    """Which pod to remove first when scaling down: unscheduled, then pending, then not ready, newest first."""
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}.get((pod.get("status") or {}).get("phase", ""), 0)
    return (
        0 if not (pod.get("spec") or {}).get("nodeName") else 1,
        phase_rank * 2 + (1 if pod_is_ready(pod) else 0),
        "".join(chr(255 - ord(c)) for c in meta.creation_timestamp(pod) or ""),  # newest first
    )


class DeploymentSimulator:
    """Reconciles one Deployment at a time against the tracker (called from the simulator's single worker)."""

    def __init__(self, tracker: TrackerAPI, rng: random.Random | None = None) -> None:
        self.tracker = tracker
        self.rng = rng or random.Random()

    def sync(self, namespace: str, name: str) -> None:
        """Create/delete pods toward ``spec.replicas`` and write the status; raises ConflictError to be retried."""
        try:
            deployment = self.tracker.get(DEPLOYMENTS, namespace, name)
        except ApiError as err:
            if is_not_found(err):
                return  # its pods are garbage-collected by the tracker
            raise
        if meta.deletion_timestamp(deployment):
            return
        spec = deployment.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        template = spec.get("template") or {}
        pod_hash = template_hash(template)
        owned = [
            p
            for p in self.tracker.list(PODS, namespace)["items"]
            if (meta.get_controller_of(p) or {}).get("uid") == meta.uid(deployment)
        ]
        active = [
            p
            for p in owned
            if not meta.deletion_timestamp(p) and (p.get("status") or {}).get("phase") not in TERMINAL_PHASES
        ]
        current = [p for p in active if meta.labels(p).get(POD_TEMPLATE_HASH_LABEL) == pod_hash]
        old = [p for p in active if meta.labels(p).get(POD_TEMPLATE_HASH_LABEL) != pod_hash]

        for _ in range(min(replicas - len(current), BURST_REPLICAS)):  # the rest after the pods' events
            current.append(self._create_pod(deployment, template, pod_hash))
        if len(current) > replicas:
            current.sort(key=_deletion_rank)
            for pod in current[: len(current) - replicas]:
                self._delete_pod(pod)
            current = current[len(current) - replicas :]
        recreate = (spec.get("strategy") or {}).get("type") == "Recreate"
        if old and (recreate or sum(1 for p in current if pod_is_ready(p)) >= replicas):
            for pod in old:
                self._delete_pod(pod)
            old = []
        self._write_status(deployment, replicas, current, old)

    def _create_pod(self, deployment: Mapping[str, Any], template: Mapping[str, Any], pod_hash: str) -> dict[str, Any]:
        tmeta = template.get("metadata") or {}
        namespace, name = meta.namespace(deployment), meta.name(deployment)
        for _ in range(5):
            suffix = "".join(self.rng.choice(_SAFE_ALPHABET) for _ in range(5))
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{name}-{pod_hash}-{suffix}",
                    "namespace": namespace,
                    "labels": {**(tmeta.get("labels") or {}), POD_TEMPLATE_HASH_LABEL: pod_hash},
                    "ownerReferences": [meta.new_controller_ref(deployment, ("apps/v1", "Deployment"))],
                },
                "spec": meta.deep_copy(template.get("spec") or {}),
            }
            if tmeta.get("annotations"):
                pod["metadata"]["annotations"] = dict(tmeta["annotations"])
            try:
                created = self.tracker.create(PODS, pod, namespace)
            except ApiError as err:
                if is_already_exists(err):
                    continue
                raise
            log.info("sandbox deployment created pod", key=f"{namespace}/{name}", pod=meta.name(created))
            return created
        raise RuntimeError(f"could not find a free pod name for deployment {namespace}/{name}")

    def _delete_pod(self, pod: Mapping[str, Any]) -> None:
        try:
            self.tracker.delete(PODS, meta.namespace(pod), meta.name(pod))
        except ApiError as err:
            if not is_not_found(err):
                raise
        log.info("sandbox deployment deleted pod", key=f"{meta.namespace(pod)}/{meta.name(pod)}")

    def _write_status(
        self, deployment: Mapping[str, Any], replicas: int, current: list[dict[str, Any]], old: list[dict[str, Any]]
    ) -> None:
        ready = sum(1 for p in current + old if pod_is_ready(p))
        total = len(current) + len(old)
        available_ok = ready >= replicas - _max_unavailable(deployment, replicas)
        complete = len(current) == replicas and not old and ready >= replicas
        status: dict[str, Any] = {
            "observedGeneration": meta.generation(deployment),
            "replicas": total,
            "updatedReplicas": len(current),
            "readyReplicas": ready,
            "availableReplicas": ready,
        }
        if replicas - ready > 0:
            status["unavailableReplicas"] = replicas - ready
        old_status = deployment.get("status") or {}
        status["conditions"] = [
            _condition(
                old_status,
                "Available",
                available_ok,
                "MinimumReplicasAvailable" if available_ok else "MinimumReplicasUnavailable",
                "Deployment has minimum availability."
                if available_ok
                else "Deployment does not have minimum availability.",
            ),
            _condition(
                old_status,
                "Progressing",
                True,
                "NewReplicaSetAvailable" if complete else "ReplicaSetUpdated",
                f'Deployment "{meta.name(deployment)}" has successfully progressed.'
                if complete
                else f'Deployment "{meta.name(deployment)}" is progressing.',
            ),
        ]
        if _strip_times(status) == _strip_times(old_status):
            return
        updated = dict(deployment)
        updated["status"] = status
        self.tracker.update(DEPLOYMENTS, updated, meta.namespace(deployment), subresource="status")


def _condition(old_status: Mapping[str, Any], ctype: str, ok: bool, reason: str, message: str) -> dict[str, Any]:
    status = "True" if ok else "False"
    now = meta.now_rfc3339()
    old = next((c for c in old_status.get("conditions") or [] if c.get("type") == ctype), None)
    unchanged = old is not None and old.get("status") == status and old.get("reason") == reason
    return {
        "type": ctype,
        "status": status,
        "lastUpdateTime": old.get("lastUpdateTime", now) if unchanged and old else now,
        "lastTransitionTime": old.get("lastTransitionTime", now) if old and old.get("status") == status else now,
        "reason": reason,
        "message": message,
    }


def _strip_times(status: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in status.items() if k != "conditions"}
    out["conditions"] = [
        {k: v for k, v in c.items() if k not in ("lastUpdateTime", "lastTransitionTime")}
        for c in status.get("conditions") or []
    ]
    return out
