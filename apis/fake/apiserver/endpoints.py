"""The REST verbs of the sandbox API server on one resource request, independent of HTTP plumbing: each takes the
parsed request, its query, body and headers, and answers a ``Response`` (a Table when the client asks for one).
Errors are raised as ``apis.errors.ApiError`` for the handler to answer as a ``Status``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ... import meta, openapi
from ...errors import ApiError, BadRequestError, ForbiddenError, NotFoundError, new_invalid
from ...resources import CUSTOM_RESOURCE_DEFINITIONS, NAMESPACES
from ...watch import ListOptions
from . import tables
from .options import delete_options, list_options, query_value, validate_list_options
from .request import ResourceRequest, media_type, parse_json, parse_yaml

__all__ = ["Headers", "PATCH_TYPES", "ResourceEndpoints", "Response", "YAML_TYPES"]

PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}
YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml")
FIELD_VALIDATIONS = ("Ignore", "Strict", "Warn")
# Built-in kinds whose DELETE answers a Status; pods and custom resources answer the deleted object.
_STATUS_ON_DELETE_GROUPS = (
    "", "apps", "autoscaling", "batch", "coordination.k8s.io", "apiextensions.k8s.io", "events.k8s.io"
)


class Headers(Protocol):
    def get(self, name: str, default: Any = None) -> Any: ...


@dataclass
class Response:
    """What to answer: the HTTP code, the JSON body and extra headers."""

    code: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


class ResourceEndpoints:
    """get, list, create, update, patch, delete and deletecollection over ``sandbox.tracker``.

    ``sandbox`` needs ``tracker`` and ``namespace_lifecycle`` (whether creation needs an existing namespace).
    """

    def __init__(self, sandbox: Any) -> None:
        self.sandbox = sandbox

    @property
    def tracker(self) -> Any:
        return self.sandbox.tracker

    # -- answers ----------------------------------------------------------------------------------------------------
    def _answer(
        self, code: int, req: ResourceRequest, obj: dict[str, Any], headers: Headers, extra: dict[str, str] | None = None
    ) -> Response:
        table_version = tables.wanted_table_version(headers.get("Accept"))
        if table_version:
            obj = tables.to_table(obj, req.gvr.group, req.gvr.resource, table_version, self.printer_columns(req))
        return Response(code, obj, extra or {})

    def _crd(self, req: ResourceRequest) -> dict[str, Any] | None:
        if req.gvr.group in _STATUS_ON_DELETE_GROUPS:
            return None
        try:
            return self.tracker.get(CUSTOM_RESOURCE_DEFINITIONS, "", f"{req.gvr.resource}.{req.gvr.group}")
        except ApiError:
            return None

    def printer_columns(self, req: ResourceRequest) -> list[Any] | None:
        """A custom resource's additionalPrinterColumns for the request's version (None: the built-in columns)."""
        crd = self._crd(req)
        return tables.crd_printer_columns(crd, req.gvr.version) if crd is not None else None

    def _crd_schema(self, req: ResourceRequest) -> dict[str, Any] | None:
        crd = self._crd(req)
        for version in ((crd or {}).get("spec") or {}).get("versions") or []:
            if version.get("name") == req.gvr.version:
                return ((version.get("schema") or {}).get("openAPIV3Schema")) or None
        return None

    def _field_validation(
        self, req: ResourceRequest, query: dict[str, list[str]], obj: dict[str, Any] | None, options_kind: str
    ) -> dict[str, str]:
        """Server-side field validation of a custom resource body (``fieldValidation``, default Warn): unknown
        fields are a 400 under Strict, ``Warning`` headers under Warn; the answer is the headers to send."""
        directive = query_value(query, "fieldValidation") or "Warn"
        if directive not in FIELD_VALIDATIONS:
            supported = ", ".join(f'"{v}"' for v in FIELD_VALIDATIONS)
            message = f'Unsupported value: "{directive}": supported values: {supported}'
            cause = {"type": "FieldValueNotSupported", "field": "fieldValidation", "message": message}
            raise new_invalid(options_kind, "", [cause], "meta.k8s.io")
        schema = self._crd_schema(req) if obj is not None and directive != "Ignore" else None
        if schema is None:
            return {}
        unknown: list[str] = []
        openapi.prune(schema, meta.deep_copy(obj), pruned=unknown)
        if not unknown:
            return {}
        problems = [f'unknown field "{path}"' for path in unknown]
        if directive == "Strict":
            kind, version = req.info.kind, req.gvr.version
            raise BadRequestError(
                f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding error: '
                + ", ".join(problems)
            )
        quoted = [p.replace("\\", "\\\\").replace('"', '\\"') for p in problems]
        return {"Warning": ", ".join(f'299 - "{q}"' for q in quoted)}

    def _admit_create(self, req: ResourceRequest, name: str) -> None:
        """The NamespaceLifecycle admission plugin: no creation in a terminating namespace, nor (only when the sandbox
        runs with ``namespace_lifecycle``) in a missing one — by default namespaces need not exist."""
        if not req.namespace:
            return
        try:
            namespace = self.tracker.get(NAMESPACES, "", req.namespace)
        except NotFoundError:
            if self.sandbox.namespace_lifecycle:
                raise  # 404 namespaces "<ns>" not found
            return
        if meta.deletion_timestamp(namespace):
            why = f"unable to create new content in namespace {req.namespace} because it is being terminated"
            cause = {"type": "NamespaceTerminating", "message": why, "field": "metadata.namespace"}
            group = f".{req.gvr.group}" if req.gvr.group else ""
            raise ForbiddenError(
                403,
                "Forbidden",
                f'{req.gvr.resource}{group} "{name}" is forbidden: {why}',
                details={"name": name, "group": req.gvr.group, "kind": req.gvr.resource, "causes": [cause]},
            )

    @staticmethod
    def _decode_object(body: bytes, headers: Headers) -> dict[str, Any]:
        if not body.strip():
            raise BadRequestError("the request body is empty: expected a JSON (or YAML) object")
        media = media_type(headers.get("Content-Type"))
        obj = parse_yaml(body) if media in YAML_TYPES else parse_json(body)
        if not isinstance(obj, dict):
            raise BadRequestError(f"the request body must be a JSON object, got {type(obj).__name__}")
        return obj

    # -- verbs ------------------------------------------------------------------------------------------------------
    def list(self, req: ResourceRequest, options: ListOptions, headers: Headers) -> Response:
        return self._answer(200, req, self.tracker.list(req.gvr, req.namespace, options), headers)

    def get(self, req: ResourceRequest, headers: Headers) -> Response:
        return self._answer(200, req, self.tracker.get(req.gvr, req.namespace, req.name), headers)

    def create(self, req: ResourceRequest, query: dict[str, list[str]], body: bytes, headers: Headers) -> Response:
        obj = self._decode_object(body, headers)
        warnings = self._field_validation(req, query, obj, "CreateOptions")
        self._admit_create(req, meta.name(obj))
        created = self.tracker.create(req.gvr, obj, req.namespace)
        return self._answer(201, req, created, headers, warnings)

    def update(self, req: ResourceRequest, query: dict[str, list[str]], body: bytes, headers: Headers) -> Response:
        obj = self._decode_object(body, headers)
        warnings = self._field_validation(req, query, obj, "UpdateOptions")
        body_name = meta.name(obj)
        if body_name != req.name:  # an update names its object in the body too, as kube-apiserver's checkName wants
            raise BadRequestError(
                f"the name of the object ({body_name}) does not match the name on the URL ({req.name})"
            )
        updated = self.tracker.update(req.gvr, obj, req.namespace, subresource=req.subresource)
        return self._answer(200, req, updated, headers, warnings)

    def patch(self, req: ResourceRequest, query: dict[str, list[str]], body: bytes, headers: Headers) -> Response:
        media = media_type(headers.get("Content-Type"))
        patch_type = PATCH_TYPES.get(media)
        if patch_type is None:
            raise ApiError(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format ({media or 'no Content-Type'}) - accepted media "
                "types include: " + ", ".join(PATCH_TYPES),
            )
        if not body.strip():
            raise BadRequestError("the patch body is empty")
        patch = parse_yaml(body, "apply patch") if patch_type == "apply" else parse_json(body, "patch")
        # an apply configuration is a whole (partial) object; other patches are checked for the directive only
        warnings = self._field_validation(
            req, query, patch if patch_type == "apply" and isinstance(patch, dict) else None, "PatchOptions"
        )
        if patch_type == "apply":
            if not isinstance(patch, dict):
                raise BadRequestError("an apply patch must be a YAML or JSON object")
            if not query_value(query, "fieldManager"):
                raise BadRequestError("PATCH with application/apply-patch+yaml requires the fieldManager query parameter")
            if req.subresource is None and not self._exists(req):
                self._admit_create(req, req.name)  # an apply that creates is a create
        outcome = self.tracker.patch_with_outcome(
            req.gvr, req.namespace, req.name, patch, patch_type, subresource=req.subresource
        )
        return self._answer(201 if outcome.created else 200, req, outcome.object, headers, warnings)

    def _exists(self, req: ResourceRequest) -> bool:
        try:
            self.tracker.get(req.gvr, req.namespace, req.name)
        except NotFoundError:
            return False
        return True

    def delete(self, req: ResourceRequest, query: dict[str, list[str]], body: bytes) -> Response:
        options = delete_options(query, body)
        deleted = self.tracker.delete(req.gvr, req.namespace, req.name, options.policy, options.preconditions)
        pending = bool(meta.deletion_timestamp(deleted))
        # kube-apiserver answers 200 whether the object went away or is only marked, except 202 for an object not
        # deleted yet when the request said orphanDependents=false.
        code = 202 if pending and options.orphan_dependents is False else 200
        if pending or req.gvr.group not in _STATUS_ON_DELETE_GROUPS or req.gvr.resource == "pods":
            return Response(code, deleted)
        return Response(code, _success_status(req, deleted))

    def delete_collection(self, req: ResourceRequest, query: dict[str, list[str]], body: bytes) -> Response:
        """As kube-apiserver: list with the selectors, delete each item with the request's DeleteOptions (one gone
        meanwhile is skipped), answer the list of what was deleted."""
        options = delete_options(query, body)
        selection = list_options(query)
        validate_list_options(selection, watch=False)
        selection.limit, selection.continue_ = None, None
        listed = self.tracker.list(req.gvr, req.namespace, selection)
        for item in listed["items"]:
            try:
                self.tracker.delete(req.gvr, meta.namespace(item), meta.name(item), options.policy, options.preconditions)
            except NotFoundError:
                continue
        return Response(200, listed)


def _success_status(req: ResourceRequest, deleted: Mapping[str, Any] | None) -> dict[str, Any]:
    details: dict[str, Any] = {"group": req.gvr.group, "kind": req.gvr.resource}
    if deleted:
        details.update(name=meta.name(deleted), uid=meta.uid(deleted))
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}
