"""The GM's edge link over a real websocket, driven by a client that behaves like Go Sedna's LC (``testkit.GoLC``:
empty-header greeting, base64 content, no acks) and by raw frames written from the protocol."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import websockets
from prometheus_client import CollectorRegistry
from testkit import GoLC, make_frame, wait_for
from websockets.sync.client import connect

from apis.tokenfile import TokenFile
from globalmanager.messagelayer import EdgeServer, MessageLayer
from globalmanager.messagelayer.tokens import EdgeTokens
from globalmanager.runtime.edge import IncompleteState, InvalidReport


def dataset(name: str, node: str = "edge-1", version: str = "1") -> dict:
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset",
            "metadata": {"namespace": "default", "name": name, "resourceVersion": version},
            "spec": {"url": f"/data/{name}.txt", "format": "txt", "nodeName": node}}


class Edge:
    """A message layer and its server on a free port, with a Dataset state source the test fills."""

    def __init__(self, **server_options) -> None:
        self.registry = CollectorRegistry()
        self.layer = MessageLayer(self.registry)
        self.reports: list = []
        self.state: dict[str, list[dict]] = {}
        self.handler_error: Exception | None = None
        self.layer.add_upstream_handler("Dataset", self._handle)
        self.layer.add_state_source("dataset", lambda node: list(self.state.get(node, [])))
        self.layer.start()
        self.server = EdgeServer(self.layer, "127.0.0.1", 0, hello_timeout=0.5, **server_options)
        self.server.start()
        self.url = f"ws://127.0.0.1:{self.server.port}/any/path"

    def _handle(self, message) -> None:
        if self.handler_error is not None:
            raise self.handler_error
        self.reports.append(message)

    def metric(self, name: str, **labels: str) -> float:
        return self.registry.get_sample_value(name, labels) or 0.0

    def close(self) -> None:
        self.server.stop()
        self.layer.stop()


@pytest.fixture
def edge() -> Iterator[Edge]:
    e = Edge(ping_interval=5)
    yield e
    e.close()


def is_insert_of(name: str):
    return lambda h, c: h["operation"] == "insert" and h["resourceName"] == name


def test_a_go_lc_gets_its_full_state_and_its_reports_reach_the_handler(edge):
    edge.state["edge-1"] = [dataset("d1")]
    lc = GoLC(edge.url, "edge-1")
    header, content = lc.recv()
    assert header == {"namespace": "default", "resourceKind": "dataset", "resourceName": "d1", "operation": "insert"}
    assert content == dataset("d1")
    lc.send_status("default", "Dataset", "d1", {"numberOfSamples": 7})  # Go's LC sends the capitalised kind
    wait_for("the report", lambda: edge.reports)
    m = edge.reports[0]
    assert (m.node, m.namespace, m.kind, m.name, m.operation, dict(m.content)) == (
        "edge-1", "default", "dataset", "d1", "status", {"numberOfSamples": 7})
    assert edge.metric("sedna_gm_edge_connected_nodes") == 1
    assert edge.metric("sedna_gm_edge_frames_total", direction="down", operation="insert") == 1
    assert edge.metric("sedna_gm_edge_frames_total", direction="up", operation="hello") == 1
    assert edge.metric("sedna_gm_edge_rejected_frames_total", reason="not_json") == 0  # the greeting is no error
    lc.close()
    wait_for("the disconnect", lambda: edge.metric("sedna_gm_edge_connected_nodes") == 0)


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        ("{not json", "not_json"),
        ('["a"]', "bad_shape"),
        ('{"header": {"operation": "status"}, "content": "%%%"}', "bad_base64"),
        (make_frame("default", "Dataset", "d1", "insert", {}), "unknown_operation"),
        (make_frame("default", "Reid", "d1", "status", {}), "unknown_kind"),
        (make_frame("default", "Dataset", "other", "status", {"numberOfSamples": 1}), "not_routed"),
        (make_frame("default", "Dataset", "d1", "status", b"{oops"), "bad_content"),
        (make_frame("default", "Dataset", "d1", "status", [1, 2]), "bad_content"),
    ],
)
def test_a_bad_frame_is_counted_and_dropped_and_the_connection_stays(edge, frame, reason):
    edge.state["edge-1"] = [dataset("d1")]
    lc = GoLC(edge.url, "edge-1")
    lc.recv()
    lc.send_raw(frame)
    wait_for("the rejection", lambda: edge.metric("sedna_gm_edge_rejected_frames_total", reason=reason) == 1)
    lc.send_status("default", "Dataset", "d1", {"numberOfSamples": 3})  # same connection still works
    wait_for("the good report", lambda: [dict(m.content) for m in edge.reports] == [{"numberOfSamples": 3}])
    lc.close()


def test_an_invalid_report_refused_by_its_handler_is_counted(edge):
    edge.state["edge-1"] = [dataset("d1")]
    edge.handler_error = InvalidReport("numberOfSamples must be a non-negative integer")
    lc = GoLC(edge.url, "edge-1")
    lc.recv()
    lc.send_status("default", "dataset", "d1", {"numberOfSamples": -1})
    wait_for("the rejection", lambda: edge.metric("sedna_gm_edge_rejected_frames_total", reason="invalid_report") == 1)
    lc.close()


@pytest.mark.parametrize("headers", [{}, {"Node-Name": "Edge_1"}, {"Node-Name": "-x"}])
def test_a_missing_or_invalid_node_name_is_refused_with_400(edge, headers):
    with pytest.raises(websockets.exceptions.InvalidStatus) as info:
        connect(edge.url, additional_headers=headers, open_timeout=5)
    assert info.value.response.status_code == 400
    assert b"Node-Name" in info.value.response.body
    assert edge.metric("sedna_gm_edge_rejected_connections_total", reason="bad_node_name") == 1


def test_a_token_is_required_when_configured():
    e = Edge(token="s3cret")
    try:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            with pytest.raises(websockets.exceptions.InvalidStatus) as info:
                GoLC(e.url, "edge-1", headers=headers)
            assert info.value.response.status_code == 401
        e.state["edge-1"] = [dataset("d1")]
        lc = GoLC(e.url, "edge-1", headers={"Authorization": "Bearer s3cret"})
        assert lc.recv()[0]["resourceName"] == "d1"
        lc.close()
        assert e.metric("sedna_gm_edge_rejected_connections_total", reason="unauthorized") == 2
    finally:
        e.close()


def _refused(url: str, token: str) -> bool:
    try:
        GoLC(url, "edge-2", headers={"Authorization": f"Bearer {token}"}).close()  # another node: edge-1 stays
    except websockets.exceptions.InvalidStatus as exc:
        assert exc.response.status_code == 401
        return True
    return False


@pytest.mark.parametrize("grace", [300.0, 0.0])
def test_a_rotated_token_file_is_picked_up_and_the_previous_token_lasts_the_grace(tmp_path, grace):
    """No restart: the file is looked at on each upgrade; the old token is accepted for ``grace`` seconds after
    the change was first seen (never with 0), the new one at once; a connection made with the old token stays."""
    path = tmp_path / "token"
    path.write_text("old-token\n")
    now = [1000.0]
    e = Edge(token=EdgeTokens(TokenFile(str(path)), grace, clock=lambda: now[0]))
    try:
        e.state["edge-1"] = [dataset("d1")]
        kept = GoLC(e.url, "edge-1", headers={"Authorization": "Bearer old-token"})
        assert kept.recv()[0]["resourceName"] == "d1"
        assert _refused(e.url, "new-token")
        path.write_text("new-token-2\n")
        assert not _refused(e.url, "new-token-2")
        assert _refused(e.url, "old-token") is (grace == 0)
        now[0] += grace + 1
        assert _refused(e.url, "old-token") and not _refused(e.url, "new-token-2")
        kept.send_status("default", "Dataset", "d1", {"numberOfSamples": 3})  # never cut off
        wait_for("the report of the connection made with the old token", lambda: len(e.reports) == 1)
        kept.close()
    finally:
        e.close()


def test_an_offline_node_keeps_only_the_latest_message_per_object(edge):
    for version in ("1", "2", "3"):
        edge.layer.send_to_edge("edge-1", "insert", dataset("d1", version=version))
    edge.layer.send_to_edge("edge-1", "insert", dataset("d2"))
    assert edge.layer.pending_messages("edge-1") == 2
    assert edge.metric("sedna_gm_edge_pending_messages", node="edge-1") == 2
    lc = GoLC(edge.url, "edge-1")
    got = [lc.recv() for _ in range(2)]
    assert [(h["resourceName"], c["metadata"]["resourceVersion"]) for h, c in got] == [("d1", "3"), ("d2", "1")]
    wait_for("nothing pending", lambda: edge.metric("sedna_gm_edge_pending_messages", node="edge-1") == 0)
    lc.close()


def test_a_node_that_never_connects_holds_at_most_one_message_per_routed_object(edge):
    for i in range(200):
        edge.layer.send_to_edge("edge-9", "insert", dataset(f"d{i}"))
        edge.layer.send_to_edge("edge-9", "delete", dataset(f"d{i}"))  # never delivered: cancels the insert
    edge.layer.send_to_edge("edge-9", "insert", dataset("kept"))
    assert edge.layer.pending_messages("edge-9") == 1


def test_a_reconnecting_node_gets_what_it_missed_and_its_full_state(edge):
    edge.state["edge-1"] = [dataset("d1")]
    lc = GoLC(edge.url, "edge-1")
    assert lc.recv()[0]["resourceName"] == "d1"
    lc.close()
    wait_for("the disconnect", lambda: not edge.layer.connected_nodes())
    edge.layer.send_to_edge("edge-1", "delete", dataset("d1"))  # missed while away
    edge.state["edge-1"] = [dataset("d2")]
    lc = GoLC(edge.url, "edge-1")
    got = {(h["operation"], h["resourceName"]) for h, _ in (lc.recv(), lc.recv())}
    assert got == {("delete", "d1"), ("insert", "d2")}
    lc.close()


def test_a_second_connection_of_a_node_replaces_the_first(edge):
    first = GoLC(edge.url, "edge-1")
    wait_for("the first connection", lambda: edge.layer.connected_nodes() == ["edge-1"])
    second = GoLC(edge.url, "edge-1")
    with pytest.raises(websockets.exceptions.ConnectionClosed):
        first.recv(timeout=10)
    edge.layer.send_to_edge("edge-1", "insert", dataset("d1"))
    assert second.recv()[0]["resourceName"] == "d1"
    assert edge.metric("sedna_gm_edge_connected_nodes") == 1
    second.close()


def test_with_acks_a_report_is_applied_once_and_acked_each_time_it_is_sent(edge):
    edge.state["edge-1"] = [dataset("d1")]
    lc = GoLC(edge.url, "edge-1", greet=False)
    lc.send_raw(make_frame("", "", "", "hello", {"features": ["ack", "resync", "future-thing"]}))
    assert lc.recv() == ({"namespace": "", "resourceKind": "", "resourceName": "", "operation": "hello"},
                         {"features": ["ack", "resync"]})
    header, body = lc.recv()
    assert header["operation"] == "resync"
    assert body == {"kinds": ["dataset"], "objects": [{"kind": "dataset", "namespace": "default", "name": "d1"}]}
    lc.recv_until(is_insert_of("d1"))
    for _ in range(2):
        lc.send_status("default", "Dataset", "d1", {"numberOfSamples": 4}, id="epoch-1")
        header, body = lc.recv_until(lambda h, c: h["operation"] == "ack")
        assert header["id"] == "epoch-1" and body == {}
    assert len(edge.reports) == 1
    lc.send_status("default", "Dataset", "nope", {"numberOfSamples": 4}, id="epoch-2")
    header, body = lc.recv_until(lambda h, c: h["operation"] == "ack")
    assert header["id"] == "epoch-2" and body["error"].startswith("not_routed")
    lc.close()


def greet_with_resync(edge: Edge) -> tuple[GoLC, list[dict]]:
    """A client that negotiates ack and resync; returns it and the resync's body after the hello."""
    lc = GoLC(edge.url, "edge-1", greet=False)
    lc.send_raw(make_frame("", "", "", "hello", {"features": ["ack", "resync"]}))
    assert lc.recv()[0]["operation"] == "hello"
    header, body = lc.recv()
    assert header["operation"] == "resync"
    return lc, body


