"""A tiny scripted HTTP server on 127.0.0.1 for the real clientset's tests, plus fixtures around it.

Routes are ``(method, path) -> fn(request, responder)``; every request is recorded. Handlers that wait for the test
wait on ``stub.gate()`` events, bounded by a timeout and all released at teardown, so a test can never hang.
"""

from __future__ import annotations

import queue
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson
import pytest

from apis.clientset import Clientset

HANDLER_WAIT = 10.0  # the longest a scripted handler waits for the test


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return orjson.loads(self.body)


@dataclass
class Responder:
    """Helpers a route uses to answer."""

    handler: BaseHTTPRequestHandler
    chunked: bool = field(default=False)

    def send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self.send_bytes(status, orjson.dumps(obj), "application/json", headers)

    def send_bytes(self, status: int, body: bytes, content_type: str = "application/json",
                   headers: dict[str, str] | None = None) -> None:
        h = self.handler
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)
        h.wfile.flush()

    def send_status(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                "message": message, "reason": reason, "code": code}
        if details:
            body["details"] = details
        self.send_json(code, body)

    def start_stream(self, status: int = 200) -> None:
        h = self.handler
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        h.wfile.flush()
        self.chunked = True

    def chunk(self, data: bytes) -> None:
        self.handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.handler.wfile.flush()

    def end_stream(self) -> None:
        self.handler.wfile.write(b"0\r\n\r\n")
        self.handler.wfile.flush()

    def hang_up(self) -> None:
        """Close the connection once the route returns (after its answer, if it gave one), without having said so
        in a ``Connection: close`` header."""
        self.handler.close_connection = True

    def abort(self) -> None:
        """Drop the connection without finishing the response."""
        self.handler.close_connection = True
        self.handler.wfile.flush()
        self.handler.connection.shutdown(2)


Route = Callable[[Recorded, Responder], None]


class StubServer:
    """``ssl_context``: serve HTTPS with it (a context that requires client certificates makes a handshake without
    one fail, so an answered request proves the client presented one).

    ``connections`` counts the connections accepted; ``closed`` gets one item per connection the server has closed.
    """

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self.requests: list[Recorded] = []
        self.routes: dict[tuple[str, str], Route] = {}
        self.fallback: Route | None = None
        self.connections = 0
        self.closed: queue.Queue[object] = queue.Queue()
        self._gates: list[threading.Event] = []
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 5  # idle keep-alive connections end on their own

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                # headers and body go out in separate writes: without this, Nagle holds the body back for the
                # client's delayed ACK (40 ms a request on a kept-alive connection)
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with stub._lock:
                    stub.connections += 1

            def _dispatch(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                req = Recorded(self.command, parts.path, dict(parse_qsl(parts.query, keep_blank_values=True)),
                               {k.lower(): v for k, v in self.headers.items()}, body)
                with stub._lock:
                    stub.requests.append(req)
                    route = stub.routes.get((self.command, parts.path), stub.fallback)
                responder = Responder(self)
                if route is None:
                    responder.send_status(404, "NotFound", f"no route for {self.command} {parts.path}")
                    return
                route(req, responder)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _dispatch

        class Server(ThreadingHTTPServer):
            daemon_threads = False  # server_close() joins every handler thread
            block_on_close = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # clients that hang up mid-answer are expected

            def shutdown_request(self, request: Any) -> None:
                super().shutdown_request(request)
                stub.closed.put(request)

        self.server = Server(("127.0.0.1", 0), Handler)
        self.scheme = "http"
        if ssl_context is not None:
            self.server.socket = ssl_context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05})

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def on(self, method: str, path: str, route: Route) -> None:
        self.routes[(method, path)] = route

    def on_any(self, route: Route) -> None:
        """Answer every request that has no route of its own with ``route`` (instead of a 404)."""
        self.fallback = route

    def json(self, method: str, path: str, status: int, obj: Any) -> None:
        self.on(method, path, lambda req, r: r.send_json(status, obj))

    def gate(self) -> threading.Event:
        ev = threading.Event()
        self._gates.append(ev)
        return ev

    def last(self) -> Recorded:
        with self._lock:
            return self.requests[-1]

    def count(self, method: str | None = None, path: str | None = None) -> int:
        """How many requests were recorded (only those with ``method`` / ``path``, when given)."""
        with self._lock:
            return sum(1 for r in self.requests if method in (None, r.method) and path in (None, r.path))

    @staticmethod
    def event_line(typ: str, name: str, rv: str) -> bytes:
        """One watch line for a Pod event."""
        obj = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": "default", "resourceVersion": rv}}
        return orjson.dumps({"type": typ, "object": obj}) + b"\n"

    @staticmethod
    def error_line(code: int, reason: str, message: str) -> bytes:
        status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason,
                  "message": message}
        return orjson.dumps({"type": "ERROR", "object": status}) + b"\n"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        for ev in self._gates:
            ev.set()
        self.server.shutdown()
        self._thread.join(timeout=HANDLER_WAIT)
        self.server.server_close()


@pytest.fixture
def stub() -> Iterator[StubServer]:
    server = StubServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def make_stub() -> Iterator[Callable[..., StubServer]]:
    """``make_stub(ssl_context=None)``: another started stub server (e.g. an HTTPS one), stopped at teardown."""
    servers: list[StubServer] = []

    def make(ssl_context: ssl.SSLContext | None = None) -> StubServer:
        server = StubServer(ssl_context)
        server.start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def cs(stub: StubServer) -> Iterator[Clientset]:
    client = Clientset.from_url(stub.url, token="secret-token", connect_timeout=5, request_timeout=5)
    yield client
    client.close()

