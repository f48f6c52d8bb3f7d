"""The GM's edge server against slow and greedy clients (issue 38 item 3): a connection whose opening handshake does
not end within ``OPEN_TIMEOUT`` is closed; one client has at most ``HANDSHAKES_PER_CLIENT`` handshakes under way (one
more is closed at once, before any byte is read); a finished handshake frees its slot, so LCs behind one address
(a NAT) still connect; the server announces its URL."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry
from testkit import GoLC, wait_for
from testkit.logs import capture_library_logs

from globalmanager.messagelayer import EdgeServer, MessageLayer
from globalmanager.messagelayer import server as edge_server


@pytest.fixture
def edge(monkeypatch: pytest.MonkeyPatch) -> Iterator[EdgeServer]:
    monkeypatch.setattr(edge_server, "HANDSHAKES_PER_CLIENT", 2)
    monkeypatch.setattr(edge_server, "OPEN_TIMEOUT", 0.5)
    layer = MessageLayer(CollectorRegistry())
    layer.start()
    server = EdgeServer(layer, "127.0.0.1", 0, hello_timeout=0.2)
    server.start()
    yield server
    server.stop()
    layer.stop()


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (its timeout bounds the wait): EOF or a reset, without a byte sent."""
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True


def test_a_connection_that_never_finishes_its_handshake_is_closed_at_the_open_timeout(edge):
    with socket.create_connection(("127.0.0.1", edge.port), timeout=10) as slow:
        slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and nothing more
        assert closed_by_server(slow)


def test_one_client_has_at_most_its_handshakes_under_way_and_a_finished_one_frees_its_slot(edge):
    pending = [socket.create_connection(("127.0.0.1", edge.port), timeout=10) for _ in range(2)]
    try:
        wait_for("both handshakes under way", lambda: edge._handshakes.open_connections("127.0.0.1"),
                 check=lambda n: n == 2)
        with capture_library_logs() as logs:
            with socket.create_connection(("127.0.0.1", edge.port), timeout=10) as third:
                assert closed_by_server(third)
        assert any(e["event"] == "refused a connection: the client is at its connection limit"
                   and e["server"] == "edge" for e in logs)
    finally:
        for sock in pending:
            sock.close()
    wait_for("the slots freed", lambda: edge._handshakes.open_connections("127.0.0.1"), check=lambda n: n == 0)
    lcs = [GoLC(f"ws://127.0.0.1:{edge.port}/", f"edge-{i}") for i in range(3)]  # more LCs than handshake slots
    try:
        wait_for("connected LCs no longer counted", lambda: edge._handshakes.open_connections("127.0.0.1"),
                 check=lambda n: n == 0)
    finally:
        for lc in lcs:
            lc.close()


def test_start_announces_the_url():
    layer = MessageLayer(CollectorRegistry())
    server = EdgeServer(layer, "0.0.0.0", 0)
    with capture_library_logs() as logs:
        server.start()
    try:
        announced = [e for e in logs if e["event"] == "listening"]
        assert [(e["server"], e["url"]) for e in announced] == [("edge", f"ws://127.0.0.1:{server.port}")]
    finally:
        server.stop()
