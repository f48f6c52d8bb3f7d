"""Pods of a Sedna worker: built from a PodTemplateSpec, owned by their object; active-pod filters.

* ``get_pod_from_template(template, owner)``: Sedna's ``utils.GetPodFromTemplate``: the template's labels,
  annotations, finalizers and spec copied (its ``metadata.name`` ignored), ``generateName`` ``<owner>-``, a controller
  ownerReference to ``owner``. The template is never modified.
* ``pod_from_template(owner, template, param)``: that plus ``worker.inject_worker_param`` (Sedna's
  ``CreatePodWithTemplate`` without the API call); ``create_pod_with_template`` also creates it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from apis import meta
from apis.client import ClientsetBase

from .storage import inject_env
from .worker import WorkerParam, inject_worker_param

__all__ = [
    "WorkerParam",
    "count_pods",
    "create_pod_with_template",
    "filter_active_pods",
    "get_pod_from_template",
    "inject_env",
    "is_pod_active",
    "is_pod_terminal",
    "pod_from_template",
    "pod_update_matters",
    "read_metadata_changed",
]

# what a sync reads of an owned object's metadata (a spec hash or generation is an annotation; the name is the key)
_READ_METADATA = ("uid", "labels", "annotations", "ownerReferences", "deletionTimestamp")


def get_pod_from_template(template: Mapping[str, Any] | None, owner: Mapping[str, Any]) -> dict[str, Any]:
    tmeta = (template or {}).get("metadata") or {}
    md: dict[str, Any] = {
        "labels": dict(tmeta.get("labels") or {}),
        "annotations": dict(tmeta.get("annotations") or {}),
        "generateName": f"{meta.name(owner)}-",
        "ownerReferences": [meta.new_controller_ref(owner)],
    }
    if tmeta.get("finalizers"):
        md["finalizers"] = list(tmeta["finalizers"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": meta.deep_copy((template or {}).get("spec") or {})}


def pod_from_template(owner: Mapping[str, Any], template: Mapping[str, Any] | None, param: WorkerParam) -> dict[str, Any]:
    """A new worker pod of ``owner``; ``param`` is consumed (its env gets the mounts' variables)."""
    pod = get_pod_from_template(template, owner)
    inject_worker_param(pod, param, owner)
    if not pod["metadata"]["annotations"]:
        del pod["metadata"]["annotations"]
    return pod


def create_pod_with_template(
    clientset: ClientsetBase, owner: Mapping[str, Any], template: Mapping[str, Any] | None, param: WorkerParam
) -> dict[str, Any]:
    """Build the pod with ``pod_from_template`` and create it; returns the created pod."""
    pod = pod_from_template(owner, template, param)
    return clientset.core_v1().pods(meta.namespace(owner)).create(pod)


def is_pod_terminal(pod: Mapping[str, Any]) -> bool:
    return ((pod.get("status") or {}).get("phase")) in ("Succeeded", "Failed")


def is_pod_active(pod: Mapping[str, Any]) -> bool:
    """Not Succeeded/Failed and not being deleted (Sedna's ``CalcActivePodCount`` rule)."""
    return not is_pod_terminal(pod) and meta.deletion_timestamp(pod) is None


def filter_active_pods(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [p for p in pods if is_pod_active(p)]


def count_pods(pods: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """``{"active", "succeeded", "failed"}`` (active: not terminal and not being deleted)."""
    out = {"active": 0, "succeeded": 0, "failed": 0}
    for pod in pods:
        phase = (pod.get("status") or {}).get("phase")
        if phase == "Succeeded":
            out["succeeded"] += 1
        elif phase == "Failed":
            out["failed"] += 1
        elif meta.deletion_timestamp(pod) is None:
            out["active"] += 1
    return out


def read_metadata_changed(old: Mapping[str, Any], cur: Mapping[str, Any]) -> bool:
    """Whether the metadata a sync reads differs (not resourceVersion, managedFields or other server-set fields)."""
    old_md, cur_md = old.get("metadata") or {}, cur.get("metadata") or {}
    return any(old_md.get(name) != cur_md.get(name) for name in _READ_METADATA)


def pod_update_matters(old: Mapping[str, Any], cur: Mapping[str, Any]) -> bool:
    """For a kind that reads a pod's phase and metadata only (a failed pod's container states come with its phase):
    False for the binding and the kubelet's status writes within a phase (conditions, container states, IPs)."""
    if (old.get("status") or {}).get("phase") != (cur.get("status") or {}).get("phase"):
        return True
    return read_metadata_changed(old, cur)
