"""``apis.httpserver.HTTPServer.stop`` ends the server even when waitress's wake-up pipe is already closed (EBADF on
its write: seen once in a full test run, where it killed ``sedna-gm``'s ``run()`` during shutdown)."""

from __future__ import annotations

import errno
import socket
import urllib.request

import pytest

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
