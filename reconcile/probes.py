"""Health probes (and metrics) over HTTP for any controller program: ``/healthz`` and ``/livez`` (liveness),
``/readyz`` (readiness), and ``/metrics`` (Prometheus text) where a registry is given.

Checks are named callables returning ``(ok, detail)``, as controller-runtime's ``healthz.Checker``: ``/healthz``
(and ``/livez``, the same checks under kube's liveness name) and ``/readyz`` answer 200 ``ok`` when every check passes
and 503 with one line per check otherwise (``[+]name ok`` / ``[-]name failed: detail``); ``/healthz/<name>`` and
``/readyz/<name>`` run one check (404 for an unknown name). A check that raises counts as failed. GET and HEAD are
served (another method is 405); an unknown path is 404.

``ProbeServer`` serves them on a listener of its own (controller-runtime's ``HealthProbeBindAddress``), so that no
load on the program's other endpoints delays a kubelet's probe: a client trickling connections to the worker API or
the metrics port takes slots there, never here. The listener itself is bounded as every one of ours
(``apis.httpserver``: connection count, connections per client, header and request deadlines), with limits sized
for probes (``PROBE_LIMITS``). ``HealthChecks.answer`` lets another server answer the same paths as well.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from apis.httpserver import HTTPLimits, HTTPServer
from apis.netaddr import parse_address

__all__ = ["PROBE_LIMITS", "Check", "HealthChecks", "ProbeServer"]

Check = Callable[[], "tuple[bool, str]"]
_TEXT = "text/plain; charset=utf-8"

# a kubelet probes with one short GET at a time, from the node's address
PROBE_LIMITS = HTTPLimits(max_body_bytes=4096, connection_limit=64, per_client_connections=16, threads=2,
                          idle_timeout=10, request_deadline=5.0, header_deadline=5.0)


class HealthChecks:
    """Named liveness (``healthz``) and readiness (``readyz``) checks; thread-safe."""

    def __init__(self) -> None:
        self._healthz: dict[str, Check] = {}
        self._readyz: dict[str, Check] = {}
        self._lock = threading.Lock()

    def add_healthz_check(self, name: str, check: Check) -> None:
        with self._lock:
            self._healthz[name] = check

    def add_readyz_check(self, name: str, check: Check) -> None:
        with self._lock:
            self._readyz[name] = check

    def answer(self, raw_path: str) -> tuple[int, str] | None:
        """``(status, text)`` for a probe path (``/healthz``, ``/livez``, ``/readyz``, each with an optional
        ``/<check>``); ``None`` for any other path."""
        path = raw_path.rstrip("/") or "/"
        for prefix, checks in (("/healthz", self._healthz), ("/livez", self._healthz), ("/readyz", self._readyz)):
            if path == prefix:
                return self._run(checks, None)
            if path.startswith(prefix + "/"):
                return self._run(checks, path[len(prefix) + 1:])
        return None

    def _run(self, checks: dict[str, Check], only: str | None) -> tuple[int, str]:
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


class ProbeServer:
    """Serves ``checks`` (and ``/metrics`` of ``registry`` when given) on ``address`` (``host:port``, as Go's
    ``net.SplitHostPort``; port 0 picks a free one). ``start()`` binds (raises ``OSError``) and logs ``listening``
    with ``server=name`` and ``url``; ``stop()`` closes."""

    def __init__(self, address: str, checks: HealthChecks | None = None, registry: CollectorRegistry | None = None,
                 limits: HTTPLimits | None = None, name: str = "probes") -> None:
        self.host, self._requested_port = parse_address(address)
        self.checks = checks if checks is not None else HealthChecks()
        self.registry = registry
        self.limits = limits or PROBE_LIMITS
        self.name = name
        self._httpd: HTTPServer | None = None

    def add_healthz_check(self, name: str, check: Check) -> None:
        self.checks.add_healthz_check(name, check)

    def add_readyz_check(self, name: str, check: Check) -> None:
        self.checks.add_readyz_check(name, check)

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._httpd.port

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._httpd.url

    def start(self) -> None:
        httpd = HTTPServer(self.host, self._requested_port, self._app, self.limits, name=self.name)
        httpd.start()
        self._httpd = httpd

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.stop()

    def _app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"]
        headers: list[tuple[str, str]] = []
        if method in ("GET", "HEAD"):
            code, body, content_type = self._handle(environ.get("PATH_INFO", ""))
        else:
            code, body, content_type = 405, b"method not allowed\n", _TEXT
            headers.append(("Allow", "GET, HEAD"))
        # HEAD: GET's length, no body
        headers += [("Content-Type", content_type), ("Content-Length", str(len(body)))]
        start_response(f"{code} {HTTPStatus(code).phrase}", headers)
        return [] if method == "HEAD" else [body]

    def _handle(self, path: str) -> tuple[int, bytes, str]:
        if self.registry is not None and path.rstrip("/") == "/metrics":
            return 200, generate_latest(self.registry), CONTENT_TYPE_LATEST
        answer = self.checks.answer(path)
        if answer is None:
            return 404, b"not found\n", _TEXT
        return answer[0], answer[1].encode(), _TEXT
