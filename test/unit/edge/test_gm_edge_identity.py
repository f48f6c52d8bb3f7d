"""Node identity on the edge link (issue 26): a credential proves one node. A per-node token or a client
certificate for ``edge-2`` can neither connect as ``edge-1`` nor receive or report for edge-1's objects; rotation
and revocation work without a restart; malformed identity headers get 400/401, never a 500."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import websockets
from prometheus_client import CollectorRegistry
from testkit import GoLC, wait_for
from websockets.sync.client import connect

from apis.tokenfile import TokenFile
from globalmanager.config import ConfigError, config_from_dict
from globalmanager.messagelayer import EdgeServer, MessageLayer
from globalmanager.messagelayer.auth import EdgeAuth
from globalmanager.messagelayer.server import edge_server_from_config
from globalmanager.messagelayer.tokens import EdgeTokens, NodeTokens, parse_bearer

from .test_gm_edge_server import Edge, dataset

TOKENS = {"edge-1": "token-of-edge-1", "edge-2": "token-of-edge-2"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def refused_status(url: str, node: str, headers: dict[str, str], **kwargs) -> int:
    """The HTTP status that refused the upgrade (0 when it was accepted: the connection is closed again)."""
    try:
        with connect(url, additional_headers={"Node-Name": node, **headers}, open_timeout=5, **kwargs):
            pass
    except websockets.exceptions.InvalidStatus as exc:
        return exc.response.status_code
    return 0


@pytest.fixture
def tokens_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "node-tokens"
    directory.mkdir()
    for node, token in TOKENS.items():
        (directory / node).write_text(token + "\n")
    return directory


@pytest.fixture
def edge(tokens_dir: Path) -> Iterator[Edge]:
    e = Edge(ping_interval=5, token=EdgeAuth(nodes=NodeTokens(str(tokens_dir), grace=0)),
             credential_check_interval=0.05)
    e.state["edge-1"] = [dataset("d1")]
    e.state["edge-2"] = [dataset("d2", node="edge-2")]
    yield e
    e.close()


def test_a_node_token_cannot_connect_as_another_node(edge):
    real = GoLC(edge.url, "edge-1", headers=bearer(TOKENS["edge-1"]))
    assert real.recv()[0]["resourceName"] == "d1"
    for headers in (bearer(TOKENS["edge-2"]), {}, bearer("guess")):
        assert refused_status(edge.url, "edge-1", headers) == 401
    assert refused_status(edge.url, "edge-3", bearer(TOKENS["edge-2"])) == 401  # no token issued for edge-3
    assert edge.metric("sedna_gm_edge_rejected_connections_total", reason="unauthorized") == 4
    # the refused attempts never replaced the real edge-1: it still gets its messages
    edge.layer.send_to_edge("edge-1", "insert", dataset("d3"))
    assert real.recv()[0]["resourceName"] == "d3"
    assert edge.layer.connected_nodes() == ["edge-1"]
    real.close()


def test_a_node_receives_only_its_objects_and_cannot_report_for_another_nodes(edge):
    other = GoLC(edge.url, "edge-2", headers=bearer(TOKENS["edge-2"]))
    other.record()
    wait_for("edge-2's state", lambda: other.frames())
    edge.layer.send_to_edge("edge-1", "insert", dataset("d1", version="2"))
    edge.layer.send_to_edge("edge-2", "insert", dataset("d4", node="edge-2"))
    wait_for("edge-2's new object", lambda: other.frames(lambda h, c: h["resourceName"] == "d4"))
    assert {h["resourceName"] for h, _ in other.frames()} == {"d2", "d4"}
    other.send_status("default", "Dataset", "d1", {"numberOfSamples": 424242})  # edge-1's Dataset: forged
    other.send_status("default", "Dataset", "d2", {"numberOfSamples": 2})
    wait_for("edge-2's own report", lambda: edge.reports)
    assert [(m.node, m.name, dict(m.content)) for m in edge.reports] == [("edge-2", "d2", {"numberOfSamples": 2})]
    assert edge.metric("sedna_gm_edge_rejected_frames_total", reason="not_routed") == 1
    other.close()


def test_a_second_connection_replaces_the_first_only_with_the_nodes_credential(edge):
    first = GoLC(edge.url, "edge-1", headers=bearer(TOKENS["edge-1"]))
    first.recv()
    second = GoLC(edge.url, "edge-1", headers=bearer(TOKENS["edge-1"]))
    with pytest.raises(websockets.exceptions.ConnectionClosed):
        first.recv(timeout=10)
    assert second.recv()[0]["resourceName"] == "d1"
    second.close()


def test_a_rotated_node_token_is_picked_up_and_a_revoked_node_is_refused_and_cut_off(edge, tokens_dir):
    (tokens_dir / "edge-1").write_text("rotated-token-of-edge-1\n")
    assert refused_status(edge.url, "edge-1", bearer(TOKENS["edge-1"])) == 401  # grace 0: the old one is gone
    assert refused_status(edge.url, "edge-1", bearer("rotated-token-of-edge-1")) == 0
    live = GoLC(edge.url, "edge-2", headers=bearer(TOKENS["edge-2"]))
    live.recv()
    (tokens_dir / "edge-2").unlink()  # revoked
    with pytest.raises(websockets.exceptions.ConnectionClosed) as info:
        live.recv(timeout=10)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1008
    assert refused_status(edge.url, "edge-2", bearer(TOKENS["edge-2"])) == 401
    assert edge.metric("sedna_gm_edge_rejected_connections_total", reason="revoked") == 1
    (tokens_dir / "edge-2").write_text("reissued\n")
    assert refused_status(edge.url, "edge-2", bearer("reissued")) == 0


def test_a_rotated_node_token_keeps_the_previous_one_for_the_grace(tokens_dir):
    now = [100.0]
    e = Edge(token=EdgeAuth(nodes=NodeTokens(str(tokens_dir), grace=60, clock=lambda: now[0])))
    try:
        assert refused_status(e.url, "edge-1", bearer(TOKENS["edge-1"])) == 0
        (tokens_dir / "edge-1").write_text("rotated\n")
        assert refused_status(e.url, "edge-1", bearer("rotated")) == 0
        assert refused_status(e.url, "edge-1", bearer(TOKENS["edge-1"])) == 0
        now[0] += 61
        assert refused_status(e.url, "edge-1", bearer(TOKENS["edge-1"])) == 401
    finally:
        e.close()


def test_the_shared_token_still_admits_any_node_when_configured_with_node_tokens(tokens_dir):
    e = Edge(token=EdgeAuth(EdgeTokens("shared"), NodeTokens(str(tokens_dir))))
    try:
        assert refused_status(e.url, "edge-1", bearer("shared")) == 0
        assert refused_status(e.url, "edge-9", bearer("shared")) == 0
        assert refused_status(e.url, "edge-1", bearer(TOKENS["edge-1"])) == 0
        assert refused_status(e.url, "edge-1", bearer(TOKENS["edge-2"])) == 401
    finally:
        e.close()


def test_a_go_lc_without_hello_or_token_works_with_auth_off():
    e = Edge()
    try:
        e.state["edge-1"] = [dataset("d1")]
        lc = GoLC(e.url, "edge-1")
        assert lc.recv()[0]["resourceName"] == "d1"
        lc.send_status("default", "Dataset", "d1", {"numberOfSamples": 5})
        wait_for("the report", lambda: e.reports)
        lc.close()
    finally:
        e.close()


# -- the identity headers over a raw socket --------------------------------------------------------------------------

def raw_upgrade(port: int, headers: list[tuple[str, str]]) -> tuple[int, bytes]:
    """Send an upgrade with exactly ``headers`` (repeats kept); return the status and the whole answer."""
    lines = ["GET / HTTP/1.1", "Host: x", "Upgrade: websocket", "Connection: Upgrade",
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
             *(f"{k}: {v}" for k, v in headers)]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
        if not answer.startswith(b"HTTP/1.1 101"):
            while chunk := sock.recv(4096):
                answer += chunk
    return int(answer.split(b" ", 2)[1]), answer


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ([("Node-Name", "edge-1"), ("Node-Name", "edge-2"), ("Authorization", "Bearer token-of-edge-1")], 400),
        ([("Node-Name", "edge-1"), ("Authorization", "Bearer token-of-edge-1"),
          ("Authorization", "Bearer token-of-edge-1")], 401),
        ([("Node-Name", "edge-1"), ("Authorization", "Bearer")], 401),
        ([("Node-Name", "edge-1"), ("Authorization", "Bearer a b")], 401),
        ([("Node-Name", "edge-1"), ("Authorization", "Basic dXNlcjpwYXNz")], 401),
        ([("Node-Name", "edge-1"), ("Authorization", "bearer token-of-edge-1")], 101),
        ([("Node-Name", "edge-1"), ("Authorization", "BEARER  token-of-edge-1")], 101),
    ],
)
def test_identity_headers_are_checked_without_a_traceback(edge, headers, status):
    got, answer = raw_upgrade(edge.server.port, headers)
    assert got == status, answer
    assert b"Traceback" not in answer and b"Internal Server Error" not in answer


def test_a_repeated_identity_header_is_refused_with_auth_off():
    e = Edge()
    try:
        assert raw_upgrade(e.server.port, [("Node-Name", "edge-1"), ("Node-Name", "edge-1")])[0] == 400
        assert raw_upgrade(e.server.port, [("Node-Name", "edge-1"), ("Authorization", "Bearer a"),
                                           ("Authorization", "Bearer b")])[0] == 401
        assert e.metric("sedna_gm_edge_rejected_connections_total", reason="bad_header") == 2
    finally:
        e.close()


def test_parse_bearer():
    assert parse_bearer("Bearer abc") == "abc"
    assert parse_bearer("bEaReR   abc ") == "abc"
    assert parse_bearer("Bearer") is None
    assert parse_bearer("Token abc") is None


# -- client certificates ---------------------------------------------------------------------------------------------

def self_signed(directory: Path, name: str, san: str) -> tuple[Path, Path]:
    """A self-signed certificate with CN ``name`` and subjectAltName ``san``, and its key."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={name}",
                    "-addext", f"subjectAltName={san}", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def test_a_client_certificate_proves_only_the_node_it_names(tmp_path):
    server_cert, server_key = self_signed(tmp_path, "127.0.0.1", "IP:127.0.0.1")
    # client certificates the GM trusts directly (its client CA bundle holds them)
    edge1, edge2 = self_signed(tmp_path, "edge-1", "DNS:edge-1"), self_signed(tmp_path, "edge-2", "DNS:edge-2")
    ca = tmp_path / "clients.pem"
    ca.write_text(edge1[0].read_text() + edge2[0].read_text())
    cfg = config_from_dict({"websocket": {"address": "127.0.0.1", "port": 1, "certFile": str(server_cert),
                                          "keyFile": str(server_key), "clientCAFile": str(ca)}})
    cfg.websocket.validate()
    cfg.websocket.port = 0
    server = edge_server_from_config(MessageLayer(CollectorRegistry()), cfg.websocket)
    server.start()
    try:
        url = f"wss://127.0.0.1:{server.port}/"

        def client(cert: tuple[Path, Path] | None) -> ssl.SSLContext:
            context = ssl.create_default_context(cafile=str(server_cert))
            if cert is not None:
                context.load_cert_chain(str(cert[0]), str(cert[1]))
            return context

        assert refused_status(url, "edge-1", {}, ssl=client(edge1)) == 0
        assert refused_status(url, "edge-1", {}, ssl=client(edge2)) == 403
        # CERT_REQUIRED (no token auth configured): the TLS handshake fails (with TLS 1.3 the client may notice only
        # when it reads the answer)
        with pytest.raises((OSError, EOFError, websockets.exceptions.WebSocketException)):
            refused_status(url, "edge-1", {}, ssl=client(None))
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("websocket", "key"),
    [
        ({"nodeTokensDir": "/no/such/dir"}, "websocket.nodeTokensDir"),
        ({"clientCAFile": "/etc/hostname"}, "websocket.clientCAFile"),
        ({"clientCAFile": "/no/such/ca"}, "websocket.clientCAFile"),
    ],
)
def test_bad_identity_settings_name_their_key(websocket, key):
    with pytest.raises(ConfigError) as info:
        config_from_dict({"websocket": websocket}).validate()
    assert info.value.key == key


