"""The operability HTTP server of sedna-gm: ``/metrics`` (Prometheus text), ``/healthz`` and ``/readyz``.

Checks are named callables returning ``(ok, detail)``; ``/healthz`` and ``/readyz`` answer 200 ``ok`` when every check
passes and 503 with one line per check otherwise. ``/readyz/<name>`` and ``/healthz/<name>`` run a single check.
GET and HEAD are served; an unknown path is 404. One thread per connection, and a connection idle for
``request_timeout`` seconds is closed, so a slow or stuck client neither blocks other requests nor holds a thread forever.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

from globalmanager.config import parse_address

__all__ = ["Check", "OperabilityServer"]

log = structlog.get_logger(__name__)

Check = Callable[[], "tuple[bool, str]"]


class OperabilityServer:
    """A threaded HTTP server for metrics and probes; ``start()`` binds (port 0 picks a free one), ``stop()`` closes."""

    def __init__(
        self, address: str, registry: CollectorRegistry | None = None, request_timeout: float = 30.0
    ) -> None:
        self.host, self._requested_port = parse_address(address)
        self.request_timeout = request_timeout
        self.registry = REGISTRY if registry is None else registry
        self._healthz: dict[str, Check] = {}
        self._readyz: dict[str, Check] = {}
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def add_healthz_check(self, name: str, check: Check) -> None:
        with self._lock:
            self._healthz[name] = check

    def add_readyz_check(self, name: str, check: Check) -> None:
        with self._lock:
            self._readyz[name] = check

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(self.host, self.host)
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def start(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = self.request_timeout  # socket timeout: an idle or trickling client is dropped

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                server._handle(self, send_body=True)

            def do_HEAD(self) -> None:  # noqa: N802 - http.server API
                server._handle(self, send_body=False)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server API
                return

        class Server(ThreadingHTTPServer):
            # an IPv6 literal needs an AF_INET6 socket; the base class always makes AF_INET
            address_family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
            daemon_threads = True

            def handle_error(self, request: object, client_address: object) -> None:
                # the base class prints a raw traceback to stderr, which would break the JSON log stream
                exc = sys.exc_info()[1]
                client = client_address
                if isinstance(client, tuple):
                    client = ":".join(str(part) for part in client[:2])
                log.warning("http connection failed", client=client, error=repr(exc))

        self._httpd = Server((self.host, self._requested_port), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="gm-http", daemon=True)
        self._thread.start()
        shown = f"[{self.host}]" if ":" in self.host else self.host
        log.info("operability server listening", address=f"{shown}:{self.port}", url=self.url)

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def _run_checks(self, checks: dict[str, Check], only: str | None) -> tuple[int, str]:
        with self._lock:
            selected = dict(checks)
        if only is not None:
            if only not in selected:
                return 404, f"no check named {only!r}\n"
            selected = {only: selected[only]}
        lines: list[str] = []
        healthy = True
        for name, check in selected.items():
            try:
                ok, detail = check()
            except Exception as exc:  # a broken check reports failure, never crashes the server
                ok, detail = False, f"check raised {exc!r}"
            healthy = healthy and ok
            lines.append(f"[{'+' if ok else '-'}]{name} {'ok' if ok else 'failed'}{': ' + detail if detail else ''}")
        if healthy:
            return 200, "ok\n" if only is None else lines[0] + "\n"
        return 503, "\n".join(lines) + "\n"

    def _handle(self, req: BaseHTTPRequestHandler, send_body: bool) -> None:
        path = req.path.split("?", 1)[0].rstrip("/") or "/"
        if path == "/metrics":
            body = generate_latest(self.registry)
            self._reply(req, 200, body, CONTENT_TYPE_LATEST, send_body)
            return
        for prefix, checks in (("/healthz", self._healthz), ("/readyz", self._readyz)):
            if path == prefix or path.startswith(prefix + "/"):
                only = path[len(prefix) + 1 :] or None if path != prefix else None
                code, text = self._run_checks(checks, only)
                self._reply(req, code, text.encode(), "text/plain; charset=utf-8", send_body)
                return
        self._reply(req, 404, b"not found\n", "text/plain; charset=utf-8", send_body)

    @staticmethod
    def _reply(req: BaseHTTPRequestHandler, code: int, body: bytes, content_type: str, send_body: bool) -> None:
        req.send_response(code)
        req.send_header("Content-Type", content_type)
        req.send_header("Content-Length", str(len(body)))  # HEAD: the length GET would send
        req.end_headers()
        if send_body:
            req.wfile.write(body)
