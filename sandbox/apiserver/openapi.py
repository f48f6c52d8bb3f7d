"""The sandbox's OpenAPI documents, shaped as kube-apiserver serves them, for ``kubectl explain``, kubectl's
server-side field validation check and its strategic-merge patch computation:

- ``/openapi/v3``: ``{"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=<sha512>"}, ...}}``, one
  entry per served group version; ``/openapi/v3/api/v1`` and ``/openapi/v3/apis/<group>/<version>``: the paths of
  every resource there (operations carry ``x-kubernetes-group-version-kind``, PATCH accepts the patch types the
  sandbox applies and takes ``fieldValidation``) and ``components.schemas``: the kinds, their List kinds and every
  schema they refer to, each kind with its ``x-kubernetes-group-version-kind``.
- ``/openapi/v2``: the same paths and schemas as one Swagger 2.0 document (``definitions``), as JSON or in the
  protobuf encoding kubectl asks for (``openapi_proto``).

Built-in kinds' schemas come from ``apis.fake.schemas`` (the ``kubernetes`` package's models), named
``<version>.<Kind>`` (``v1.PodSpec``; ``core.v1.Event`` and ``events.v1.Event`` where the package disambiguates),
with the ``x-kubernetes-patch-merge-key``/``-strategy`` of the lists the sandbox's strategic merge merges by key.
A CRD's served version contributes its ``openAPIV3Schema`` as ``<reversed group>.<version>.<Kind>`` (``metadata``
referring to ObjectMeta), as apiextensions-apiserver publishes it; CRDs written at run time appear at once.
Documents are built on first request and cached until the served resources or CRDs change.
"""

from __future__ import annotations

import hashlib
import re
import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from apis.errors import ApiError
from apis.fake import ObjectTracker, schemas
from apis.fake.tracker.patch import MERGE_KEYS, PRIMITIVE_MERGE_LISTS
from apis.meta import deep_copy as meta_copy
from apis.resources import CUSTOM_RESOURCE_DEFINITIONS, ResourceInfo

from .discovery import SERVER_GIT_VERSION
from .openapi_proto import encode_document

__all__ = ["OpenAPIDocuments", "documents_for"]

_V3_PREFIX = "#/components/schemas/"
_V2_PREFIX = "#/definitions/"
_NAME_RE = re.compile(r"^([A-Z][a-z]+)?(V\d+(?:(?:alpha|beta)\d+)?)([A-Z]\w*)$")
_BUILTIN_PATCH = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json",
                  "application/strategic-merge-patch+json")
_CUSTOM_PATCH = _BUILTIN_PATCH[:3]
_SUBRESOURCE_KINDS = {"scale": ("autoscaling", "v1", "Scale")}
_SUBRESOURCE_VERBS = {"status": ("get", "put", "patch"), "scale": ("get", "put", "patch"), "log": ("get",)}
_ACTIONS = {"get": "get", "put": "put", "patch": "patch", "delete": "delete", "post": "post"}
_OP_VERBS = {"get": "read", "put": "replace", "patch": "patch", "delete": "delete", "post": "create"}


def _openapi_name(py_name: str) -> str:
    """``V1PodSpec`` → ``v1.PodSpec``, ``CoreV1Event`` → ``core.v1.Event`` (kubectl shows the last part)."""
    m = _NAME_RE.match(py_name)
    if not m:
        return py_name
    prefix = f"{m.group(1).lower()}." if m.group(1) else ""
    return f"{prefix}{m.group(2).lower()}.{m.group(3)}"


def _custom_name(group: str, version: str, kind: str) -> str:
    return ".".join([*reversed(group.split(".")), version, kind])


def _camel(group: str) -> str:
    base = group[: -len(".k8s.io")] if group.endswith(".k8s.io") else group
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[.\-]", base or "core") if p)


QUANTITY = "resource.Quantity"
INT_OR_STRING = "intstr.IntOrString"
_SHARED_SCHEMAS = {
    QUANTITY: {
        "description": "Quantity is a fixed-point representation of a number (a string such as \"100m\" or "
                       "\"1Gi\", or a number).",
        "oneOf": [{"type": "string"}, {"type": "number"}],
    },
    INT_OR_STRING: {
        "description": "IntOrString is a type that can hold an int32 or a string.",
        "type": "string",
        "format": "int-or-string",
    },
}


