"""HTTP request handling of the sandbox API server: routing, CRUD, patch, delete, watch streaming, errors.

One ``SandboxRequestHandler`` per connection (HTTP/1.1 keep-alive); watches are streamed with chunked transfer
encoding, one JSON object per line (``{"type": ..., "object": ...}``), as the kube-apiserver does. Every failure is
answered with a Kubernetes ``Status`` body and the matching HTTP code.
"""

from __future__ import annotations

import socket
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

import orjson
import structlog

from .. import meta, openapi
from ..errors import (
    ApiError,
    BadRequestError,
    ForbiddenError,
    MethodNotAllowedError,
    NotFoundError,
    new_invalid,
)
from ..resources import CUSTOM_RESOURCE_DEFINITIONS, NAMESPACES
from ..watch import ListOptions
from . import discovery, tables
from .apiserver_request import (
    DeleteRequestOptions,
    ResourceRequest,
    media_type,
    not_found_path,
    parse_json,
    parse_resource_path,
    parse_yaml,
)
from .apiserver_watch import WatchStreamMixin, list_options, query_bool, query_value, validate_list_options
from .faults import Faults

__all__ = ["SandboxRequestHandler", "SandboxContext", "ResourceRequest", "parse_resource_path"]

log = structlog.get_logger()

MAX_BODY_BYTES = 16 * 1024 * 1024
PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}
YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml")
HEALTH_PATHS = ("/healthz", "/livez", "/readyz")
PROPAGATION_POLICIES = ("Orphan", "Background", "Foreground")
FIELD_VALIDATIONS = ("Ignore", "Strict", "Warn")
# Built-in kinds whose DELETE answers a Status; pods and custom resources answer the deleted object.
_STATUS_ON_DELETE_GROUPS = ("", "apps", "autoscaling", "batch", "coordination.k8s.io", "apiextensions.k8s.io")


class SandboxContext(Protocol):
    """What the handler needs from the server that owns it."""

    tracker: Any
    faults: Faults
    stopping: Any  # threading.Event
    namespace_lifecycle: bool

    @property
    def server_address_text(self) -> str: ...

    def track_watch(self, watch: Any) -> None: ...

    def untrack_watch(self, watch: Any) -> None: ...



