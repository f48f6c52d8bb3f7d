"""Per-kind rules the object tracker applies on create and update, as kube-apiserver's registry strategies and
etcd3 store do (release 1.30–1.32):

- ``metadata.generation`` exists only on kinds whose strategy sets it (``GENERATION_RESOURCES`` and every custom
  resource): pods (until 1.33), leases, events, config maps, secrets, services, nodes, namespaces and
  HorizontalPodAutoscalers (until the ``HPAGeneration`` gate) have none.
- A built-in kind bumps it when anything outside metadata and status changes; a custom resource when anything
  outside metadata changes (so status changes bump it unless status is a subresource, whose writes never bump it).
- A create whose ``metadata.resourceVersion`` parses to a non-zero unsigned integer is refused with 500 and no
  reason, like etcd3's ``Create`` ("resourceVersion should not be set on objects to be created"); values that
  do not parse (``"-1"``, ``"abc"``) and ``"0"`` are ignored (kubernetes#113847).
- Custom resources and CustomResourceDefinitions refuse unconditional updates (their strategies'
  ``AllowUnconditionalUpdate`` is false): a PUT without ``metadata.resourceVersion`` (or with ``"0"``) is a 422.
- An update or delete whose uid or resourceVersion precondition does not match is a 409; an update of an object
  being deleted may not add finalizers (422).
- A pod's ``spec.nodeName`` is set only by a binding (``bound_pod``), refused with 409 when the pod is being
  deleted or already bound, and it sets the ``PodScheduled`` condition.
"""

from __future__ import annotations

import random
import re
from collections.abc import Container, Mapping
from typing import Any

from ... import meta
from ... import resources as res
from ...errors import BadRequestError, InternalError, new_conflict, new_invalid
from ...resources import GroupVersionResource, ResourceInfo

__all__ = [
    "GENERATION_RESOURCES",
    "bound_pod",
    "RV_SET_ON_CREATE",
    "check_no_resource_version_on_create",
    "check_conditional_update",
    "check_no_new_finalizers",
    "check_preconditions",
    "check_propagation_policy",
    "assign_name",
    "generated_name",
    "generation_content",
    "has_generation",
    "without_rv",
]

# (group, resource) of the built-in kinds whose strategy sets generation 1 on create and bumps it on spec change.
GENERATION_RESOURCES = frozenset(
    {
        ("apps", "deployments"), ("apps", "replicasets"), ("apps", "statefulsets"), ("apps", "daemonsets"),
        ("batch", "jobs"), ("batch", "cronjobs"), ("", "replicationcontrollers"), ("policy", "poddisruptionbudgets"),
        ("networking.k8s.io", "ingresses"), ("networking.k8s.io", "ingressclasses"),
        ("networking.k8s.io", "networkpolicies"), ("apiextensions.k8s.io", "customresourcedefinitions"),
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies"),
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"),
    }
)
RV_SET_ON_CREATE = "resourceVersion should not be set on objects to be created"
_UINT = re.compile(r"[0-9]+")


def has_generation(info: ResourceInfo, custom: bool) -> bool:
    """Whether objects of this resource carry ``metadata.generation``."""
    return custom or (info.gvr.group, info.gvr.resource) in GENERATION_RESOURCES


def generation_content(obj: dict[str, Any], custom: bool) -> dict[str, Any]:
    """What a change must touch to bump generation: all but metadata (custom resources) or metadata and status."""
    skipped = ("metadata",) if custom else ("metadata", "status")
    return {k: v for k, v in obj.items() if k not in skipped}


def check_no_resource_version_on_create(metadata: dict[str, Any]) -> None:
    """Refuse a create that carries a resourceVersion parsing to a non-zero uint64 (500, as etcd3 answers)."""
    rv = metadata.get("resourceVersion")
    if rv is None or rv == "":
        return
    if not isinstance(rv, str):
        raise BadRequestError(f"metadata.resourceVersion must be a string, got {type(rv).__name__}")
    if _UINT.fullmatch(rv) and 0 < int(rv) < 2**64:
        raise InternalError(500, "", RV_SET_ON_CREATE)


