"""The LC's HTTP server: the worker API exactly as Sedna's SDK calls it, plus ``/healthz``, ``/livez``, ``/readyz``,
``/metrics``; served by waitress through ``apis.httpserver`` (framing, connection, per-client and deadline bounds
there). The kubelet probes the same ``checks`` on a listener of their own (``reconcile.probes.ProbeServer``, wired
in ``localcontroller.app``), which no load on the worker API delays.

* ``POST /sedna/workers/{worker-name}/info`` → 200 ``{"Status": 200, "Message": "OK"}`` once the report is durable
  (relayed to the outbox, or kept for a job this node does not hold yet). Bad JSON, ``name`` ≠ the path's worker name,
  a missing ``ownerKind`` → 400 ``{"Status": 400, "Message": "<reason>"}``. A body over ``MAX_BODY_BYTES`` → 413 (from
  the server library). An empty ``ownerName`` is answered 200 and dropped with a log line (as Go's LC does). A report
  the LC cannot keep now (the outbox or the pending reports are full) → 503 with ``Retry-After`` and the reason: Sedna's
  SDK retries it (``keptreports``: which bound, and whose reports hold it). A report whose ``ownerKind`` no manager
  handles is answered 200 and dropped (as in Go Sedna).
* ``/healthz`` and ``/livez``: 200 while the process serves; ``/readyz``: 200 only while connected to the GM, else 503
  (``[-]gm-connection failed: not connected to the GM``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import orjson
import structlog
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from apis.httpserver import HTTPLimits, HTTPServer
from reconcile.probes import HealthChecks

from .metrics import LCMetrics
from .worker import WorkerMessage, parse_worker_message

__all__ = ["MAX_BODY_BYTES", "LCServer", "ReportRefused"]

log = structlog.get_logger("sedna-lc.server")

# Sedna's SDK sends a whole eval (every metric of every model) in one report: 8 MiB leaves room for thousands of
# metrics and still fits, base64-encoded in one edge frame, under the GM's websocket.maxFrameBytes (docs/edge.md).
MAX_BODY_BYTES = 8 * 1024 * 1024
_WORKER_PATH = re.compile(r"/sedna/workers/([^/]+)/info")
_TEXT = "text/plain; charset=utf-8"

# what a delivery did with a report (the worker_reports metric's label)
DELIVERED = "ok"
KEPT = "pending"  # for a job this node does not hold yet
UNHANDLED = "unhandled"


class ReportRefused(Exception):
    """The LC cannot keep a report now; answered 503 with ``Retry-After: retry_after``."""

    def __init__(self, reason: str, retry_after: int = 5) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class LCServer:
    def __init__(
        self,
        host: str,
        port: int,
        metrics: LCMetrics,
        deliver: Callable[[WorkerMessage, str], str],
        ready: Callable[[], bool],
        limits: HTTPLimits | None = None,
    ) -> None:
        """``deliver(message, client)`` (``client``: the address the report came from) returns ``DELIVERED``,
        ``KEPT`` or ``UNHANDLED``, or raises ``ReportRefused``; ``ready()`` says whether the LC is connected to the
        GM."""
        self.host = host
        self.metrics = metrics
        self._deliver = deliver
        self.checks = HealthChecks()
        self.checks.add_healthz_check("ping", lambda: (True, ""))
        self.checks.add_readyz_check("gm-connection",
                                     lambda: (True, "") if ready() else (False, "not connected to the GM"))
        self._http = HTTPServer(host, port, self._app, limits or HTTPLimits(max_body_bytes=MAX_BODY_BYTES),
                                name="worker-api")

    @property
    def _httpd(self) -> object | None:
        """The running server (``None`` before ``start``), as tests wait for it."""
        return self._http._httpd

    @property
    def port(self) -> int:
        return self._http.port

    @property
    def url(self) -> str:
        return self._http.url

    def start(self) -> None:
        """Bind (raises ``OSError``) and serve in the background."""
        self._http.start()

    def stop(self) -> None:
        self._http.stop()

    # -- WSGI -------------------------------------------------------------------------------------------------------
    def _app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"]
        path = environ.get("PATH_INFO", "")
        try:
            if method == "POST":
                match = _WORKER_PATH.fullmatch(path)
                status, body, ctype, extra = (self._post(match.group(1), environ) if match is not None
                                              else (404, b"not found\n", _TEXT, []))
            elif method in ("GET", "HEAD"):
                status, body, ctype = self._get(path)
                extra = []
            else:
                status, body, ctype, extra = 405, b"method not allowed\n", _TEXT, [("Allow", "GET, HEAD, POST")]
        except Exception:
            log.exception("the worker API failed on a request", method=method, path=path)
            status, body, ctype, extra = 500, b"internal error\n", _TEXT, []
        start_response(_STATUS_LINES.get(status, str(status)),
                       [("Content-Type", ctype), ("Content-Length", str(len(body))), *extra])
        return [] if method == "HEAD" else [body]

    def _get(self, path: str) -> tuple[int, bytes, str]:
        if path == "/metrics":
            return 200, generate_latest(self.metrics.registry), CONTENT_TYPE_LATEST
        answer = self.checks.answer(path)
        if answer is not None:
            return answer[0], answer[1].encode(), _TEXT
        return 404, b"not found\n", _TEXT

    def _post(self, worker: str, environ: dict[str, Any]) -> tuple[int, bytes, str, list[tuple[str, str]]]:
        length = int(environ.get("CONTENT_LENGTH") or 0)  # waitress has checked it and read the whole body
        try:
            message = parse_worker_message(environ["wsgi.input"].read(length), worker)
        except ValueError as exc:
            self.metrics.worker_reports.labels("bad_request").inc()
            log.warning("rejected a worker report", worker=worker, reason=str(exc))
            return _reply(400, str(exc))
        where = {"worker": worker, "owner_kind": message.owner_kind,
                 "object": f"{message.namespace}/{message.owner_name}"}
        if not message.owner_name:
            self.metrics.worker_reports.labels("dropped").inc()
            log.warning("dropped a worker report without ownerName (the worker has no JOB_NAME?)", **where)
            return _reply(200, "OK")
        try:
            result = self._deliver(message, environ.get("REMOTE_ADDR") or "")
        except ReportRefused as exc:
            self.metrics.worker_reports.labels("refused").inc()
            log.warning("refused a worker report for now; the worker retries it", reason=exc.reason,
                        retry_after=exc.retry_after, **where)
            return (*_reply(503, exc.reason)[:3], [("Retry-After", str(exc.retry_after))])
        self.metrics.worker_reports.labels(result).inc()
        if result == UNHANDLED:
            log.info("no manager for the worker's ownerKind; report dropped", **where)
        return _reply(200, "OK")


_STATUS_LINES = {200: "200 OK", 400: "400 Bad Request", 404: "404 Not Found", 405: "405 Method Not Allowed",
                 500: "500 Internal Server Error", 503: "503 Service Unavailable"}


def _reply(status: int, message: str) -> tuple[int, bytes, str, list[tuple[str, str]]]:
    return status, orjson.dumps({"Status": status, "Message": message}), "application/json", []
