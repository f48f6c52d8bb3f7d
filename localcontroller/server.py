"""The LC's HTTP server: the worker API exactly as Sedna's SDK calls it, plus ``/healthz``, ``/readyz``, ``/metrics``.

* ``POST /sedna/workers/{worker-name}/info`` → 200 ``{"Status": 200, "Message": "OK"}``; bad JSON, a body over
  1 MiB (or without Content-Length), ``name`` ≠ the path's worker name, a missing ``ownerKind``/``ownerName`` → 400
  ``{"Status": 400, "Message": "<reason>"}``. A report whose ``ownerKind`` no manager handles is answered 200 and
  dropped (as in Go Sedna), counted as ``unhandled``.
* ``/healthz``: 200 while the process serves; ``/readyz``: 200 only while connected to the GM, else 503.
One thread per connection; an idle connection is closed after ``request_timeout`` seconds.
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import orjson
import structlog
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from .metrics import LCMetrics
from .worker import WorkerMessage, parse_worker_message

__all__ = ["MAX_BODY_BYTES", "LCServer"]

log = structlog.get_logger("sedna-lc.server")

MAX_BODY_BYTES = 1024 * 1024
_MAX_DRAIN_BYTES = 16 * MAX_BODY_BYTES
_WORKER_PATH = re.compile(r"/sedna/workers/([^/]+)/info")


class LCServer:
    def __init__(
        self,
        host: str,
        port: int,
        metrics: LCMetrics,
        deliver: Callable[[WorkerMessage], bool],
        ready: Callable[[], bool],
        request_timeout: float = 30.0,
    ) -> None:
        self.host = host
        self._requested_port = port
        self.metrics = metrics
        self._deliver = deliver
        self._ready = ready
        self._timeout = request_timeout
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    def start(self) -> None:
        """Bind (raises ``OSError``) and serve in a background thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = self._timeout

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                server._get(self)

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                server._post(self)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server API
                return

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            address_family = socket.AF_INET6 if ":" in self.host else socket.AF_INET

        self._httpd = Server((self.host, self._requested_port), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.1,), name="lc-http", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    # -- handlers ---------------------------------------------------------------------------------------------------
    def _get(self, req: BaseHTTPRequestHandler) -> None:
        path = req.path.split("?", 1)[0]
        if path == "/healthz":
            _send(req, 200, b"ok\n", "text/plain; charset=utf-8")
        elif path == "/readyz":
            if self._ready():
                _send(req, 200, b"ok\n", "text/plain; charset=utf-8")
            else:
                _send(req, 503, b"not connected to the GM\n", "text/plain; charset=utf-8")
        elif path == "/metrics":
            _send(req, 200, generate_latest(self.metrics.registry), CONTENT_TYPE_LATEST)
        else:
            _send(req, 404, b"not found\n", "text/plain; charset=utf-8")

    def _post(self, req: BaseHTTPRequestHandler) -> None:
        match = _WORKER_PATH.fullmatch(req.path.split("?", 1)[0])
        if match is None:
            req.close_connection = True  # the body is left unread
            _send(req, 404, b"not found\n", "text/plain; charset=utf-8")
            return
        worker = match.group(1)
        length_text = req.headers.get("Content-Length")
        if length_text is None or not length_text.isdigit():
            return self._reject(req, worker, "a Content-Length header is required", close=True)
        length = int(length_text)
        if length > MAX_BODY_BYTES:
            # read (and drop) a moderately oversized body so that the client sees the answer, not a reset
            drainable = length <= _MAX_DRAIN_BYTES
            if drainable:
                while length > 0:
                    length -= len(req.rfile.read(min(length, 65536))) or length
            return self._reject(req, worker, f"the message body is over {MAX_BODY_BYTES} bytes", close=not drainable)
        body = req.rfile.read(length)
        try:
            message = parse_worker_message(body, worker)
        except ValueError as exc:
            return self._reject(req, worker, str(exc))
        handled = self._deliver(message)
        self.metrics.worker_reports.labels("ok" if handled else "unhandled").inc()
        if not handled:
            log.info("no manager for the worker's ownerKind; report dropped", worker=worker,
                     owner_kind=message.owner_kind, object=f"{message.namespace}/{message.owner_name}")
        _reply(req, 200, "OK")

    def _reject(self, req: BaseHTTPRequestHandler, worker: str, reason: str, close: bool = False) -> None:
        self.metrics.worker_reports.labels("bad_request").inc()
        log.warning("rejected a worker report", worker=worker, reason=reason)
        if close:
            req.close_connection = True
        _reply(req, 400, reason)


def _reply(req: BaseHTTPRequestHandler, status: int, message: str) -> None:
    _send(req, status, orjson.dumps({"Status": status, "Message": message}), "application/json")


def _send(req: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str) -> None:
    req.send_response(status)
    req.send_header("Content-Type", content_type)
    req.send_header("Content-Length", str(len(body)))
    if req.close_connection:
        req.send_header("Connection", "close")
    req.end_headers()
    req.wfile.write(body)