def check_conditional_update(info: ResourceInfo, custom: bool, metadata: dict[str, Any]) -> None:
    """Refuse an update without a resourceVersion on the kinds that do not allow unconditional updates, worded as
    the generic store words it (the qualified resource stands in for the kind)."""
    if not (custom or info.gvr == res.CUSTOM_RESOURCE_DEFINITIONS) or metadata.get("resourceVersion") not in (None, "", "0"):
        return
    cause = {"type": "FieldValueInvalid", "field": "metadata.resourceVersion",
             "message": "Invalid value: 0x0: must be specified for an update"}
    raise new_invalid(info.gvr.resource, metadata.get("name") or "", [cause], info.gvr.group)


def check_propagation_policy(policy: str | None) -> None:
    """400 for a propagationPolicy a delete does not know (None: the default)."""
    if policy not in (None, "Background", "Foreground", "Orphan"):
        raise BadRequestError(
            f'propagationPolicy: Unsupported value: "{policy}": supported values: "Background", "Foreground", "Orphan"'
        )


def check_preconditions(
    gvr: GroupVersionResource, current: Mapping[str, Any], uid: object, resource_version: object
) -> None:
    """409 when a given uid or resourceVersion precondition does not match ``current``."""
    name, why = meta.name(current), None
    if uid and uid != meta.uid(current):
        why = f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta.uid(current)}"
    elif resource_version and resource_version != meta.resource_version(current):
        why = (f"Precondition failed: ResourceVersion in precondition: {resource_version}, "
               f"ResourceVersion in object meta: {meta.resource_version(current)}")
    if why is not None:
        raise new_conflict(gvr.resource, name, why, gvr.group)


def check_no_new_finalizers(info: ResourceInfo, new: Mapping[str, Any], old: Mapping[str, Any]) -> None:
    """422 when an update of an object being deleted adds finalizers."""
    if not meta.deletion_timestamp(old):
        return
    added = [f for f in meta.finalizers(new) if f not in meta.finalizers(old)]
    if added:
        message = f"Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {added}"
        cause = {"type": "FieldValueForbidden", "field": "metadata.finalizers", "message": message}
        raise new_invalid(info.kind, meta.name(new), [cause], info.gvr.group)


_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's utilrand alphabet (no vowels, no 0/1/3)
_MAX_GENERATED_NAME_LENGTH = 63 - 5


def generated_name(prefix: str) -> str:
    """``prefix`` (cut to 58 characters) and 5 random characters, as apiserver's SimpleNameGenerator makes them."""
    return prefix[:_MAX_GENERATED_NAME_LENGTH] + "".join(random.choices(_NAME_ALPHABET, k=5))


def assign_name(info: ResourceInfo, md: dict[str, Any], namespace: str, taken: Container[tuple[str, str]]) -> str:
    """The name of an object being created: ``metadata.name``, else one generated from ``generateName`` (set in
    ``md``) that no (namespace, name) in ``taken`` has yet; 422 when there is neither."""
    name = md.get("name")
    if not name:
        prefix = md.get("generateName")
        if not prefix:
            message = "Required value: name or generateName is required"
            cause = {"type": "FieldValueRequired", "field": "metadata.name", "message": message}
            raise new_invalid(info.kind, "", [cause], info.gvr.group)
        for _ in range(16):
            name = md["name"] = generated_name(prefix)
            if (namespace, name) not in taken:
                break
    if not isinstance(name, str):  # decoding rejects this first (as a Go string field)
        raise BadRequestError(f"metadata.name must be a string, got {name!r}")
    return name


def without_rv(obj: dict[str, Any]) -> dict[str, Any]:
    md = dict(obj.get("metadata") or {})
    md.pop("resourceVersion", None)
    return {**obj, "metadata": md}


def bound_pod(pod: dict[str, Any], node_name: str) -> dict[str, Any]:
    """A copy of ``pod`` bound to ``node_name``, as a POST to ``pods/binding`` makes it: ``spec.nodeName`` and the
    ``PodScheduled`` condition; 409 when the pod is being deleted or already bound."""
    name = meta.name(pod)
    why = None
    if meta.deletion_timestamp(pod):
        why = f"pod {name} is being deleted, cannot be assigned to a host"
    elif (pod.get("spec") or {}).get("nodeName"):
        why = f'pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"'
    if why is not None:
        raise new_conflict("pods/binding", name, why, "")
    bound = meta.deep_copy(pod)
    bound.setdefault("spec", {})["nodeName"] = node_name
    status = bound.setdefault("status", {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    status["conditions"] = [
        *conditions,
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": meta.now_rfc3339()},
    ]
    return bound
