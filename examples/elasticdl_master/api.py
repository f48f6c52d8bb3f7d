"""The master's HTTP API for workers (JSON in, JSON out).

=====================================  ==========================================================================
``POST /api/v1/tasks/get``             ``{"worker_id"}`` → ``{"status": "task", "task": {"task_id", "type", "epoch",
                                       "unit", "file", "start", "end"}}``, ``{"status": "wait",
                                       "retry_after_seconds"}`` (every remaining task is held by another worker) or
                                       ``{"status": "finished"}``
``POST /api/v1/tasks/report``          ``{"worker_id", "task_id", "success", "err_message"?}`` → ``{"accepted": true}``
``POST /api/v1/progress``              ``{"worker_id", "task_id"?, "records"?}`` → ``{"accepted": true}``
``GET /api/v1/num_workers``            → ``{"num_workers"}``
``PUT|POST /api/v1/num_workers``       ``{"num_workers"}`` (0 … ``--max_workers``) → ``{"num_workers", "previous"}``
``GET /api/v1/status``                 the job's tasks, worker slots and worker states
``GET /healthz``                       ``ok``
=====================================  ==========================================================================

Every call of a worker counts as its progress. Every bad request gets 400 and ``{"error": "<reason>"}``: a body that
is not a JSON object, over ``max_body`` bytes, without ``Content-Length`` or chunked, a ``Content-Length`` that is
not ASCII digits or given twice with different values (the connection is closed then); a missing, unknown or
mistyped field; a worker that is not live (never launched, or retired: its tasks were taken back); a task the worker
does not hold. Unknown paths get 404, other methods 405. One thread per connection; an idle connection is closed
after ``request_timeout`` seconds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
import structlog

from .tasks import FINISHED, WAIT, TaskDispatcher, TaskError
from .workers import WorkerManager

__all__ = ["MAX_BODY", "RequestError", "WorkerAPI"]

log = structlog.get_logger("elasticdl_master.api")

MAX_BODY = 64 * 1024
MAX_MESSAGE = 4096
_MAX_INT = 2**63 - 1


class RequestError(ValueError):
    """A bad request: answered 400 with the message as the reason."""


def _field(body: dict[str, Any], name: str, kind: type, required: bool = True, minimum: int = 0,
           maximum: int = _MAX_INT) -> Any:
    if name not in body:
        if required:
            raise RequestError(f"field {name!r} is required")
        return None
    value = body[name]
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise RequestError(f"field {name!r} must be an integer, got {type(value).__name__}")
        if not minimum <= value <= maximum:
            raise RequestError(f"field {name!r} must be between {minimum} and {maximum}, got {value}")
    elif kind is str:
        if not isinstance(value, str):
            raise RequestError(f"field {name!r} must be a string, got {type(value).__name__}")
        if len(value) > MAX_MESSAGE:
            raise RequestError(f"field {name!r} is longer than {MAX_MESSAGE} characters")
    elif not isinstance(value, kind):
        raise RequestError(f"field {name!r} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _only(body: dict[str, Any], *names: str) -> None:
    unknown = sorted(set(body) - set(names))
    if unknown:
        raise RequestError(f"unknown field(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(names)}")


class WorkerAPI:
    def __init__(
        self,
        host: str,
        port: int,
        dispatcher: TaskDispatcher,
        manager: WorkerManager,
        status: Callable[[], dict[str, Any]],
        *,
        max_workers: int,
        max_body: int = MAX_BODY,
        request_timeout: float = 30.0,
        wait_seconds: float = 1.0,
    ) -> None:
        self.host, self._requested_port = host, port
        self.dispatcher = dispatcher
        self.manager = manager
        self.status = status
        self.max_workers = max_workers
        self.max_body = max_body
        self.request_timeout = request_timeout
        self.wait_seconds = wait_seconds
        self._log = log.bind(job=manager.template.job_name)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._routes: dict[tuple[str, str], Callable[[dict[str, Any]], dict[str, Any]]] = {
            ("POST", "/api/v1/tasks/get"): self._get_task,
            ("POST", "/api/v1/tasks/report"): self._report_task,
            ("POST", "/api/v1/progress"): self._progress,
            ("PUT", "/api/v1/num_workers"): self._set_num_workers,
            ("POST", "/api/v1/num_workers"): self._set_num_workers,
            ("GET", "/api/v1/num_workers"): lambda _: {"num_workers": self.manager.threshold},
            ("GET", "/api/v1/status"): lambda _: self.status(),
        }

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the worker API is not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> None:
        """Bind (port 0 picks a free one) and serve in a daemon thread."""
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = self.request_timeout

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                api._handle(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                api._handle(self, "POST")

            def do_PUT(self) -> None:  # noqa: N802
                api._handle(self, "PUT")

            def do_DELETE(self) -> None:  # noqa: N802
                api._handle(self, "DELETE")

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server API
                return

        httpd = ThreadingHTTPServer((self.host, self._requested_port), Handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="elasticdl-worker-api", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    # -- HTTP -------------------------------------------------------------------------------------------------------
    def _handle(self, req: BaseHTTPRequestHandler, method: str) -> None:
        path = req.path.split("?", 1)[0]
        if path == "/healthz" and method == "GET":
            self._send(req, 200, b"ok\n", "text/plain; charset=utf-8")
            return
        route = self._routes.get((method, path))
        if route is None:
            known = any(p == path for _, p in self._routes)
            self._discard_body(req)
            self._reply(req, 405 if known else 404, {"error": f"{method} {path} is not served"})
            return
        try:
            if method in ("POST", "PUT"):
                body = self._read_json(req)
            else:
                self._discard_body(req)
                body = {}
            self._reply(req, 200, route(body))
        except (RequestError, TaskError) as exc:
            self._log.info("bad request", path=path, reason=str(exc))
            self._reply(req, 400, {"error": str(exc)})
        except Exception:
            self._log.exception("request failed", method=method, path=path)
            req.close_connection = True
            self._reply(req, 500, {"error": "internal error; see the master's log"})

    def _read_json(self, req: BaseHTTPRequestHandler) -> dict[str, Any]:
        if req.headers.get("Transfer-Encoding"):
            req.close_connection = True
            raise RequestError("chunked bodies are not accepted: send Content-Length")
        length = _content_length(req)
        if length is None:
            raise RequestError("Content-Length is required")
        if length > self.max_body:
            req.close_connection = True  # the body is left unread
            raise RequestError(f"body of {length} bytes is over the limit of {self.max_body}")
        raw = req.rfile.read(length)
        if len(raw) < length:
            req.close_connection = True
            raise RequestError(f"body ended after {len(raw)} of {length} bytes")
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise RequestError(f"body is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise RequestError(f"body must be a JSON object, got {type(body).__name__}")
        return body

    def _discard_body(self, req: BaseHTTPRequestHandler) -> None:
        try:
            length = _content_length(req) or 0
        except RequestError:
            return  # the connection closes: its framing is unknown
        if length <= self.max_body and not req.headers.get("Transfer-Encoding"):
            req.rfile.read(length)
        else:
            req.close_connection = True

    def _reply(self, req: BaseHTTPRequestHandler, code: int, payload: dict[str, Any]) -> None:
        self._send(req, code, orjson.dumps(payload), "application/json")

    @staticmethod
    def _send(req: BaseHTTPRequestHandler, code: int, data: bytes, content_type: str) -> None:
        req.send_response(code)
        req.send_header("Content-Type", content_type)
        req.send_header("Content-Length", str(len(data)))
        if req.close_connection:
            req.send_header("Connection", "close")
        req.end_headers()
        req.wfile.write(data)

    # -- routes -----------------------------------------------------------------------------------------------------
    def _worker(self, body: dict[str, Any]) -> int:
        worker = int(_field(body, "worker_id", int))
        if not self.dispatcher.is_registered(worker):
            raise RequestError(f"worker {worker} is not a live worker of this job")
        return worker

    def _get_task(self, body: dict[str, Any]) -> dict[str, Any]:
        _only(body, "worker_id")
        worker = self._worker(body)
        task = self.dispatcher.get(worker)
        self.manager.on_progress(worker)
        if task == WAIT:
            return {"status": WAIT, "retry_after_seconds": self.wait_seconds}
        if task == FINISHED:
            return {"status": FINISHED}
        assert not isinstance(task, str)
        return {"status": "task", "task": task.to_dict()}

    def _report_task(self, body: dict[str, Any]) -> dict[str, Any]:
        _only(body, "worker_id", "task_id", "success", "err_message")
        worker = self._worker(body)
        task_id = _field(body, "task_id", int, minimum=1)
        success = _field(body, "success", bool)
        message = _field(body, "err_message", str, required=False) or ""
        self.dispatcher.report(worker, task_id, success, message)
        self.manager.on_progress(worker)
        return {"accepted": True}

    def _progress(self, body: dict[str, Any]) -> dict[str, Any]:
        _only(body, "worker_id", "task_id", "records")
        worker = self._worker(body)
        task_id = _field(body, "task_id", int, required=False, minimum=1)
        records = _field(body, "records", int, required=False)
        if task_id is not None and not self.dispatcher.holds(worker, task_id):
            raise RequestError(f"worker {worker} does not hold task {task_id}")
        self.manager.on_progress(worker, records)
        return {"accepted": True}

    def _set_num_workers(self, body: dict[str, Any]) -> dict[str, Any]:
        _only(body, "num_workers")
        wanted = _field(body, "num_workers", int, maximum=self.max_workers)
        previous = self.manager.set_threshold(wanted)
        return {"num_workers": wanted, "previous": previous}


def _content_length(req: BaseHTTPRequestHandler) -> int | None:
    """The request's ``Content-Length`` (``None`` without one). Raises ``RequestError`` and marks the connection to
    close when it is not ASCII digits or when two fields disagree: the bytes after the body could not be framed, and
    reading one of two lengths would take the rest as another request (smuggled past a proxy that used the other)."""
    values = {value.strip() for value in req.headers.get_all("Content-Length") or []}
    if not values:
        return None
    if len(values) > 1:
        req.close_connection = True
        raise RequestError(f"Content-Length given twice with different values: {sorted(values)!r}")
    text = values.pop()
    if not (text.isascii() and text.isdigit()):
        req.close_connection = True
        raise RequestError(f"Content-Length {text!r} is not a number")
    return int(text)
