"""HTTP plumbing of the sandbox API server: one ``SandboxRequestHandler`` per connection (HTTP/1.1 keep-alive)
reads the request, answers health probes and discovery, injects faults, and routes resource requests to the
``ResourceEndpoints`` verbs or the ``WatchStreamer``. Every failure is answered with a Kubernetes ``Status`` body
and the matching HTTP code; every response leaves in one write.
"""

from __future__ import annotations

import select
import socket
import struct
import time
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol, runtime_checkable
from urllib.parse import parse_qs, unquote, urlsplit

import orjson

from apis.errors import ApiError, BadRequestError, ConflictError, MethodNotAllowedError
from apis.logs import get_logger
from apis.watch import ListOptions

from . import discovery, eventsv1, httpwire, openapi, podlogs, subresources, tables
from .context import SandboxContext
from .endpoints import ResourceEndpoints, Response
from .negotiation import check_acceptable
from .openapi_proto import OPENAPI_V2_PROTOBUF
from .options import list_options, query_bool, validate_list_options
from .rbac import ADMIN_USER, UserInfo, reviews
from .request import ResourceRequest, not_found_path, parse_resource_path
from .watchstream import WatchStreamer
from .wire import wire_status

__all__ = ["SandboxRequestHandler", "SandboxContext"]

log = get_logger(__name__)

MAX_BODY_BYTES = 3 * 1024 * 1024  # kube-apiserver's MaxRequestBodyBytes
MAX_CHUNK_LINE_BYTES = 4096  # a chunk-size line or a trailer line
IDLE_TIMEOUT_SECONDS = 120  # an idle keep-alive connection is closed after this long (so is a stalled send)
_HTTP_REASONS = {400: "BadRequest", 405: "MethodNotAllowed", 413: "RequestEntityTooLarge"}
HEALTH_PATHS = ("/healthz", "/livez", "/readyz")
_date: tuple[int, str] = (0, "")  # the Date header of the current second


def _body_too_large() -> ApiError:
    return ApiError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY_BYTES}")


def _is_hex(text: bytes) -> bool:
    return all(c in b"0123456789abcdefABCDEF" for c in text)


@runtime_checkable
class _SandboxServer(Protocol):
    """The ``socketserver`` server a handler serves: it carries the sandbox."""

    sandbox: SandboxContext


class _ChunkedSink:
    """A watch stream's chunked response on the handler's connection."""

    def __init__(self, handler: SandboxRequestHandler) -> None:
        self._handler = handler

    def start(self, content_type: str = "application/json") -> None:
        h = self._handler
        h.wfile.write(h._response_head(200, content_type, None, "Transfer-Encoding: chunked"))

    def write(self, data: bytes) -> None:
        self._handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def write_chunks(self, chunks: list[bytes]) -> None:
        self._handler.wfile.write(b"".join(b"%x\r\n%s\r\n" % (len(data), data) for data in chunks))

    def end(self) -> None:
        self._handler.wfile.write(b"0\r\n\r\n")
        if self._handler.sandbox.stopping.is_set():
            self._handler.close_connection = True

    def client_gone(self) -> bool:
        connection: socket.socket = self._handler.connection
        try:
            readable, _, _ = select.select([connection], [], [], 0)
            if not readable:
                return False
            return connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True