def test_the_shared_token_file_keeps_working(tmp_path):
    path = tmp_path / "token"
    path.write_text("s3cret\n")
    e = Edge(token=EdgeTokens(TokenFile(str(path))))
    try:
        assert refused_status(e.url, "edge-7", bearer("s3cret")) == 0
        assert refused_status(e.url, "edge-7", {"Authorization": "bearer s3cret"}) == 0
    finally:
        e.close()


def test_an_edge_server_with_node_tokens_from_config(tokens_dir):
    cfg = config_from_dict({"websocket": {"address": "127.0.0.1", "nodeTokensDir": str(tokens_dir)}})
    cfg.websocket.validate()
    server = edge_server_from_config(MessageLayer(CollectorRegistry()), cfg.websocket)
    assert isinstance(server, EdgeServer) and server._auth.mode == "node-token"


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        (["--cert-file", "/etc/hostname"], "--key-file"),
        (["--key-file", "/etc/hostname"], "--cert-file"),
        (["--cert-file", "/no/such.crt", "--key-file", "/etc/hostname"], "--cert-file"),
        (["--cert-file", "/etc/hostname", "--key-file", "/etc/hostname"], "--cert-file"),  # ws://: no TLS
    ],
)
def test_bad_lc_client_certificate_settings_name_their_flag(tmp_path, extra, key):
    from localcontroller.config import SettingError, load_settings

    with pytest.raises(SettingError) as info:
        load_settings(["--gm-address", "127.0.0.1:9000", "--node-name", "edge-1", "--rootfs", str(tmp_path), *extra],
                      {})
    assert info.value.setting == key