class SandboxRequestHandler(WatchStreamMixin, BaseHTTPRequestHandler):
    """Serves one HTTP/1.1 connection of the sandbox API server."""

    protocol_version = "HTTP/1.1"
    server_version = "sandbox-apiserver"
    timeout = 120  # idle keep-alive connections are closed after this many seconds

    # -- plumbing -------------------------------------------------------------------------------------------------
    def setup(self) -> None:
        super().setup()
        # Responses and watch events are small writes: without TCP_NODELAY, Nagle's algorithm holds each one back
        # until the client's delayed ACK (~40 ms) on a kept-alive connection. kube-apiserver (Go) sets it too.
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass

    @property
    def sandbox(self) -> SandboxContext:
        return self.server.sandbox  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the stderr access log
        return

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch("DELETE")

    def do_HEAD(self) -> None:  # noqa: N802
        self._dispatch("HEAD")

    def do_OPTIONS(self) -> None:  # noqa: N802
        self._dispatch("OPTIONS")

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks, total = [], 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                total += size
                if total > MAX_BODY_BYTES:
                    raise ApiError(413, "RequestEntityTooLarge", f"request body larger than {MAX_BODY_BYTES} bytes")
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            raise ApiError(413, "RequestEntityTooLarge", f"request body larger than {MAX_BODY_BYTES} bytes")
        return self.rfile.read(length) if length > 0 else b""

    def _send_bytes(self, code: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache, private")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        # status line, headers and body leave in one write
        self._headers_buffer.append(b"\r\n")
        if self.command != "HEAD":
            self._headers_buffer.append(data)
        self.flush_headers()

    def _send_json(self, code: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(code, orjson.dumps(obj), "application/json", headers)

    def _send_error(self, err: ApiError, headers: dict[str, str] | None = None) -> None:
        status = err.to_status()
        if not status.get("reason"):
            status.pop("reason", None)  # StatusReasonUnknown is omitted on the wire
        self._send_json(err.status, status, headers)

    # -- dispatch -------------------------------------------------------------------------------------------------
    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        path = unquote(url.path).rstrip("/") or "/"
        query = parse_qs(url.query, keep_blank_values=True)
        try:
            body = self._read_body()
        except (ApiError, ValueError) as exc:
            self.close_connection = True
            err = exc if isinstance(exc, ApiError) else BadRequestError(f"unreadable request body: {exc}")
            self._send_error(err)
            return
        try:
            if path in HEALTH_PATHS or path.startswith(tuple(p + "/" for p in HEALTH_PATHS)):
                self._send_bytes(200, b"ok", "text/plain; charset=utf-8")
                return
            delay = self.sandbox.faults.latency_seconds()
            if delay:
                self.sandbox.stopping.wait(delay)
            parts = [p for p in path.split("/") if p]
            if self._serve_discovery(method, path, parts):
                return
            self._serve_resource(method, parts, query, body)
        except ApiError as err:
            self._send_error(err)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # a bug in the sandbox: answer 500 and keep serving
            log.exception("sandbox request failed", method=method, path=path)
            self._send_error(ApiError(500, "InternalError", f"internal error in the sandbox API server: {exc!r}"))

    def _serve_discovery(self, method: str, path: str, parts: list[str]) -> bool:
        """Answer /version, /api, /apis, group and group-version documents and /openapi; False for anything else."""
        is_discovery = path in ("/version", "/api", "/apis") or path.startswith("/openapi") or (
            (parts[:1] == ["api"] and len(parts) == 2) or (parts[:1] == ["apis"] and len(parts) in (2, 3))
        )
        if not is_discovery:
            return False
        if method not in ("GET", "HEAD"):
            raise MethodNotAllowedError("the server does not allow this method on the requested resource")
        infos = self.sandbox.tracker.served_resources()
        doc: dict[str, Any] | None
        if path == "/version":
            doc = discovery.version_info()
        elif path == "/api":
            doc = discovery.core_api_versions(self.sandbox.server_address_text)
        elif path == "/apis":
            doc = discovery.group_list(infos)
        elif parts[0] == "api":
            doc = discovery.resource_list(infos, "", parts[1])
        elif parts[0] == "apis" and len(parts) == 2:
            doc = discovery.api_group(infos, parts[1])
        elif parts[0] == "apis":
            doc = discovery.resource_list(infos, parts[1], parts[2])
        elif path == "/openapi/v2":
            protobuf = "proto-openapi.spec.v2" in (self.headers.get("Accept") or "")
            self._send_bytes(200, *discovery.openapi_v2(protobuf))
            return True
        else:  # /openapi/v3 is not served: clients fall back to /openapi/v2
            doc = None
        if doc is None:
            raise not_found_path()
        self._send_json(200, doc)
        return True

    def _inject_error(self) -> bool:
        code = self.sandbox.faults.pick_error()
        if code == 429:
            err = ApiError(429, "TooManyRequests", "sandbox fault injection: too many requests, please try again later")
            err.details = {"retryAfterSeconds": 1}
            self._send_error(err, {"Retry-After": "1"})
            return True
        if code == 500:
            self._send_error(ApiError(500, "InternalError", "sandbox fault injection: internal error"))
            return True
        return False

    def _serve_resource(self, method: str, parts: list[str], query: dict[str, list[str]], body: bytes) -> None:
        if parts[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise not_found_path()
        req = parse_resource_path(self.sandbox.tracker, group, version, rest)
        if self._inject_error():
            return
        if query_value(query, "dryRun"):
            raise BadRequestError("dryRun is not supported by the sandbox API server")
        is_watch = req.watch or bool(query_bool(query, "watch"))
        if not req.name:
            if method in ("GET", "HEAD"):
                options = list_options(query)
                validate_list_options(options, is_watch)
                if is_watch:
                    self._serve_watch(req, options)
                else:
                    self._serve_list(req, options)
            elif method == "POST" and (req.namespace or not req.info.namespaced):
                self._create(req, query, body)
            elif method == "DELETE" and (req.namespace or not req.info.namespaced):
                self._delete_collection(req, query, body)
            else:
                raise MethodNotAllowedError("the server does not allow this method on the requested resource")
            return
        if is_watch:  # a watch on one object: the collection watch narrowed to its name
            options = list_options(query)
            validate_list_options(options, True)
            options.field_selector = ",".join(filter(None, [options.field_selector, f"metadata.name={req.name}"]))
            self._serve_watch(req, options)
        elif method in ("GET", "HEAD"):
            self._get(req, query)
        elif method == "PUT":
            self._update(req, query, body)
        elif method == "PATCH":
            self._patch(req, query, body)
        elif method == "DELETE" and req.subresource is None:
            self._delete(req, query, body)
        else:
            raise MethodNotAllowedError("the server does not allow this method on the requested resource")

    # -- verbs ----------------------------------------------------------------------------------------------------
    def _respond_object(
        self, code: int, req: ResourceRequest, obj: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        table_version = tables.wanted_table_version(self.headers.get("Accept"))
        if table_version:
            obj = tables.to_table(obj, req.gvr.group, req.gvr.resource, table_version, self._printer_columns(req))
        self._send_json(code, obj, headers)

    def _crd_schema(self, req: ResourceRequest) -> dict[str, Any] | None:
        if req.gvr.group in _STATUS_ON_DELETE_GROUPS:
            return None
        try:
            crd = self.sandbox.tracker.get(CUSTOM_RESOURCE_DEFINITIONS, "", f"{req.gvr.resource}.{req.gvr.group}")
        except ApiError:
            return None
        for version in (crd.get("spec") or {}).get("versions") or []:
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

    def _printer_columns(self, req: ResourceRequest) -> list[Any] | None:
        if req.gvr.group in _STATUS_ON_DELETE_GROUPS:
            return None
        try:
            crd = self.sandbox.tracker.get(CUSTOM_RESOURCE_DEFINITIONS, "", f"{req.gvr.resource}.{req.gvr.group}")
        except ApiError:
            return None
        return tables.crd_printer_columns(crd, req.gvr.version)

    def _serve_list(self, req: ResourceRequest, options: ListOptions) -> None:
        result = self.sandbox.tracker.list(req.gvr, req.namespace, options)
        self._respond_object(200, req, result)

    def _get(self, req: ResourceRequest, query: dict[str, list[str]]) -> None:
        self._respond_object(200, req, self.sandbox.tracker.get(req.gvr, req.namespace, req.name))

    def _decode_object(self, body: bytes) -> dict[str, Any]:
        if not body.strip():
            raise BadRequestError("the request body is empty: expected a JSON (or YAML) object")
        media = media_type(self.headers.get("Content-Type"))
        obj = parse_yaml(body) if media in YAML_TYPES else parse_json(body)
        if not isinstance(obj, dict):
            raise BadRequestError(f"the request body must be a JSON object, got {type(obj).__name__}")
        return obj

    def _admit_create(self, req: ResourceRequest, name: str) -> None:
        """The NamespaceLifecycle admission plugin: no creation in a terminating namespace, nor (only when the sandbox
        runs with ``namespace_lifecycle``) in a missing one — by default namespaces need not exist."""
        if not req.namespace:
            return
        try:
            namespace = self.sandbox.tracker.get(NAMESPACES, "", req.namespace)
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

    def _exists(self, req: ResourceRequest) -> bool:
        try:
            self.sandbox.tracker.get(req.gvr, req.namespace, req.name)
        except NotFoundError:
            return False
        return True

    def _create(self, req: ResourceRequest, query: dict[str, list[str]], body: bytes) -> None:
        obj = self._decode_object(body)
        warnings = self._field_validation(req, query, obj, "CreateOptions")
        self._admit_create(req, meta.name(obj))
        created = self.sandbox.tracker.create(req.gvr, obj, req.namespace)
        self._respond_object(201, req, created, warnings)

    def _update(self, req: ResourceRequest, query: dict[str, list[str]], body: bytes) -> None:
        obj = self._decode_object(body)
        warnings = self._field_validation(req, query, obj, "UpdateOptions")
        body_name = meta.name(obj)
        if body_name != req.name:  # an update names its object in the body too, as kube-apiserver's checkName wants
            raise BadRequestError(
                f"the name of the object ({body_name}) does not match the name on the URL ({req.name})"
            )
        updated = self.sandbox.tracker.update(req.gvr, obj, req.namespace, subresource=req.subresource)
        self._respond_object(200, req, updated, warnings)

    def _patch(self, req: ResourceRequest, query: dict[str, list[str]], body: bytes) -> None:
        media = media_type(self.headers.get("Content-Type"))
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
        outcome = self.sandbox.tracker.patch_with_outcome(
            req.gvr, req.namespace, req.name, patch, patch_type, subresource=req.subresource
        )
        self._respond_object(201 if outcome.created else 200, req, outcome.object, warnings)

    def _delete_options(self, query: dict[str, list[str]], body: bytes) -> DeleteRequestOptions:
        """DeleteOptions from the body or, when there is none, from the query (as kube-apiserver reads them)."""
        if body.strip():
            parsed = parse_json(body, "DeleteOptions body")
            if not isinstance(parsed, dict):
                raise BadRequestError("the DeleteOptions body must be a JSON object")
            policy, orphan, preconditions = parsed.get("propagationPolicy"), parsed.get("orphanDependents"), parsed.get("preconditions")
            if orphan is not None and not isinstance(orphan, bool):
                raise BadRequestError(f"DeleteOptions.orphanDependents must be a boolean, got {orphan!r}")
        else:
            policy, preconditions = query_value(query, "propagationPolicy"), None
            raw_orphan = query_value(query, "orphanDependents")
            orphan = None
            if raw_orphan is not None:
                if raw_orphan.lower() not in ("true", "false"):
                    raise BadRequestError(f"invalid value for query parameter orphanDependents: {raw_orphan!r} is not a boolean")
                orphan = raw_orphan.lower() == "true"
        if policy is not None and policy not in PROPAGATION_POLICIES:
            raise BadRequestError(
                f"invalid propagationPolicy {policy!r}: supported values: " + ", ".join(PROPAGATION_POLICIES)
            )
        if policy is not None and orphan is not None:
            cause = {
                "type": "FieldValueInvalid",
                "field": "propagationPolicy",
                "message": f'Invalid value: "{policy}": orphanDependents and deletionPropagation cannot be both set',
            }
            raise new_invalid("DeleteOptions", "", [cause], "meta.k8s.io")
        if orphan is not None:  # the deprecated field: true orphans, false collects in the background
            policy = "Orphan" if orphan else "Background"
        if preconditions is not None and not isinstance(preconditions, dict):
            raise BadRequestError("DeleteOptions.preconditions must be an object with uid and/or resourceVersion")
        return DeleteRequestOptions(policy, orphan, preconditions or None)

    def _delete(self, req: ResourceRequest, query: dict[str, list[str]], body: bytes) -> None:
        options = self._delete_options(query, body)
        deleted = self.sandbox.tracker.delete(req.gvr, req.namespace, req.name, options.policy, options.preconditions)
        pending = bool(meta.deletion_timestamp(deleted))
        # kube-apiserver answers 200 whether the object went away or is only marked, except 202 for an object not
        # deleted yet when the request said orphanDependents=false.
        code = 202 if pending and options.orphan_dependents is False else 200
        if pending or req.gvr.group not in _STATUS_ON_DELETE_GROUPS or req.gvr.resource == "pods":
            self._send_json(code, deleted)
            return
        self._send_json(code, self._success_status(req, deleted))

    @staticmethod
    def _success_status(req: ResourceRequest, deleted: dict[str, Any] | None) -> dict[str, Any]:
        details: dict[str, Any] = {"group": req.gvr.group, "kind": req.gvr.resource}
        if deleted:
            details.update(name=meta.name(deleted), uid=meta.uid(deleted))
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}

    def _delete_collection(self, req: ResourceRequest, query: dict[str, list[str]], body: bytes) -> None:
        """As kube-apiserver: list with the selectors, delete each item with the request's DeleteOptions (one gone
        meanwhile is skipped), answer the list of what was deleted."""
        delete_options = self._delete_options(query, body)
        options = list_options(query)
        validate_list_options(options, watch=False)
        options.limit, options.continue_ = None, None
        listed = self.sandbox.tracker.list(req.gvr, req.namespace, options)
        for item in listed["items"]:
            try:
                self.sandbox.tracker.delete(
                    req.gvr, meta.namespace(item), meta.name(item), delete_options.policy, delete_options.preconditions
                )
            except NotFoundError:
                continue
        self._send_json(200, listed)
