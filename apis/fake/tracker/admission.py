"""What the tracker checks and fills in on an object before it is stored, in kube-apiserver's order:

1. decoding (``decoding``): every field has its Go type — a create or update that does not decode is a 400
   ``<Kind> in version "<v>" cannot be handled as a <Kind>: json: …``, a patch whose result does not decode a 422
   on the field ``patch`` (as kube-apiserver's patch handler answers);
2. type meta and namespace (``check_type_meta``, ``resolve_namespace``);
3. validation, one 422 Invalid naming every problem: ObjectMeta (``validation``), what an update may not change
   (``immutability``), a CRD's acceptance (and its status), a custom resource's pruning, defaulting and
   validation against its CRD's openAPIV3Schema.
"""

from __future__ import annotations

from typing import Any

import orjson

from ... import meta, openapi
from ... import resources as res
from ...errors import ApiError, BadRequestError, new_invalid
from ...openapi_format import go_quote
from ...resources import ResourceInfo
from .. import schemas
from .crd import crd_status, parse_crd
from .decoding import DecodeError, check_kind, check_object_meta
from .immutability import validate_update
from .limits import data_size_causes
from .validation import Cause, validate_object_meta

__all__ = [
    "admit_create",
    "admit_update",
    "check_decodes",
    "check_type_meta",
    "resolve_namespace",
    "unknown_fields",
]


def check_decodes(
    info: ResourceInfo, obj: dict[str, Any], patched: bool = False, drop_unknown: bool = False
) -> list[str]:
    """Raise what kube-apiserver answers when ``obj`` does not decode into the kind's Go type (see the module doc);
    ``patched``: ``obj`` is the result of a patch; ``drop_unknown``: then remove, in place, the fields of a built-in
    kind's object that its Go type does not have, as decoding drops them (custom resources are pruned against their
    CRD schema by ``admit_*``), in the same walk unless ``patched``, whose error quotes the object as it was.
    Answers the paths of a built-in kind's unknown fields (what ``unknown_fields`` finds, from the same walk)."""
    try:
        definition = schemas.kind_definition_name(info.gvr.api_version, info.kind)
        if definition is not None:
            unknown = check_kind(definition, obj, drop_unknown=drop_unknown and not patched)
            if drop_unknown and patched and unknown:  # the second walk only drops what the first found
                check_kind(definition, obj, drop_unknown=True)
            return sorted(unknown)
        if not isinstance(obj, dict):
            raise DecodeError(f"json: cannot unmarshal {type(obj).__name__} into Go value of type unstructured.Unstructured")
        check_object_meta(obj.get("metadata"))
        return []
    except DecodeError as err:
        raise _decode_error(info, err, obj if patched else None) from None


def unknown_fields(info: ResourceInfo, obj: dict[str, Any], crd_schema: dict[str, Any] | None) -> list[str]:
    """The paths of the fields of ``obj`` a write would drop (sorted; nothing is changed): those its built-in kind
    does not have, or that its CRD's schema prunes."""
    definition = schemas.kind_definition_name(info.gvr.api_version, info.kind)
    try:
        if definition is not None:
            return sorted(check_kind(definition, obj))
    except DecodeError:
        return []  # the write itself reports it
    if not crd_schema or not isinstance(obj, dict):
        return []
    found: list[str] = []
    openapi.prune(crd_schema, meta.deep_copy(obj), pruned=found)
    return found


def _decode_error(info: ResourceInfo, err: DecodeError, patched: object) -> ApiError:
    if patched is not None:
        value = go_quote(orjson.dumps(patched).decode())
        cause = {"type": "FieldValueInvalid", "field": "patch", "message": f"Invalid value: {value}: {err.message}"}
        return new_invalid("", "", [cause])
    kind, version = info.kind, info.gvr.version
    return BadRequestError(f'{kind} in version "{version}" cannot be handled as a {kind}: {err.message}')


def check_type_meta(info: ResourceInfo, obj: dict[str, Any]) -> None:
    """``apiVersion``/``kind`` must match the resource when given (400 otherwise); both are filled in."""
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
    if obj.get("metadata") is None:
        obj["metadata"] = {}


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


def _kind_admission(info: ResourceInfo, obj: dict[str, Any], old: dict[str, Any] | None, crd_schema: dict[str, Any] | None) -> list[Cause]:
    """CRD acceptance (raises its own 422) and status; custom resource prune → default → validate (the causes)."""
    if info.gvr == res.CUSTOM_RESOURCE_DEFINITIONS:
        parse_crd(obj)
        obj["status"] = crd_status(obj, (old or {}).get("status"))
        return []
    if not crd_schema:
        return []
    openapi.prune(crd_schema, obj)
    openapi.apply_defaults(crd_schema, obj)
    return openapi.validate(crd_schema, obj)


def admit_create(info: ResourceInfo, obj: dict[str, Any], crd_schema: dict[str, Any] | None,
                 cluster_limits: bool = False) -> None:
    """Validate a new (decoded) object, in place for CRD status and custom resource pruning/defaulting; one 422
    naming every problem. ``cluster_limits``: also a cluster's size limits on data (``limits.data_size_causes``)."""
    causes = validate_object_meta(info, obj["metadata"])
    if cluster_limits:
        causes += data_size_causes(info, obj)
    causes += _kind_admission(info, obj, None, crd_schema)
    if causes:
        raise new_invalid(info.kind, meta.name(obj), causes, info.gvr.group)


def admit_update(
    info: ResourceInfo, new: dict[str, Any], old: dict[str, Any], crd_schema: dict[str, Any] | None,
    cluster_limits: bool = False,
) -> None:
    """``admit_create``'s checks plus what the kind does not allow an update to change."""
    causes = validate_object_meta(info, new["metadata"])
    if cluster_limits:
        causes += data_size_causes(info, new)
    causes += validate_update(info, new, old)
    causes += _kind_admission(info, new, old, crd_schema)
    if causes:
        raise new_invalid(info.kind, meta.name(new), causes, info.gvr.group)
