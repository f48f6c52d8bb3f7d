"""The REST verbs of the sandbox API server on one resource request, independent of HTTP plumbing: each takes the
parsed request, its query, body and headers, and answers a ``Response`` (a Table when the client asks for one).
Errors are raised as ``apis.errors.ApiError`` for the handler to answer as a ``Status``."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from apis import meta
from apis.errors import ApiError, BadRequestError, NotFoundError, new_invalid, new_not_found
from apis.resources import CUSTOM_RESOURCE_DEFINITIONS, EVENTS_V1
from apis.watch import ListOptions

from . import tables
from .admission import NamespaceLifecycle
from .columns import Column
from .options import delete_options, dry_run, list_options, query_value, validate_list_options
from .request import Headers, ResourceRequest, media_type, parse_json, parse_yaml

if TYPE_CHECKING:  # context.py imports the endpoints through eventsv1
    from .context import ServedTracker, ServingContext

__all__ = ["BODY_TYPES", "Headers", "PATCH_TYPES", "ResourceEndpoints", "Response", "unsupported_media_type"]

# In the order kube-apiserver lists them in its 415 answer.
PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}
JSON_TYPE, YAML_TYPE = "application/json", "application/yaml"
BODY_TYPES = (JSON_TYPE, YAML_TYPE)
FIELD_VALIDATIONS = ("Ignore", "Strict", "Warn")
# Built-in kinds whose DELETE answers a Status; pods and custom resources answer the deleted object.
_STATUS_ON_DELETE_GROUPS = (
    "", "apps", "autoscaling", "batch", "coordination.k8s.io", "apiextensions.k8s.io", "events.k8s.io"
)


def unsupported_media_type(accepted: Iterable[str]) -> ApiError:
    """kube-apiserver's 415 for a body it cannot decode."""
    return ApiError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: " + ", ".join(accepted),
    )


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

    def __init__(self, sandbox: ServingContext) -> None:
        self.sandbox = sandbox
        self.namespaces = NamespaceLifecycle(sandbox.tracker, sandbox.namespace_lifecycle)

    @property
    def tracker(self) -> ServedTracker:
        return self.sandbox.tracker

    # -- answers ----------------------------------------------------------------------------------------------------
    def _answer(
        self,
        code: int,
        req: ResourceRequest,
        obj: Mapping[str, Any],
        headers: Headers,
        query: dict[str, list[str]],
        extra: dict[str, str] | None = None,
    ) -> Response:
        table = tables.table_options(headers.get("Accept"), query)
        if table:
            obj = tables.to_table(obj, req.gvr.group, req.gvr.resource, table, self.printer_columns(req))
        return Response(code, obj, extra or {})

    def _crd(self, req: ResourceRequest) -> dict[str, Any] | None:
        if req.gvr.group in _STATUS_ON_DELETE_GROUPS:
            return None
        try:
            return self.tracker.get(CUSTOM_RESOURCE_DEFINITIONS, "", f"{req.gvr.resource}.{req.gvr.group}")
        except ApiError:
            return None

    def printer_columns(self, req: ResourceRequest) -> list[Column] | None:
        """A custom resource's additionalPrinterColumns for the request's version (None: the built-in columns)."""
        crd = self._crd(req)
        return tables.crd_printer_columns(crd, req.gvr.version) if crd is not None else None

    def _field_validation(
        self, req: ResourceRequest, query: dict[str, list[str]], obj: dict[str, Any] | None, options_kind: str
    ) -> dict[str, str]:
        """Server-side field validation of a body (``fieldValidation``, default Warn): fields the kind does not
        have (or its CRD's schema prunes) are a 400 under Strict, ``Warning`` headers under Warn (they are dropped
        either way); the answer is the headers to send."""
        directive = query_value(query, "fieldValidation") or "Warn"
        if directive not in FIELD_VALIDATIONS:
            supported = ", ".join(f'"{v}"' for v in FIELD_VALIDATIONS)
            message = f'Unsupported value: "{directive}": supported values: {supported}'
            cause = {"type": "FieldValueNotSupported", "field": "fieldValidation", "message": message}
            raise new_invalid(options_kind, "", [cause], "meta.k8s.io")
        if obj is None or directive == "Ignore":
            return {}
        return self._unknown_field_answer(req, directive, self.tracker.unknown_fields(req.gvr, obj))

    def _walks_once(self, req: ResourceRequest, query: dict[str, list[str]]) -> bool:
        """Under Warn, a built-in kind's unknown fields come from the write's own decoding walk (one walk, not two);
        Strict must refuse before writing, and a custom resource's come from its CRD's pruning."""
        directive = query_value(query, "fieldValidation") or "Warn"
        return directive == "Warn" and req.gvr != EVENTS_V1 and not self.tracker.is_custom(req.info)

    @staticmethod
    def _unknown_field_answer(req: ResourceRequest, directive: str, unknown: list[str]) -> dict[str, str]:
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

    @staticmethod
    def _decode_object(body: bytes, headers: Headers) -> dict[str, Any]:
        # kube-apiserver takes a missing Content-Type as its first media type (JSON); others are 415
        media = media_type(headers.get("Content-Type")) or JSON_TYPE
        if media not in BODY_TYPES:
            raise unsupported_media_type(BODY_TYPES)
        if not body.strip():
            raise BadRequestError("the request body is empty: expected a JSON (or YAML) object")
        obj = parse_yaml(body) if media == YAML_TYPE else parse_json(body)
        if not isinstance(obj, dict):
            raise BadRequestError(f"the request body must be a JSON object, got {type(obj).__name__}")
        return obj

    # -- verbs ------------------------------------------------------------------------------------------------------
    def list(
        self, req: ResourceRequest, options: ListOptions, headers: Headers, query: dict[str, builtins.list[str]]
    ) -> Response:
        # the stored objects themselves: the answer is only serialized (a copy cost more than the rest of a list)
        listed = self.tracker.list(req.gvr, req.namespace, options, copy=False)
        return self._answer(200, req, listed, headers, query)

    def get(self, req: ResourceRequest, headers: Headers, query: dict[str, builtins.list[str]]) -> Response:
        found = self.tracker.peek(req.gvr, req.namespace, req.name)  # read-only, only serialized
        if found is None:
            raise new_not_found(req.gvr.resource, req.name, req.gvr.group)
        return self._answer(200, req, found, headers, query)

    def create(self, req: ResourceRequest, query: dict[str, builtins.list[str]], body: bytes, headers: Headers) -> Response:
        dry = dry_run(query.get("dryRun"), "CreateOptions")
        obj = self._decode_object(body, headers)
        once = self._walks_once(req, query)
        warnings = self._field_validation(req, query, None if once else obj, "CreateOptions")
        self.namespaces.admit("create", req, meta.name(obj))
        unknown: list[str] = []
        created = self.tracker.create(req.gvr, obj, req.namespace, dry_run=dry, copy=False,  # only serialized
                                      unknown=unknown if once else None)
        if once:
            warnings = self._unknown_field_answer(req, "Warn", unknown)
        return self._answer(201, req, created, headers, query, warnings)

    def update(self, req: ResourceRequest, query: dict[str, builtins.list[str]], body: bytes, headers: Headers) -> Response:
        dry = dry_run(query.get("dryRun"), "UpdateOptions")
        obj = self._decode_object(body, headers)
        once = self._walks_once(req, query)
        warnings = self._field_validation(req, query, None if once else obj, "UpdateOptions")
        body_name = meta.name(obj)
        if body_name != req.name:  # an update names its object in the body too, as kube-apiserver's checkName wants
            raise BadRequestError(
                f"the name of the object ({body_name}) does not match the name on the URL ({req.name})"
            )
        self.namespaces.admit("update", req, req.name)
        unknown: list[str] = []
        updated = self.tracker.update(req.gvr, obj, req.namespace, subresource=req.subresource, dry_run=dry,
                                      copy=False, unknown=unknown if once else None)  # only serialized
        if once:
            warnings = self._unknown_field_answer(req, "Warn", unknown)
        return self._answer(200, req, updated, headers, query, warnings)

    def patch(self, req: ResourceRequest, query: dict[str, builtins.list[str]], body: bytes, headers: Headers) -> Response:
        dry = dry_run(query.get("dryRun"), "PatchOptions")
        patch_type = PATCH_TYPES.get(media_type(headers.get("Content-Type")))
        custom = self.tracker.is_custom(req.info)
        if patch_type is None or (patch_type == "strategic" and custom):
            raise unsupported_media_type([t for t, p in PATCH_TYPES.items() if not (custom and p == "strategic")])
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
        creates = patch_type == "apply" and req.subresource is None and not self._exists(req)
        self.namespaces.admit("create" if creates else "update", req, req.name)  # an apply that creates is a create
        outcome = self.tracker.patch_with_outcome(
            req.gvr, req.namespace, req.name, patch, patch_type, subresource=req.subresource, dry_run=dry
        )
        return self._answer(201 if outcome.created else 200, req, outcome.object, headers, query, warnings)

    def _exists(self, req: ResourceRequest) -> bool:
        try:
            self.tracker.get(req.gvr, req.namespace, req.name)
        except NotFoundError:
            return False
        return True

    @staticmethod
    def _check_body_type(body: bytes, headers: Headers) -> None:
        if body.strip() and (media_type(headers.get("Content-Type")) or JSON_TYPE) not in BODY_TYPES:
            raise unsupported_media_type(BODY_TYPES)

    def delete(self, req: ResourceRequest, query: dict[str, builtins.list[str]], body: bytes, headers: Headers) -> Response:
        self._check_body_type(body, headers)
        options = delete_options(query, body)
        self.namespaces.admit("delete", req, req.name)
        deleted = self.tracker.delete(
            req.gvr, req.namespace, req.name, options.policy, options.preconditions, dry_run=options.dry_run
        )
        pending = bool(meta.deletion_timestamp(deleted))
        # kube-apiserver answers 200 whether the object went away or is only marked, except 202 for an object not
        # deleted yet when the request said orphanDependents=false.
        code = 202 if pending and options.orphan_dependents is False else 200
        if pending or req.gvr.group not in _STATUS_ON_DELETE_GROUPS or req.gvr.resource == "pods":
            return Response(code, deleted)
        return Response(code, _success_status(req, deleted))

    def delete_collection(
        self, req: ResourceRequest, query: dict[str, builtins.list[str]], body: bytes, headers: Headers
    ) -> Response:
        """As kube-apiserver: list with the selectors, delete each item with the request's DeleteOptions (one gone
        meanwhile is skipped), answer the list of what was deleted."""
        self._check_body_type(body, headers)
        options = delete_options(query, body)
        selection = list_options(query)
        validate_list_options(selection, watch=False)
        selection.limit, selection.continue_ = None, None
        listed = self.tracker.list(req.gvr, req.namespace, selection)
        for item in listed["items"]:
            try:
                self.tracker.delete(
                    req.gvr, meta.namespace(item), meta.name(item), options.policy, options.preconditions,
                    dry_run=options.dry_run,
                )
            except NotFoundError:
                continue
        return Response(200, listed)


def _success_status(req: ResourceRequest, deleted: Mapping[str, Any] | None) -> dict[str, Any]:
    details: dict[str, Any] = {"group": req.gvr.group, "kind": req.gvr.resource}
    if deleted:
        details.update(name=meta.name(deleted), uid=meta.uid(deleted))
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}