def _shared_ref(schema: Mapping[str, Any]) -> str | None:
    if schema.get("format") == schemas.QUANTITY_FORMAT and "oneOf" in schema:
        return QUANTITY
    if schema.get("x-kubernetes-int-or-string") is True:
        return INT_OR_STRING
    return None


def _rename_refs(schema: object, names: Mapping[str, str], prefix: str = _V3_PREFIX) -> Any:
    """``schema`` with every ``$ref`` pointing at the renamed definitions and quantities and int-or-strings
    referring to their shared schemas, as kube-apiserver publishes them (a new structure; input untouched)."""
    if isinstance(schema, dict):
        shared = _shared_ref(schema)
        if shared is not None:
            described = {"description": schema["description"]} if schema.get("description") else {}
            return {**described, "allOf": [{"$ref": prefix + shared}]}
        out = {}
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(_V3_PREFIX):
                target = value[len(_V3_PREFIX):]
                out[key] = prefix + names.get(target, target)
            else:
                out[key] = _rename_refs(value, names, prefix)
        return out
    if isinstance(schema, list):
        return [_rename_refs(v, names, prefix) for v in schema]
    return schema


def _with_patch_extensions(py_name: str, definition: dict[str, Any]) -> dict[str, Any]:
    """The list properties the sandbox's strategic merge merges by key (or as sets), marked as kube marks them."""
    properties = definition.get("properties")
    if not isinstance(properties, dict):
        return definition
    for field, prop in properties.items():
        if prop.get("type") != "array":
            continue
        key = "port" if field == "ports" and py_name.endswith("ServiceSpec") else MERGE_KEYS.get(field)
        if key is not None:
            prop["x-kubernetes-patch-merge-key"] = key
            prop["x-kubernetes-patch-strategy"] = "merge"
        elif field in PRIMITIVE_MERGE_LISTS:
            prop["x-kubernetes-patch-strategy"] = "merge"
    return definition


def _closure(roots: Iterable[str]) -> dict[str, Mapping[str, Any]]:
    """Every built-in definition reachable from ``roots`` (python model names), by name."""
    found: dict[str, Mapping[str, Any]] = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in found:
            continue
        _, definition = schemas.resolve({"$ref": _V3_PREFIX + name})
        found[name] = definition
        stack: list[Any] = [definition]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str) and ref.startswith(_V3_PREFIX) and ref[len(_V3_PREFIX):] not in found:
                    pending.append(ref[len(_V3_PREFIX):])
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    return found


def _parameter(name: str, where: str = "query", kind: str = "string", required: bool = False) -> dict[str, Any]:
    param: dict[str, Any] = {"name": name, "in": where, "schema": {"type": kind, "uniqueItems": True}}
    if required:
        param["required"] = True
    return param


_WRITE_PARAMS = [_parameter("dryRun"), _parameter("fieldManager"), _parameter("fieldValidation")]
_LIST_PARAMS = [_parameter(n) for n in ("continue", "fieldSelector", "labelSelector", "resourceVersion",
                                        "resourceVersionMatch")] + [_parameter("limit", kind="integer"),
                                                                    _parameter("watch", kind="boolean")]


