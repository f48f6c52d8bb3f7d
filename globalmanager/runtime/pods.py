"""Pod builders shared by the controllers: a pod from a template with the controller ownerReference, the generated
labels, injected env vars, ``generateName`` ``<obj>-<workertype>-`` and a default restartPolicy; active-pod filters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from apis import meta
from apis.client import ClientsetBase

from .labels import generate_labels

__all__ = [
    "WorkerParam",
    "pod_from_template",
    "create_pod_with_template",
    "is_pod_active",
    "is_pod_terminal",
    "filter_active_pods",
    "inject_env",
]


@dataclass
class WorkerParam:
    """How a worker pod differs from its template (Sedna's ``WorkerParam`` without the storage mounts)."""

    worker_type: str
    env: dict[str, str] = field(default_factory=dict)
    restart_policy: str = ""  # set only when the template leaves it empty
    host_network: bool = False
    dns_policy: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    name: str = ""  # a fixed name instead of generateName


def inject_env(containers: Iterable[dict[str, Any]], env: Mapping[str, str]) -> None:
    """Append ``env`` to every container, replacing a variable of the same name."""
    if not env:
        return
    for container in containers:
        current = [e for e in container.get("env") or [] if e.get("name") not in env]
        current.extend({"name": k, "value": str(v)} for k, v in env.items())
        container["env"] = current


def pod_from_template(owner: Mapping[str, Any], template: Mapping[str, Any] | None, param: WorkerParam) -> dict[str, Any]:
    """A new pod for ``owner`` from a PodTemplateSpec (``metadata`` + ``spec``); the template is not modified."""
    template = meta.deep_copy(dict(template or {}))
    tmeta = template.get("metadata") or {}
    spec = template.get("spec") or {}
    labels = dict(tmeta.get("labels") or {})
    labels.update(generate_labels(owner, param.worker_type))
    labels.update(param.labels)
    annotations = dict(tmeta.get("annotations") or {})
    annotations.update(param.annotations)
    md: dict[str, Any] = {
        "namespace": meta.namespace(owner),
        "labels": labels,
        "ownerReferences": [meta.new_controller_ref(owner)],
    }
    if param.name:
        md["name"] = param.name
    else:
        md["generateName"] = f"{meta.name(owner)}-{param.worker_type.lower()}-"
    if annotations:
        md["annotations"] = annotations
    if tmeta.get("finalizers"):
        md["finalizers"] = list(tmeta["finalizers"])
    spec.setdefault("containers", [])
    inject_env(spec["containers"], param.env)
    if param.restart_policy and not spec.get("restartPolicy"):
        spec["restartPolicy"] = param.restart_policy
    if param.host_network:
        spec["hostNetwork"] = True
    if param.dns_policy:
        spec["dnsPolicy"] = param.dns_policy
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


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
