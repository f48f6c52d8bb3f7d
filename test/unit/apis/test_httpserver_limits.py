"""``apis.httpserver``'s bounds against slow and greedy clients (issue 38 item 3): the header deadline (headers
trickling in past it get a 408 though the request deadline is far), the close of a connection that never sends a
byte, and the per-client connection limit (one more is answered 503 and closed; a freed slot is usable again)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from testkit import wait_for
from testkit.logs import capture_library_logs
from testkit.rawhttp import exchange, statuses

from apis.httpserver import HTTPLimits, HTTPServer


def _app(environ: dict[str, object], start_response):  # type: ignore[no-untyped-def]
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "3")])
    return [b"ok\n"]


GET = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def serve(**limits: object) -> HTTPServer:
    server = HTTPServer("127.0.0.1", 0, _app, HTTPLimits(**limits), name="test")  # type: ignore[arg-type]
    server.start()
    return server


@pytest.fixture
def server() -> Iterator[HTTPServer]:
    srv = serve(header_deadline=0.3, request_deadline=60.0, idle_timeout=60, per_client_connections=2)
    yield srv
    srv.stop()


def read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes the connection (``sock``'s timeout bounds each read)."""
    received = b""
    while chunk := sock.recv(4096):
        received += chunk
    return received


def open_connections(server: HTTPServer) -> int:
    assert server._httpd is not None
    return server._httpd.client_limit.open_connections("127.0.0.1")


def test_headers_that_trickle_in_past_the_header_deadline_get_a_408_though_the_request_deadline_is_far(server):
    stop = threading.Event()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as slow:
        slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")

        def trickle() -> None:  # a header byte every 50 ms: never idle, never complete
            try:
                while not stop.wait(0.05):
                    slow.sendall(b"X")
            except OSError:  # closed by the server
                pass

        thread = threading.Thread(target=trickle, daemon=True)
        thread.start()
        try:
            with capture_library_logs() as logs:
                answer = read_all(slow)
        finally:
            stop.set()
            thread.join(5)
    assert statuses(answer) == [408]
    refused = [e for e in logs if e["event"] == "refused an HTTP request"]
    assert refused and refused[0]["status"] == 408 and "headers" in refused[0]["reason"]
    assert refused[0]["client"] == "127.0.0.1"


def test_a_connection_that_sends_nothing_is_closed_at_the_header_deadline(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as silent:
        with capture_library_logs() as logs:
            assert read_all(silent) == b""  # closed, nothing answered (nothing was asked)
    assert any(e["event"] == "closed a connection that sent no request" and e["client"] == "127.0.0.1" for e in logs)


def test_a_kept_alive_connection_serves_its_next_request(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as client:
        client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert client.recv(4096).startswith(b"HTTP/1.1 200 ")
        # a second request on the same connection, sent at once, is served as well
        client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert statuses(read_all(client)) == [200]


def test_one_client_gets_at_most_its_share_of_connections_and_a_freed_slot_serves_again(server):
    with capture_library_logs() as logs, holding(server, 2) as held:
        for _ in range(2):
            answer = exchange(server.port, b"")  # the third and the fourth: 503 and closed at once
            assert statuses(answer) == [503] and b"Retry-After: 1" in answer
        held.pop().close()
        wait_for("the slot freed", lambda: open_connections(server), check=lambda n: n == 1)
        assert statuses(exchange(server.port, GET)) == [200]
    refusing = [e for e in logs if e["event"] == "refused a connection: the client is at its connection limit"]
    assert [(e["client"], e["limit"]) for e in refusing] == [("127.0.0.1", 2)]  # once, not once per connection
    assert server._httpd is not None and server._httpd.client_limit.refusal_log.admit("127.0.0.1").untold == 2


def test_without_a_per_client_limit_one_client_may_open_many():
    srv = serve(per_client_connections=0, header_deadline=30.0)
    try:
        with holding(srv, 5):
            assert statuses(exchange(srv.port, GET)) == [200]
    finally:
        srv.stop()


@contextmanager
def holding(server: HTTPServer, count: int) -> Iterator[list[socket.socket]]:
    """``count`` connections from this client, each with a request line sent, open (the server counts them) in the
    block; closed after it."""
    held = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(count)]
    try:
        for sock in held:  # the server counts them once it accepted them: a request line keeps each open
            sock.sendall(b"GET / HTTP/1.1\r\n")
        wait_for(f"{count} connections held", lambda: open_connections(server), check=lambda n: n == count)
        yield held
    finally:
        for sock in held:
            sock.close()


def test_a_connection_that_cannot_be_set_up_is_closed_and_the_server_goes_on(server):
    """An error setting up one connection used to reach wasyncore's handler of the listener, which closed the whole
    server (its listener and its wake-up pipe)."""
    httpd = server._httpd
    assert httpd is not None
    real = httpd.channel_class
    failures = []

    def failing_once(*args: object, **kwargs: object) -> object:
        if not failures:
            failures.append(1)
            raise RuntimeError("cannot set up")
        return real(*args, **kwargs)

    httpd.channel_class = failing_once  # type: ignore[assignment]
    with capture_library_logs() as logs:
        assert exchange(server.port, b"") == b""  # closed at once
    assert statuses(exchange(server.port, GET)) == [200]  # the server still serves
    wait_for("every slot released", lambda: open_connections(server) == 0)
    assert any(e["event"] == "cannot set up an HTTP connection; closed it" for e in logs)


def test_start_announces_the_bound_url():
    with capture_library_logs() as logs:
        srv = serve()
    try:
        assert srv.url == f"http://127.0.0.1:{srv.port}"
        assert {"event": "listening", "server": "test", "url": srv.url}.items() <= next(
            e for e in logs if e["event"] == "listening").items()
    finally:
        srv.stop()
