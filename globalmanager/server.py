"""The operability HTTP server of sedna-gm: ``/metrics`` (Prometheus text), ``/healthz``, ``/livez`` and ``/readyz``.

Checks are named callables returning ``(ok, detail)``; ``/healthz`` (and ``/livez``, the same health checks under
kube's liveness name) and ``/readyz`` answer 200 ``ok`` when every check passes and 503 with one line per check
otherwise. ``/readyz/<name>`` and ``/healthz/<name>`` run a single check. GET and HEAD are served (another method is
405); an unknown path is 404. Served by waitress through ``apis.httpserver``: a connection idle for
``request_timeout`` seconds is closed and a request not complete within it is answered 408, so a slow or stuck client
neither blocks other requests nor holds a connection forever.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

from apis.httpserver import HTTPLimits, HTTPServer
from globalmanager.config import parse_address

__all__ = ["Check", "OperabilityServer"]

log = structlog.get_logger(__name__)

Check = Callable[[], "tuple[bool, str]"]
_TEXT = "text/plain; charset=utf-8"


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
        self._httpd: HTTPServer | None = None

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
        return self._httpd.port

    @property
    def url(self) -> str:
        host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(self.host, self.host)
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def start(self) -> None:
        """Bind (raises ``OSError``; port 0 picks a free one) and serve in the background."""
        limits = HTTPLimits(max_body_bytes=64 * 1024, connection_limit=128, threads=4,
                            idle_timeout=max(1, math.ceil(self.request_timeout)),
                            request_deadline=self.request_timeout)
        httpd = HTTPServer(self.host, self._requested_port, self._app, limits, name="gm-http")
        httpd.start()
        self._httpd = httpd
        shown = f"[{self.host}]" if ":" in self.host else self.host
        log.info("operability server listening", address=f"{shown}:{self.port}", url=self.url)

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.stop()
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

    def _app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"]
        if method in ("GET", "HEAD"):
            code, body, content_type = self._handle(environ.get("PATH_INFO", ""))
            headers = [("Content-Type", content_type), ("Content-Length", str(len(body)))]  # HEAD: GET's length
        else:
            code, body = 405, b"method not allowed\n"
            headers = [("Content-Type", _TEXT), ("Content-Length", str(len(body))), ("Allow", "GET, HEAD")]
        start_response(f"{code} {HTTPStatus(code).phrase}", headers)
        return [] if method == "HEAD" else [body]

    def _handle(self, raw_path: str) -> tuple[int, bytes, str]:
        path = raw_path.rstrip("/") or "/"
        if path == "/metrics":
            return 200, generate_latest(self.registry), CONTENT_TYPE_LATEST
        # /livez is kube's name for liveness beside /healthz: the same checks (the process serves)
        for prefix, checks in (("/healthz", self._healthz), ("/livez", self._healthz), ("/readyz", self._readyz)):
            if path == prefix or path.startswith(prefix + "/"):
                only = path[len(prefix) + 1 :] or None if path != prefix else None
                code, text = self._run_checks(checks, only)
                return code, text.encode(), _TEXT
        return 404, b"not found\n", _TEXT