def test_a_resync_lists_only_the_kinds_whose_state_source_answered_in_full(edge):
    edge.state["edge-1"] = [dataset("d1")]
    job = {"apiVersion": "sedna.io/v1alpha1", "kind": "IncrementalLearningJob",
           "metadata": {"namespace": "default", "name": "il-1"}}

    def unreachable(node: str) -> list[dict]:
        raise ConnectionError("API server unreachable for a moment")

    def partial(node: str) -> list[dict]:
        raise IncompleteState([job], "a Secret could not be read now")

    edge.layer.add_state_source("model", unreachable)
    edge.layer.add_state_source("incrementallearningjob", partial)
    lc, body = greet_with_resync(edge)
    # the node keeps what it holds of Models and IncrementalLearningJobs; what the partial answer had is still sent
    assert body == {"kinds": ["dataset"], "objects": [{"kind": "dataset", "namespace": "default", "name": "d1"},
                                                      {"kind": "incrementallearningjob", "namespace": "default",
                                                       "name": "il-1"}]}
    lc.recv_until(is_insert_of("il-1"))
    lc.close()


def test_a_delete_queued_while_the_node_connects_reaches_it(edge):
    """After a GM restart the node may hold an object the resync lists; deleted before its insert went out, the
    node must get the delete (it was told to keep the object)."""
    edge.state["edge-1"] = [dataset("d1")]

    def deleted_meanwhile(node: str) -> list[dict]:  # runs after the Dataset source queued d1's insert
        edge.layer.send_to_edge(node, "delete", dataset("d1"))
        return []

    edge.layer.add_state_source("model", deleted_meanwhile)
    lc, body = greet_with_resync(edge)
    assert {"kind": "dataset", "namespace": "default", "name": "d1"} in body["objects"]
    header, _ = lc.recv_until(lambda h, c: h["resourceName"] == "d1")
    assert header["operation"] == "delete"
    lc.close()