class SandboxRequestHandler(BaseHTTPRequestHandler):
    """Serves one HTTP/1.1 connection of the sandbox API server."""

    protocol_version = "HTTP/1.1"
    server_version = "sandbox-apiserver"
    # Idle keep-alive connections are closed after IDLE_TIMEOUT_SECONDS, and a send that makes no progress for as
    # long fails. The kernel keeps that time (SO_RCVTIMEO/SO_SNDTIMEO on a blocking socket): a Python socket
    # timeout would poll() before every recv and send (a tenth of a GET).
    timeout = None
    user: UserInfo = ADMIN_USER  # who sent the request being served (``AccessControl.admit``)
    # http.server sets these; typeshed does not declare them
    raw_requestline: bytes
    _headers_buffer: list[bytes]

    # -- plumbing -------------------------------------------------------------------------------------------------
    def setup(self) -> None:
        super().setup()
        idle = struct.pack("ll", IDLE_TIMEOUT_SECONDS, 0)  # struct timeval
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, idle)
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, idle)
        if not isinstance(self.server, _SandboxServer):
            raise TypeError(f"SandboxRequestHandler serves a sandbox API server, not {type(self.server).__name__}")
        self._sandbox = self.server.sandbox
        # Responses and watch events are small writes: without TCP_NODELAY, Nagle's algorithm holds each one back
        # until the client's delayed ACK (~40 ms) on a kept-alive connection. kube-apiserver (Go) sets it too.
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass

    @property
    def sandbox(self) -> SandboxContext:
        return self._sandbox

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the stderr access log
        return

    def date_time_string(self, timestamp: float | None = None) -> str:
        """The ``Date`` header, formatted once per second (http.server formats it for every response)."""
        global _date
        if timestamp is not None:
            return super().date_time_string(timestamp)
        now = int(time.time())
        second, text = _date
        if second != now:
            _date = second, text = now, super().date_time_string(now)
        return text

    def handle_one_request(self) -> None:
        """http.server's, plus the end of the connection when a kernel timeout ran out: a read then returns no data
        (the connection closes, as on EOF), a send raises ``BlockingIOError``."""
        try:
            super().handle_one_request()
        except BlockingIOError:
            self.close_connection = True

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

    # -- protocol errors: answered by http.server before a request is dispatched ------------------------------------
    def parse_request(self) -> bool:
        """The request line and headers (``httpwire``: http.server's checks of the line, fast headers); Go's server
        refuses more than http.server does: a request line without a version (HTTP/0.9) is malformed (400), so is a
        blank one; a method nobody serves gets 405 as kube-apiserver's router does."""
        self.command, self.request_version, self.close_connection = "", self.default_request_version, True
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        if not self.requestline.strip():
            self.requestline, self.request_version = "", self.protocol_version
            self.send_error(400, "malformed HTTP request ''")
            return False
        try:
            line = httpwire.parse_request_line(self.requestline, self.default_request_version)
        except httpwire.HeadError as err:
            self.request_version = err.version or self.request_version
            self.send_error(err.code, err.message)
            return False
        self.command, self.path, self.request_version = line.command, line.path, line.version
        self.close_connection = not line.keep_alive
        if self.request_version == "HTTP/0.9":
            self.send_error(400, f"malformed HTTP request {self.requestline!r}")
            return False
        try:
            self.headers = httpwire.read_headers(self.rfile)  # type: ignore[assignment]
        except httpwire.HeadError as err:
            self.send_error(err.code, err.message)
            return False
        connection = (self.headers.get("Connection") or "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive":
            self.close_connection = False
        if not hasattr(self, "do_" + self.command):
            self.send_error(405, f"the server does not allow the method {self.command!r}")
            return False
        expect = (self.headers.get("Expect") or "").lower()
        if expect == "100-continue" and self.request_version >= "HTTP/1.1":
            return self.handle_expect_100()
        return True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Every error the HTTP layer answers (request line, version, headers) as a Kubernetes ``Status``; the
        connection is closed after it."""
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # no version was understood: answer with ours
            self.request_version = self.protocol_version
        text = message or self.responses.get(code, ("error",))[0]
        self._send_error(ApiError(code, _HTTP_REASONS.get(code, ""), text), {"Connection": "close"})

    def _read_body(self) -> bytes:
        """The request body (Content-Length or chunked), at most ``MAX_BODY_BYTES``: 413 beyond, 400 for a malformed
        or truncated one. Content-Length fields that disagree are a 400 (and the connection closed), as Go's server
        answers (RFC 9112 §6.3): reading the first would take the rest as a second request, smuggled past whatever
        framed the bytes by another one. Identical repeats count once, as in Go."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._read_chunked()
        lengths = [value.strip() for value in self.headers.get_all("Content-Length") or []]
        if len(set(lengths)) > 1:
            raise BadRequestError(f"http: message cannot contain multiple Content-Length headers; got {lengths[:8]!r}")
        raw = lengths[0] if lengths else "0"
        if not (raw.isascii() and raw.isdigit()):
            raise BadRequestError(f"invalid Content-Length {raw[:40]!r}")
        length = int(raw)
        if length > MAX_BODY_BYTES:
            raise _body_too_large()
        return self._read_exactly(length)

    def _read_chunked(self) -> bytes:
        chunks, total = [], 0
        while True:
            line = self.rfile.readline(MAX_CHUNK_LINE_BYTES + 1)
            size_text = line.split(b";")[0].strip()
            if len(line) > MAX_CHUNK_LINE_BYTES or not size_text or not _is_hex(size_text):
                raise BadRequestError(f"invalid chunk size line {line[:40]!r}")
            size = int(size_text, 16)
            if size == 0:
                break
            total += size
            if total > MAX_BODY_BYTES:
                raise _body_too_large()
            chunks.append(self._read_exactly(size))
            if self.rfile.readline(3) not in (b"\r\n", b"\n"):
                raise BadRequestError("malformed chunked encoding: a chunk is not followed by CRLF")
        for _ in range(100):  # the trailer: header lines up to an empty line
            line = self.rfile.readline(MAX_CHUNK_LINE_BYTES + 1)
            if line in (b"\r\n", b"\n"):
                return b"".join(chunks)
            if not line or len(line) > MAX_CHUNK_LINE_BYTES:
                break
        raise BadRequestError("malformed chunked encoding: unterminated trailer")

    def _read_exactly(self, length: int) -> bytes:
        data = self.rfile.read(length) if length > 0 else b""
        if len(data) < length:
            raise BadRequestError(f"unexpected EOF: the body ended after {len(data)} of {length} bytes")
        return data

    def _response_head(self, code: int, content_type: str, headers: dict[str, str] | None, framing: str) -> bytes:
        """Status line and headers (``framing``: the Content-Length or Transfer-Encoding line), written as one
        string rather than through http.server's ``send_header`` per line. A ``Connection`` header decides whether
        the connection stays open, as ``send_header`` does."""
        reason = self.responses[code][0] if code in self.responses else ""
        head = (f"{self.protocol_version} {code} {reason}\r\nServer: {self.version_string()}\r\n"
                f"Date: {self.date_time_string()}\r\nContent-Type: {content_type}\r\n{framing}\r\n"
                "Cache-Control: no-cache, private\r\n")
        if headers:
            for key, value in headers.items():
                head += f"{key}: {value}\r\n"
                if key.lower() == "connection" and value.lower() in ("close", "keep-alive"):
                    self.close_connection = value.lower() == "close"
        return (head + "\r\n").encode("latin-1", "strict")

    def _send_bytes(self, code: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        head = self._response_head(code, content_type, headers, f"Content-Length: {len(data)}")
        # status line, headers and body leave in one write
        self.wfile.write(head if self.command == "HEAD" else head + data)

    def _send_json(self, code: int, obj: object, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(code, orjson.dumps(obj), "application/json", headers)

    def _send_response(self, response: Response) -> None:
        self._send_json(response.code, response.body, response.headers)

    def _send_error(self, err: ApiError, headers: dict[str, str] | None = None) -> None:
        self._send_json(err.status, wire_status(err.to_status()), headers)

    # -- dispatch -------------------------------------------------------------------------------------------------
    def _dispatch(self, method: str) -> None:
        try:
            url = urlsplit(self.path)
            path = unquote(url.path).rstrip("/") or "/"
            query = parse_qs(url.query, keep_blank_values=True)
        except ValueError as exc:  # a request target urllib cannot split
            self.close_connection = True
            self._send_error(BadRequestError(f"malformed request target: {exc}"), {"Connection": "close"})
            return
        try:
            body = self._read_body()
        except ApiError as err:
            self.close_connection = True  # the rest of the body (if any) is not read: the connection is unusable
            self._send_error(err, {"Connection": "close"})
            return
        except OSError:  # the client went away (or stalled past the timeout) in the middle of its body
            self.close_connection = True
            return
        try:
            if path in HEALTH_PATHS or path.startswith(tuple(p + "/" for p in HEALTH_PATHS)):
                self._send_bytes(200, b"ok", "text/plain; charset=utf-8")
                return
            self.user = self.sandbox.access.admit(method, path, query, self.headers)
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
        else:
            self._serve_openapi(path, parts)
            return True
        if doc is None:
            raise not_found_path()
        self._send_json(200, doc)
        return True

    def _serve_openapi(self, path: str, parts: list[str]) -> None:
        """``/openapi/v2`` (JSON, or protobuf as kubectl asks for it), ``/openapi/v3`` and its group version
        documents."""
        documents = openapi.documents_for(self.sandbox.tracker)
        if path == "/openapi/v2":
            if "proto-openapi.spec.v2" in (self.headers.get("Accept") or ""):
                self._send_bytes(200, documents.v2_document(protobuf=True), OPENAPI_V2_PROTOBUF)
            else:
                self._send_bytes(200, documents.v2_document(), "application/json")
            return
        if path == "/openapi/v3":
            self._send_json(200, documents.v3_index())
            return
        gv = parts[2:] if parts[:2] == ["openapi", "v3"] else []
        found = None
        if gv[:1] == ["api"] and len(gv) == 2:
            found = documents.v3_document("", gv[1])
        elif gv[:1] == ["apis"] and len(gv) == 3:
            found = documents.v3_document(gv[1], gv[2])
        if found is None:
            raise not_found_path()
        self._send_bytes(200, found[0], "application/json")

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
        if req.subresource != "log":  # logs are plain text, served whatever the client accepts
            check_acceptable(self.headers.get("Accept"))
        if self._inject_error():
            return
        if req.name and self.sandbox.faults.take_conflict(method, req.gvr.resource, req.namespace, req.name,
                                                           req.subresource):
            what = f"{req.gvr.resource}.{req.gvr.group}" if req.gvr.group else req.gvr.resource
            raise ConflictError(409, "Conflict", f'Operation cannot be fulfilled on {what} "{req.name}": the object '
                                                 "has been modified; please apply your changes to the latest version "
                                                 "and try again")
        if reviews.serves(req):
            self._send_response(reviews.serve(self.sandbox.access, self.user, method, req, body, self.headers))
            return
        is_watch = req.watch or bool(query_bool(query, "watch"))
        sandbox = eventsv1.for_resource(self.sandbox, req.gvr)
        endpoints = ResourceEndpoints(sandbox)
        if not req.name:
            if method in ("GET", "HEAD"):
                options = list_options(query)
                validate_list_options(options, is_watch)
                if is_watch:
                    self._serve_watch(endpoints, req, options, query)
                else:
                    self._send_response(endpoints.list(req, options, self.headers, query))
            elif method == "POST" and (req.namespace or not req.info.namespaced):
                self._send_response(endpoints.create(req, query, body, self.headers))
            elif method == "DELETE" and (req.namespace or not req.info.namespaced):
                self._send_response(endpoints.delete_collection(req, query, body, self.headers))
            else:
                raise MethodNotAllowedError("the server does not allow this method on the requested resource")
            return
        if is_watch:  # a watch on one object: the collection watch narrowed to its name
            options = list_options(query)
            validate_list_options(options, True)
            options.field_selector = ",".join(filter(None, [options.field_selector, f"metadata.name={req.name}"]))
            self._serve_watch(endpoints, req, options, query)
        elif req.subresource == "log":
            self._serve_log(req, method, query)
        elif req.subresource in subresources.SERVED:
            self._send_response(subresources.serve(sandbox, method, req, query, body, self.headers))
        elif method in ("GET", "HEAD"):
            self._send_response(endpoints.get(req, self.headers, query))
        elif method == "PUT":
            self._send_response(endpoints.update(req, query, body, self.headers))
        elif method == "PATCH":
            self._send_response(endpoints.patch(req, query, body, self.headers))
        elif method == "DELETE" and req.subresource is None:
            self._send_response(endpoints.delete(req, query, body, self.headers))
        else:
            raise MethodNotAllowedError("the server does not allow this method on the requested resource")

    def _serve_log(self, req: ResourceRequest, method: str, query: dict[str, list[str]]) -> None:
        """``pods/log`` as ``podlogs`` reads it; ``follow`` streams appended lines (chunked) while the pod runs."""
        if method not in ("GET", "HEAD"):
            raise MethodNotAllowedError("the server does not allow this method on the requested resource")
        tracker = self.sandbox.tracker
        pod = tracker.get(req.gvr, req.namespace, req.name)  # 404 when there is no such pod
        directory = self.sandbox.pod_logs_dir
        if directory is None:
            raise BadRequestError(podlogs.NO_LOGS.format(name=f'"{req.name}"'))
        wanted = podlogs.log_request(pod, query)
        path = podlogs.log_file(directory, req.namespace, req.name)
        data, offset = podlogs.read_log(path, wanted)
        if not wanted.follow or method == "HEAD":
            self._send_bytes(200, data, "text/plain")
            return
        sink = _ChunkedSink(self)
        sink.start("text/plain")
        try:
            if data:
                sink.write(data)
            budget = None if wanted.limit_bytes is None else wanted.limit_bytes - len(data)
            podlogs.follow_log(
                path, offset, sink.write,
                lambda: podlogs.pod_is_running(tracker.peek(req.gvr, req.namespace, req.name)),
                self.sandbox.stopping.is_set, sink.client_gone, budget,
            )
            sink.end()
        except OSError:
            self.close_connection = True  # the client went away

    def _serve_watch(
        self, endpoints: ResourceEndpoints, req: ResourceRequest, options: ListOptions, query: dict[str, list[str]]
    ) -> None:
        table = tables.table_options(self.headers.get("Accept"), query)
        columns = endpoints.printer_columns(req) if table else None
        try:
            WatchStreamer(endpoints.sandbox).serve(req, options, _ChunkedSink(self), table, columns)
        except OSError:
            self.close_connection = True  # the client went away
