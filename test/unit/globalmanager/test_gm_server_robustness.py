"""Operability server robustness: IPv6 and wildcard binds, HEAD, slow clients, RFC 9112 framing (never a raw traceback),
/livez, many concurrent scrapes."""

from __future__ import annotations

import io
import socket
import threading
import urllib.error
import urllib.request
from contextlib import redirect_stderr

import pytest
from prometheus_client import CollectorRegistry, Counter
from testkit.logs import capture_library_logs
from testkit.rawhttp import concurrent_gets, exchange, statuses

from globalmanager.server import OperabilityServer


def request(url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def ipv6_loopback_available() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.fixture
def server():
    registry = CollectorRegistry()
    Counter("sedna_gm_probe", "probe", registry=registry).inc()
    srv = OperabilityServer("127.0.0.1:0", registry, request_timeout=0.5)
    srv.add_healthz_check("ping", lambda: (True, ""))
    srv.add_readyz_check("controllers", lambda: (False, "caches not synced"))
    srv.start()
    yield srv
    srv.stop()


@pytest.mark.skipif(not ipv6_loopback_available(), reason="no IPv6 loopback")
def test_a_bracketed_ipv6_address_binds_and_serves():
    srv = OperabilityServer("[::1]:0", CollectorRegistry())
    srv.add_healthz_check("ping", lambda: (True, ""))
    srv.start()
    try:
        assert srv.url == f"http://[::1]:{srv.port}"
        assert request(srv.url + "/healthz")[0] == 200
    finally:
        srv.stop()


def test_head_answers_like_get_without_a_body(server):
    code, headers, body = request(server.url + "/healthz", "HEAD")
    assert code == 200 and body == b"" and headers["Content-Length"] == "3"
    code, headers, body = request(server.url + "/readyz", "HEAD")
    assert code == 503 and body == b"" and int(headers["Content-Length"]) > 0
    code, headers, _ = request(server.url + "/metrics", "HEAD")
    assert code == 200 and headers["Content-Type"].startswith("text/plain")
    assert request(server.url + "/nope", "HEAD")[0] == 404


def test_a_client_that_never_sends_its_request_is_disconnected_and_blocks_nobody(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as idle:
        idle.sendall(b"GET /healthz HTTP/1.1\r\n")  # the request line, then nothing more
        assert request(server.url + "/healthz")[0] == 200  # served by another thread meanwhile
        idle.settimeout(5)
        answer = b""
        while chunk := idle.recv(1024):  # the server gave up on the slow client (request_timeout=0.5) and closed
            answer += chunk
        assert statuses(answer) == [408]


@pytest.mark.parametrize("framing", [
    "Content-Length: \u00b2".encode(), b"Content-Length: 1\r\nContent-Length: 2",
    b"Transfer-Encoding: chunked\r\nContent-Length: 40",
])
def test_bad_framing_is_a_400_and_a_close_logged_not_printed_as_a_traceback(server, framing):
    smuggled = b"0\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    stderr = io.StringIO()
    with redirect_stderr(stderr), capture_library_logs() as logs:
        answer = exchange(server.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + framing + b"\r\n\r\n" + smuggled)
    assert statuses(answer) == [400]  # one answer: nothing after the bad request is read as another one
    assert "Traceback" not in stderr.getvalue()
    assert any(e["event"] == "refused an HTTP request" and e["status"] == 400 for e in logs)


def test_livez_runs_the_health_checks(server):
    code, _, body = request(server.url + "/livez")
    assert (code, body) == (200, b"ok\n")
    assert request(server.url + "/livez/ping")[0] == 200 and request(server.url + "/livez/nope")[0] == 404


def test_64_concurrent_scrapes_get_no_reset(server):
    assert concurrent_gets(server.port, "/healthz", 64) == [200] * 64


def test_another_method_is_a_405(server):
    assert request(server.url + "/healthz", "POST")[0] == 405


def test_stop_is_prompt_even_with_an_idle_keepalive_connection(server):
    idle = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    try:
        done = threading.Event()
        threading.Thread(target=lambda: (server.stop(), done.set()), daemon=True).start()
        assert done.wait(5)
    finally:
        idle.close()