def test_the_hello_is_answered_before_the_state_sources_run(edge):
    answered = threading.Event()
    answered_first: list[bool] = []
    edge.layer.add_state_source("model", lambda node: answered_first.append(answered.wait(5)) or [])
    lc = GoLC(edge.url, "edge-1", greet=False)
    lc.send_raw(make_frame("", "", "", "hello", {"features": ["ack", "resync"]}))
    assert lc.recv()[0]["operation"] == "hello"
    answered.set()
    assert lc.recv()[0]["operation"] == "resync"
    assert answered_first == [True]  # a slow state source no longer delays the answer past the LC's hello timeout
    lc.close()


def test_a_frame_over_the_size_limit_closes_only_that_connection():
    e = Edge(max_frame_bytes=2048)
    try:
        e.state["edge-1"] = [dataset("d1")]
        e.state["edge-2"] = [dataset("d2", node="edge-2")]
        big, other = GoLC(e.url, "edge-1"), GoLC(e.url, "edge-2")
        big.recv()
        other.recv()
        big.send_status("default", "Dataset", "d1", {"numberOfSamples": 1, "pad": "x" * 4096})
        with pytest.raises(websockets.exceptions.ConnectionClosed):
            big.recv(timeout=10)
        wait_for("the count", lambda: e.metric("sedna_gm_edge_rejected_frames_total", reason="too_large") == 1)
        other.send_status("default", "Dataset", "d2", {"numberOfSamples": 2})
        wait_for("the other node's report", lambda: [m.node for m in e.reports] == ["edge-2"])
        assert e.layer.connected_nodes() == ["edge-2"]
        other.close()
    finally:
        e.close()