class OpenAPIDocuments:
    """The v3 and v2 documents of one tracker; thread-safe, cached per served-resource fingerprint."""

    def __init__(self, tracker: ObjectTracker) -> None:
        self.tracker = tracker
        self._lock = threading.Lock()
        self._v3: dict[tuple[str, str], tuple[Any, dict[str, Any], bytes, str]] = {}
        self._v2: tuple[Any, bytes, bytes] | None = None

    # -- public ---------------------------------------------------------------------------------------------------------
    def v3_index(self) -> dict[str, Any]:
        paths = {}
        for group, version in self._group_versions():
            document = self.v3_document(group, version)
            if document is None:  # its last resource went away meanwhile (a CRD deleted)
                continue
            _, digest = document
            path = f"apis/{group}/{version}" if group else f"api/{version}"
            paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
        return {"paths": paths}

    def v3_document(self, group: str, version: str) -> tuple[bytes, str] | None:
        """The JSON document of one group version and its hash, or None when nothing is served there."""
        infos = [i for i in self.tracker.served_resources() if (i.gvr.group, i.gvr.version) == (group, version)]
        if not infos:
            return None
        fingerprint = self._fingerprint(infos)
        with self._lock:
            cached = self._v3.get((group, version))
            if cached is not None and cached[0] == fingerprint:
                return cached[2], cached[3]
        doc = self._build_v3(group, version, infos)
        body = orjson.dumps(doc)
        digest = hashlib.sha512(body).hexdigest().upper()
        with self._lock:
            self._v3[(group, version)] = (fingerprint, doc, body, digest)
        return body, digest

    def v2_document(self, protobuf: bool = False) -> bytes:
        """The Swagger 2.0 document of every served resource, as JSON or in gnostic's protobuf encoding."""
        gvs = self._group_versions()
        for group, version in gvs:
            self.v3_document(group, version)
        with self._lock:
            fingerprint = tuple((gv, self._v3[gv][3]) for gv in gvs if gv in self._v3)
            cached = self._v2 if self._v2 is not None and self._v2[0] == fingerprint else None
            docs = [self._v3[gv][1] for gv in gvs if gv in self._v3]
        if cached is None:
            doc = _to_v2(docs)
            cached = (fingerprint, orjson.dumps(doc), encode_document(doc))
            with self._lock:
                self._v2 = cached
        return cached[2] if protobuf else cached[1]

    # -- building ---------------------------------------------------------------------------------------------------------
    def _group_versions(self) -> list[tuple[str, str]]:
        return sorted({(i.gvr.group, i.gvr.version) for i in self.tracker.served_resources()})

    def _crd(self, info: ResourceInfo) -> dict[str, Any] | None:
        if not self.tracker.is_custom(info):
            return None
        try:
            return self.tracker.get(CUSTOM_RESOURCE_DEFINITIONS, "", f"{info.gvr.resource}.{info.gvr.group}")
        except ApiError:
            return None

    def _fingerprint(self, infos: list[ResourceInfo]) -> tuple[Any, ...]:
        parts = []
        for info in sorted(infos, key=lambda i: i.gvr.resource):
            crd = self._crd(info)
            parts.append((info, (crd or {}).get("metadata", {}).get("resourceVersion")))
        return tuple(parts)

    def _build_v3(self, group: str, version: str, infos: list[ResourceInfo]) -> dict[str, Any]:
        api_version = f"{group}/{version}" if group else version
        builtin_roots: list[str] = ["V1Status", "V1DeleteOptions"]
        kind_names: dict[tuple[str, str, str], str] = {}  # gvk → schema name
        custom: dict[str, dict[str, Any]] = {}
        for info in infos:
            for kind in (info.kind, info.list_kind):
                py_name = schemas.kind_definition_name(api_version, kind) if not self.tracker.is_custom(info) else None
                if py_name is not None:
                    builtin_roots.append(py_name)
                    kind_names[(group, version, kind)] = _openapi_name(py_name)
            if (group, version, info.kind) not in kind_names:
                custom.update(self._custom_schemas(info))
                kind_names[(group, version, info.kind)] = _custom_name(group, version, info.kind)
            for sub in info.subresources:
                sub_gvk = _SUBRESOURCE_KINDS.get(sub)
                if sub_gvk is not None:
                    py_name = schemas.kind_definition_name(f"{sub_gvk[0]}/{sub_gvk[1]}", sub_gvk[2])
                    if py_name is not None:
                        builtin_roots.append(py_name)
                        kind_names[sub_gvk] = _openapi_name(py_name)
        if custom:
            builtin_roots += ["V1ObjectMeta", "V1ListMeta"]
        found = _closure(builtin_roots)
        names = {py: _openapi_name(py) for py in found}
        components = {names[py]: _with_patch_extensions(py, _rename_refs(d, names)) for py, d in found.items()}
        components.update(custom)
        components.update(meta_copy(_SHARED_SCHEMAS))
        components["v1.Patch"] = {"type": "object", "description": "Patch is provided to give a concrete name and "
                                  "type to the Kubernetes PATCH request body."}
        paths: dict[str, Any] = {}
        for info in sorted(infos, key=lambda i: i.gvr.resource):
            paths.update(_resource_paths(info, kind_names, self.tracker.is_custom(info)))
        return {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": SERVER_GIT_VERSION},
            "paths": paths,
            "components": {"schemas": dict(sorted(components.items()))},
        }

    def _custom_schemas(self, info: ResourceInfo) -> dict[str, dict[str, Any]]:
        """A custom resource's schema and its List's, as apiextensions-apiserver publishes them."""
        group, version, kind = info.gvr.group, info.gvr.version, info.kind
        crd = self._crd(info)
        schema: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        spec = (crd or {}).get("spec") or {}
        for v in spec.get("versions") or []:
            if v.get("name") == version:
                found = ((v.get("schema") or {}).get("openAPIV3Schema")) or (spec.get("validation") or {}).get("openAPIV3Schema")
                if isinstance(found, dict):
                    schema = orjson.loads(orjson.dumps(found))
        properties = schema.setdefault("properties", {})
        properties["apiVersion"] = {"type": "string", "description": _API_VERSION_DOC}
        properties["kind"] = {"type": "string", "description": _KIND_DOC}
        properties["metadata"] = {"description": _METADATA_DOC, "allOf": [{"$ref": _V3_PREFIX + "v1.ObjectMeta"}]}
        schema["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
        name = _custom_name(group, version, kind)
        listed = {
            "description": f"{kind}List is a list of {kind}",
            "type": "object",
            "required": ["items"],
            "properties": {
                "apiVersion": {"type": "string", "description": _API_VERSION_DOC},
                "items": {"type": "array", "description": f"List of {info.gvr.resource}.", "items": {"$ref": _V3_PREFIX + name}},
                "kind": {"type": "string", "description": _KIND_DOC},
                "metadata": {"description": "Standard list metadata.", "allOf": [{"$ref": _V3_PREFIX + "v1.ListMeta"}]},
            },
            "x-kubernetes-group-version-kind": [{"group": group, "kind": info.list_kind, "version": version}],
        }
        return {name: schema, name + "List": listed}


_API_VERSION_DOC = ("APIVersion defines the versioned schema of this representation of an object. Servers should "
                    "convert recognized schemas to the latest internal value, and may reject unrecognized values.")
_KIND_DOC = ("Kind is a string value representing the REST resource this object represents. Servers may infer this "
             "from the endpoint the client submits requests to. Cannot be updated. In CamelCase.")
_METADATA_DOC = "Standard object's metadata."


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": _V3_PREFIX + name}


def _json_response(schema_name: str) -> dict[str, Any]:
    return {"200": {"description": "OK", "content": {"application/json": {"schema": _ref(schema_name)}}}}


def _resource_paths(info: ResourceInfo, names: Mapping[tuple[str, str, str], str], custom: bool) -> dict[str, Any]:
    group, version, resource, kind = info.gvr.group, info.gvr.version, info.gvr.resource, info.kind
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    gvk = {"group": group, "version": version, "kind": kind}
    kind_name = names.get((group, version, kind), kind)
    list_name = names.get((group, version, info.list_kind), kind_name + "List")
    scope = "Namespaced" if info.namespaced else ""
    prefix = f"{base}/namespaces/{{namespace}}/{resource}" if info.namespaced else f"{base}/{resource}"
    camel = f"{_camel(group)}{version[:1].upper()}{version[1:]}"

    def op(verb: str, action: str, what: str, response: str, target_gvk: Mapping[str, str], body: str | None = None,
           patch_types: tuple[str, ...] = (), params: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        operation: dict[str, Any] = {
            "description": f"{action} the specified {target_gvk['kind']}",
            "operationId": f"{verb}{camel}{scope}{what}",
            "parameters": list(params or []),
            "responses": _json_response(response),
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": dict(target_gvk),
        }
        if body is not None:
            operation["requestBody"] = {"content": {"*/*": {"schema": _ref(body)}}, "required": True}
        if patch_types:
            operation["requestBody"] = {"content": {t: {"schema": _ref("v1.Patch")} for t in patch_types}, "required": True}
        return operation

    path_params = [_parameter("namespace", "path", required=True)] if info.namespaced else []
    patch_types = _CUSTOM_PATCH if custom else _BUILTIN_PATCH
    paths: dict[str, Any] = {
        prefix: {
            "get": op("list", "list", kind, list_name, gvk, params=_LIST_PARAMS),
            "post": op("create", "post", kind, kind_name, gvk, body=kind_name, params=_WRITE_PARAMS),
            "delete": op("deletecollection", "deletecollection", kind, "v1.Status", gvk, params=_LIST_PARAMS),
            "parameters": path_params,
        },
        f"{prefix}/{{name}}": {
            "get": op("read", "get", kind, kind_name, gvk),
            "put": op("replace", "put", kind, kind_name, gvk, body=kind_name, params=_WRITE_PARAMS),
            "patch": op("patch", "patch", kind, kind_name, gvk, patch_types=patch_types,
                        params=[*_WRITE_PARAMS, _parameter("force", kind="boolean")]),
            "delete": op("delete", "delete", kind, "v1.Status", gvk, body="v1.DeleteOptions"),
            "parameters": [_parameter("name", "path", required=True), *path_params],
        },
    }
    if info.namespaced:
        paths[f"{base}/{resource}"] = {"get": op("list", "list", f"{kind}ForAllNamespaces", list_name, gvk,
                                                 params=_LIST_PARAMS)}
    for sub in info.subresources:
        verbs = _SUBRESOURCE_VERBS.get(sub)
        if verbs is None:
            continue
        sub_gvk = _SUBRESOURCE_KINDS.get(sub)
        target = {"group": sub_gvk[0], "version": sub_gvk[1], "kind": sub_gvk[2]} if sub_gvk else gvk
        target_name = names.get(sub_gvk, kind_name) if sub_gvk else kind_name
        what = f"{kind}{sub[:1].upper()}{sub[1:]}"
        entry: dict[str, Any] = {"parameters": [_parameter("name", "path", required=True), *path_params]}
        for verb in verbs:
            entry[verb] = op(_OP_VERBS[verb], _ACTIONS[verb], what, target_name, target,
                             body=target_name if verb == "put" else None,
                             patch_types=patch_types if verb == "patch" else (),
                             params=_WRITE_PARAMS if verb in ("put", "patch") else None)
        paths[f"{prefix}/{{name}}/{sub}"] = entry
    return paths


# -- Swagger 2.0 ------------------------------------------------------------------------------------------------------
def _v2_schema(schema: object) -> Any:
    """A v3 schema in Swagger 2.0 terms: refs under ``#/definitions/`` (``allOf: [{$ref}]`` as a plain ``$ref``, as
    kube's v2 document writes them), quantities and int-or-strings as strings with their format (v2 has no
    ``oneOf``/``anyOf``), ``nullable`` as ``x-nullable``."""
    if isinstance(schema, list):
        return [_v2_schema(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = value.replace(_V3_PREFIX, _V2_PREFIX)
        elif key == "allOf" and isinstance(value, list) and len(value) == 1 and set(value[0]) == {"$ref"}:
            out["$ref"] = value[0]["$ref"].replace(_V3_PREFIX, _V2_PREFIX)  # v2 refers directly
        elif key == "oneOf" and all(isinstance(o, dict) and set(o) == {"type"} for o in value):
            out["type"] = "string"  # a quantity: v2 has no oneOf
        elif key == "anyOf" and schema.get("x-kubernetes-int-or-string") is True:
            out.update(type="string", format="int-or-string")
        elif key == "nullable":
            out["x-nullable"] = value
        else:
            out[key] = _v2_schema(value)
    return out


def _v2_operation(operation: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in operation.items() if k not in ("requestBody", "responses", "parameters")}
    params = [{k: v for k, v in p.items() if k != "schema"} | {"type": p["schema"]["type"], "uniqueItems": True}
              for p in operation.get("parameters") or []]
    body = operation.get("requestBody")
    if body is not None:
        content = body["content"]
        out["consumes"] = list(content)
        schema = next(iter(content.values()))["schema"]
        params.append({"name": "body", "in": "body", "required": True, "schema": _v2_schema(schema)})
    out["parameters"] = params
    out["produces"] = ["application/json", "application/yaml"]
    response = operation["responses"]["200"]["content"]["application/json"]["schema"]
    out["responses"] = {"200": {"description": "OK", "schema": _v2_schema(response)}, "401": {"description": "Unauthorized"}}
    return out


def _to_v2(docs: list[dict[str, Any]]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    definitions: dict[str, Any] = {}
    for doc in docs:
        definitions.update({name: _v2_schema(schema) for name, schema in doc["components"]["schemas"].items()})
        for path, item in doc["paths"].items():
            entry: dict[str, Any] = {}
            for method, operation in item.items():
                if method == "parameters":
                    entry["parameters"] = [{k: v for k, v in p.items() if k != "schema"} | {"type": p["schema"]["type"]}
                                           for p in operation]
                else:
                    entry[method] = _v2_operation(operation)
            paths[path] = entry
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": SERVER_GIT_VERSION},
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
    }


_documents: weakref.WeakKeyDictionary[Any, OpenAPIDocuments] = weakref.WeakKeyDictionary()
_documents_lock = threading.Lock()


def documents_for(tracker: ObjectTracker) -> OpenAPIDocuments:
    """The (cached) documents of ``tracker``."""
    with _documents_lock:
        docs = _documents.get(tracker)
        if docs is None:
            docs = _documents[tracker] = OpenAPIDocuments(tracker)
        return docs
