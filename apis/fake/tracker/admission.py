"""What the tracker checks and fills in on an object before it is stored: type meta, the namespace, and the
kind-specific admission (a CRD's acceptance and status; a custom resource's pruning, defaulting and validation
against its CRD's openAPIV3Schema)."""

from __future__ import annotations

from typing import Any

from ... import meta, openapi
from ... import resources as res
from ...errors import BadRequestError, new_invalid
from ...resources import ResourceInfo
from .crd import crd_status, parse_crd

__all__ = ["admit", "check_type_meta", "resolve_namespace"]


def check_type_meta(info: ResourceInfo, obj: dict[str, Any]) -> None:
    """``apiVersion``/``kind`` must match the resource when given (400 otherwise); both are filled in, and
    ``metadata`` must be an object."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if api_version and api_version != info.gvr.api_version:
        raise BadRequestError(
            f"the API version in the data ({api_version}) does not match the expected API version ({info.gvr.api_version})"
        )
    if kind and kind != info.kind:
        raise BadRequestError(f"the kind in the data ({kind}) does not match the expected kind ({info.kind})")
    obj["apiVersion"], obj["kind"] = info.gvr.api_version, info.kind
    if not isinstance(obj.get("metadata", {}), dict):
        raise BadRequestError("metadata must be an object")
    obj.setdefault("metadata", {})


def resolve_namespace(info: ResourceInfo, request_ns: str, obj: dict[str, Any]) -> str:
    """The object's namespace (the request's, which a given ``metadata.namespace`` must match), set on it; ``""``
    for cluster-scoped kinds (whose ``metadata.namespace`` is dropped)."""
    md = obj["metadata"]
    if not info.namespaced:
        md.pop("namespace", None)
        return ""
    obj_ns = md.get("namespace") or ""
    if request_ns and obj_ns and request_ns != obj_ns:
        raise BadRequestError(
            f"the namespace of the provided object ({obj_ns}) does not match the namespace sent on the request ({request_ns})"
        )
    ns = request_ns or obj_ns
    if not ns:
        raise BadRequestError(f"{info.gvr.group_resource} is namespaced: a namespace is required")
    md["namespace"] = ns
    return ns


def admit(info: ResourceInfo, obj: dict[str, Any], old: dict[str, Any] | None, crd_schema: dict[str, Any] | None) -> None:
    """Kind-specific admission, in place: CRD acceptance (and its status); custom resource prune → default →
    validate against ``crd_schema`` (422 naming every problem)."""
    if info.gvr == res.CUSTOM_RESOURCE_DEFINITIONS:
        parse_crd(obj)
        obj["status"] = crd_status(obj, (old or {}).get("status"))
        return
    if not crd_schema:
        return
    openapi.prune(crd_schema, obj)
    openapi.apply_defaults(crd_schema, obj)
    causes = openapi.validate(crd_schema, obj)
    if causes:
        raise new_invalid(info.kind, meta.name(obj), causes, info.gvr.group)
