"""What a worker pod tells the simulator: its Sedna kind and worker type (labels), its environment (the worker
container's env, as the SDK reads it), its node and how container paths map to host paths (hostPath mounts).

A Sedna worker pod carries ``<kind>.sedna.io/worker-type`` (plus ``<kind>.sedna.io/name`` and ``/uid``), set by the
GM for every kind (``runtime.generateLabels``); a pod without it is not a worker.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from apis import meta

__all__ = ["SEDNA_KINDS", "WorkerPod", "job_index_key", "worker_labels", "worker_pod"]

# the lower-cased kinds whose controllers create worker pods (Go Sedna's generateLabels prefix)
SEDNA_KINDS = frozenset({
    "featureextractionservice",
    "federatedlearningjob",
    "incrementallearningjob",
    "jointinferenceservice",
    "lifelonglearningjob",
    "objectsearchservice",
    "objecttrackingservice",
    "reidjob",
    "videoanalyticsjob",
})
_WORKER_TYPE_LABEL = re.compile(r"([a-z0-9]+)\.sedna\.io/worker-type")


def worker_labels(pod: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(kind, worker type)`` from the pod's Sedna worker-type label, or None."""
    for key, value in meta.labels(pod).items():
        match = _WORKER_TYPE_LABEL.fullmatch(key)
        if match and match.group(1) in SEDNA_KINDS:
            return match.group(1), str(value).lower()
    return None


def job_index_key(pod: Mapping[str, Any]) -> str | None:
    """``<kind>/<namespace>/<job uid>`` of a worker pod (the job it belongs to), or None."""
    labels = worker_labels(pod)
    if labels is None:
        return None
    uid = meta.labels(pod).get(f"{labels[0]}.sedna.io/uid", "")
    return f"{labels[0]}/{meta.namespace(pod)}/{uid}"


@dataclass(frozen=True)
class WorkerPod:
    namespace: str
    name: str
    uid: str
    node: str
    kind: str  # lower-cased Sedna kind, e.g. incrementallearningjob
    worker_type: str  # lower-cased, e.g. train, eval, inference, edge, cloud, aggregation
    job_key: str  # job_index_key
    env: Mapping[str, str]
    host_mounts: tuple[tuple[str, str], ...]  # (container mount path, host path), longest mount path first
    annotations: Mapping[str, str]

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def getenv(self, name: str, default: str = "") -> str:
        """The SDK's ``Context.get_parameters``: the variable (or its upper-case form) when non-empty, else
        ``default``."""
        return self.env.get(name) or self.env.get(name.upper()) or default

    def host_path(self, container_path: str) -> str | None:
        """The host path behind ``container_path`` when it lies on a hostPath volume, else None (pod-private)."""
        if not container_path.startswith("/"):
            return None
        path = posixpath.normpath(container_path)
        for mount_path, host in self.host_mounts:
            if path == mount_path or path.startswith(mount_path.rstrip("/") + "/"):
                rest = path[len(mount_path):].lstrip("/")
                return posixpath.join(host, rest) if rest else host
        return None


def _worker_container(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    containers: list[Mapping[str, Any]] = (pod.get("spec") or {}).get("containers") or []
    for container in containers:
        if any(e.get("name") == "WORKER_NAME" for e in container.get("env") or []):
            return container
    return containers[0] if containers else {}


def worker_pod(pod: Mapping[str, Any]) -> WorkerPod | None:
    """The worker view of a pod, or None when it is not a Sedna worker."""
    labels = worker_labels(pod)
    if labels is None:
        return None
    spec = pod.get("spec") or {}
    container = _worker_container(pod)
    env = {str(e.get("name")): str(e["value"]) for e in container.get("env") or []
           if isinstance(e, Mapping) and e.get("name") and isinstance(e.get("value"), str)}
    host_volumes = {v.get("name"): (v.get("hostPath") or {}).get("path") for v in spec.get("volumes") or []
                    if isinstance(v, Mapping) and isinstance((v.get("hostPath") or {}).get("path"), str)}
    mounts = []
    for mount in container.get("volumeMounts") or []:
        host = host_volumes.get(mount.get("name")) if isinstance(mount, Mapping) else None
        if host and isinstance(mount.get("mountPath"), str) and mount["mountPath"].startswith("/") \
                and not mount.get("subPath"):
            mounts.append((posixpath.normpath(mount["mountPath"]), posixpath.normpath(host)))
    mounts.sort(key=lambda m: len(m[0]), reverse=True)
    return WorkerPod(
        namespace=meta.namespace(pod),
        name=meta.name(pod),
        uid=meta.uid(pod),
        node=str(spec.get("nodeName") or ""),
        kind=labels[0],
        worker_type=labels[1],
        job_key=job_index_key(pod) or "",
        env=env,
        host_mounts=tuple(mounts),
        annotations=dict(meta.annotations(pod)),
    )
