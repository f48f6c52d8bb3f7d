"""What one list or watch request selects: its namespace, label selector and field selector, checked against the
field labels each resource supports (as kube-apiserver's per-kind field label conversion does)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import meta
from ...errors import BadRequestError
from ...resources import GroupVersionResource, ResourceInfo

__all__ = ["ObjectFilter", "supported_field_labels"]

_COMMON_FIELDS = frozenset({"metadata.name", "metadata.namespace"})
# Field labels each built-in resource supports in field selectors (group, resource) → extra labels.
_EXTRA_FIELDS: dict[tuple[str, str], frozenset[str]] = {
    ("", "pods"): frozenset(
        {
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        }
    ),
    ("", "events"): frozenset(
        {
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "type",
        }
    ),
    ("", "nodes"): frozenset({"spec.unschedulable"}),
    ("", "secrets"): frozenset({"type"}),
    ("", "namespaces"): frozenset({"status.phase"}),
    ("", "replicationcontrollers"): frozenset({"status.replicas"}),
    ("apps", "replicasets"): frozenset({"status.replicas"}),
}


def supported_field_labels(gvr: GroupVersionResource) -> frozenset[str]:
    return _COMMON_FIELDS | _EXTRA_FIELDS.get((gvr.group, gvr.resource), frozenset())



class ObjectFilter:
    """Namespace + label selector + field selector of one list or watch request."""

    def __init__(self, info: ResourceInfo, namespace: str, label_selector: str | None, field_selector: str | None):
        self.namespace = namespace if info.namespaced else ""
        try:
            self.labels = meta.parse_selector(label_selector)
        except ValueError as exc:
            raise BadRequestError(f"unable to parse requirement: {exc}") from None
        try:
            self.fields = meta.parse_field_selector(field_selector)
        except ValueError as exc:
            raise BadRequestError(str(exc)) from None
        allowed = supported_field_labels(info.gvr)
        for path, _op, _value in self.fields.requirements:
            if path not in allowed:
                raise BadRequestError(f"field label not supported: {path}")
        self.has_selectors = not self.labels.empty() or not self.fields.empty()

    def matches(self, obj: Mapping[str, Any]) -> bool:
        # called for every stored object of a list and twice per event and watcher: the common case (metadata a
        # dict, no selectors) without the Mapping checks of ``meta``
        md = obj.get("metadata") if type(obj) is dict else None
        ns = (md.get("namespace") or "") if type(md) is dict else meta.namespace(obj)
        if self.namespace and ns != self.namespace:
            return False
        if not self.has_selectors:
            return True
        return self.labels.matches(meta.labels(obj)) and self.fields.matches(obj)
