"""``apis.httpserver.HTTPServer.stop`` ends the server even when waitress's wake-up pipe is already closed (EBADF on
its write: seen once in a full test run, where it killed ``sedna-gm``'s ``run()`` during shutdown)."""

from __future__ import annotations

import errno
import socket
import threading
import urllib.request

import pytest
from testkit import wait_for

from apis.httpserver import HTTPServer


def _app(environ: dict[str, object], start_response):  # type: ignore[no-untyped-def]
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok\n"]


def test_stop_ends_the_server_when_its_wake_up_pipe_is_already_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    server = HTTPServer("127.0.0.1", 0, _app)
    server.start()
    port = server.port
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as answer:
        assert answer.read() == b"ok\n"
    httpd, thread = server._httpd, server._thread
    assert httpd is not None and thread is not None

    def closed_pipe() -> None:  # what the EBADF showed; no real descriptor is closed (another could be reusing it)
        raise OSError(errno.EBADF, "Bad file descriptor")

    monkeypatch.setattr(httpd.trigger, "_physical_pull", closed_pipe)  # type: ignore[attr-defined]
    server.stop()  # raised OSError(EBADF) before
    assert not thread.is_alive()
    probe = socket.socket()
    try:
        assert probe.connect_ex(("127.0.0.1", port)) != 0  # the listener is closed
    finally:
        probe.close()
    server.stop()  # idempotent


def test_stop_lets_a_request_in_flight_finish_before_it_closes_the_connections() -> None:
    """A request thread that outlived the close wrote its answer to a closed connection and woke the loop through a
    wake-up pipe already closed, whose descriptor number another server or connection may have taken by then."""
    entered, release = threading.Event(), threading.Event()

    def slow(environ: dict[str, object], start_response):  # type: ignore[no-untyped-def]
        entered.set()
        release.wait(10)
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "5")])
        return [b"done\n"]

    server = HTTPServer("127.0.0.1", 0, slow)
    server.start()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as client:
        client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        wait_for("the request in flight", entered.is_set)
        stopping = threading.Thread(target=server.stop)
        stopping.start()
        wait_for("stop() under way", lambda: server._httpd is None)
        release.set()
        answer = b""
        while chunk := client.recv(4096):
            answer += chunk
    stopping.join(10)
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"done\n")
    assert not stopping.is_alive()