def test_a_peer_that_stops_answering_pings_is_dropped():
    e = Edge(ping_interval=0.2)
    try:
        sock = socket.create_connection(("127.0.0.1", e.server.port))
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                     b"Node-Name: edge-1\r\n\r\n")
        assert b" 101 " in sock.recv(4096)
        wait_for("the connection", lambda: e.layer.connected_nodes() == ["edge-1"])
        # never reads again: pings go unanswered
        wait_for("the dead peer to be dropped", lambda: e.layer.connected_nodes() == [], timeout=10)
        sock.close()
    finally:
        e.close()


def test_reports_of_one_object_are_handled_in_order_and_never_concurrently(edge):
    edge.state["edge-1"] = [dataset("d1"), dataset("d2")]
    active: dict[str, int] = {"d1": 0, "d2": 0}
    overlap: list[str] = []
    order: list[tuple[str, int]] = []
    lock = threading.Lock()

    def slow(message) -> None:
        with lock:
            active[message.name] += 1
            if active[message.name] > 1:
                overlap.append(message.name)
        time.sleep(0.002)  # a handler that takes a while
        with lock:
            order.append((message.name, message.content["numberOfSamples"]))
            active[message.name] -= 1

    edge.layer._dispatcher._handlers["dataset"] = slow
    lc = GoLC(edge.url, "edge-1")
    lc.recv()
    lc.recv()
    for i in range(30):
        lc.send_status("default", "Dataset", "d1", {"numberOfSamples": i})
        lc.send_status("default", "Dataset", "d2", {"numberOfSamples": i})
    wait_for("every report", lambda: len(order) == 60)
    assert not overlap
    assert [n for name, n in order if name == "d1"] == list(range(30))
    assert [n for name, n in order if name == "d2"] == list(range(30))
    lc.close()
