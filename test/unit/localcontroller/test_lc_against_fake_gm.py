"""sedna-lc against a GM written in the test from the protocol (``testkit.FakeGM``): as Go Sedna's GM (no hello, no
acks) and as ours (hello, acks, resync). Checks the wire independently of our own GM."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import websockets.sync.server
from testkit import FakeGM, http_get, make_frame, wait_for
from testkit.lc import RunningLC

from localcontroller.gmclient import Backoff, GMClient
from localcontroller.store import Store

NS = "default"


def dataset(name: str = "d1", url: str = "/data/a.txt", fmt: str = "txt") -> dict:
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"namespace": NS, "name": name},
            "spec": {"url": url, "format": fmt, "nodeName": "edge-1"}}


def model(name: str = "m1", spec: object = None) -> dict:
    obj: dict = {"kind": "Model", "metadata": {"namespace": NS, "name": name}}
    if spec is not None:
        obj["spec"] = spec
    return obj


def is_status(h: dict, c: object) -> bool:
    return h.get("operation") == "status"


@pytest.fixture
def our_gm() -> Iterator[FakeGM]:
    gm = FakeGM(features=["ack", "resync"])
    yield gm
    gm.close()


def test_against_our_kind_of_gm_reports_carry_ids_and_leave_the_outbox_when_acked(tmp_path, our_gm):
    lc = RunningLC(tmp_path, our_gm)
    try:
        node, header, content = our_gm.next_frame()
        assert node == "edge-1" and header["operation"] == "hello"
        assert content == {"features": ["ack", "resync"]}
        wait_for("/readyz", lambda: http_get(lc.url + "/readyz")[0] == 200)
        (lc.rootfs / "data/a.txt").write_text("x\ny\n")
        our_gm.send(make_frame(NS, "dataset", "d1", "insert", dataset()))
        _, header, content = our_gm.next_frame(is_status)
        assert header["resourceKind"] == "Dataset" and header["resourceName"] == "d1" and header["namespace"] == NS
        assert content == {"numberOfSamples": 2}
        assert header["id"] == f"{lc.lc.store.epoch}-1"
        wait_for("the acked report to leave the outbox", lambda: lc.lc.store.pending_reports() == 0)
        assert lc.lc.store.get_resource("dataset", NS, "d1") == dataset()
    finally:
        assert lc.close() == 0


def test_unacked_reports_are_resent_in_order_after_a_reconnect(tmp_path):
    gm = FakeGM(features=["ack", "resync"], auto_ack=False)
    lc = RunningLC(tmp_path, gm)
    try:
        (lc.rootfs / "data/a.txt").write_text("x\n")
        gm.next_frame(lambda h, c: h["operation"] == "hello")
        gm.send(make_frame(NS, "dataset", "d1", "insert", dataset()))
        first = gm.next_frame(is_status)[1]["id"]
        with open(lc.rootfs / "data/a.txt", "a") as fh:
            fh.write("y\n")
        second = gm.next_frame(is_status)[1]["id"]
        assert lc.lc.store.pending_reports() == 2
        gm.auto_ack = True
        gm.drop_connection()
        resent = [gm.next_frame(is_status, timeout=20)[1]["id"] for _ in range(2)]
        assert resent == [first, second]
        wait_for("the outbox to empty", lambda: lc.lc.store.pending_reports() == 0)
    finally:
        lc.close()
        gm.close()


def test_against_a_go_gm_no_ids_are_sent_and_a_report_leaves_the_outbox_once_written(tmp_path):
    gm = FakeGM(features=None)  # Go Sedna's GM: ignores our hello, never acks
    store = Store(str(tmp_path / "lc.db"))
    frames: list = []
    client = GMClient(f"ws://{gm.address}/", "edge-1", store, frames.append, lambda body: None, hello_timeout=0.3)
    stop = threading.Event()
    client.start(stop)
    try:
        _, header, content = gm.next_frame()
        assert header["operation"] == "hello"  # a Go GM logs it as an unknown operation and goes on
        wait_for("connected", client.connected.is_set)
        assert client.features == frozenset()
        client.report(NS, "Dataset", "d1", {"numberOfSamples": 3})
        _, header, content = gm.next_frame(is_status)
        assert header == {"namespace": NS, "resourceKind": "Dataset", "resourceName": "d1", "operation": "status"}
        assert content == {"numberOfSamples": 3}
        wait_for("the outbox to empty", lambda: store.pending_reports() == 0)
        gm.send(make_frame(NS, "dataset", "d1", "insert", dataset()))  # Go's GM frames reach the handler
        wait_for("the downstream frame", lambda: frames)
        assert frames[0].header.operation == "insert" and frames[0].json() == dataset()
    finally:
        stop.set()
        client.join(5)
        gm.close()
        store.close()


def test_update_is_handled_like_insert_and_delete_removes_the_object(tmp_path, our_gm):
    lc = RunningLC(tmp_path, our_gm)
    try:
        (lc.rootfs / "data/a.txt").write_text("1\n")
        (lc.rootfs / "data/b.csv").write_text("h\n1\n2\n3\n")
        lc.wait_connected()
        our_gm.send(make_frame(NS, "dataset", "d1", "insert", dataset()))
        assert our_gm.next_frame(is_status)[2] == {"numberOfSamples": 1}
        our_gm.send(make_frame(NS, "dataset", "d1", "update", dataset(url="/data/b.csv", fmt="csv")))
        assert our_gm.next_frame(is_status)[2] == {"numberOfSamples": 3}
        our_gm.send(make_frame(NS, "dataset", "d1", "delete", dataset()))
        wait_for("the delete", lambda: lc.lc.store.get_resource("dataset", NS, "d1") is None)
        our_gm.send(make_frame(NS, "model", "m1", "insert", model()))
        wait_for("the model", lambda: lc.lc.ctx.manager("model").get(NS, "m1") is not None)
    finally:
        lc.close()


def test_messages_of_one_object_apply_in_order(tmp_path, our_gm):
    lc = RunningLC(tmp_path, our_gm)
    try:
        lc.wait_connected()
        for i in range(50):
            our_gm.send(make_frame(NS, "model", "m1", "insert", model(spec={"v": i})))
            if i % 10 == 9:
                our_gm.send(make_frame(NS, "model", "m1", "delete", model()))
        our_gm.send(make_frame(NS, "model", "m1", "insert", model(spec={"v": "last"})))
        wait_for("the last version", lambda: (lc.lc.store.get_resource("model", NS, "m1") or {}).get("spec")
                 == {"v": "last"})
        # the store has it before the manager's insert returns: wait for that message to be done
        wait_for("every message applied", lc.lc.downstream.pending, check=lambda n: n == 0)
        assert lc.lc.ctx.manager("model").get(NS, "m1")["spec"] == {"v": "last"}
    finally:
        lc.close()


def test_resync_drops_what_the_gm_no_longer_sends(tmp_path, our_gm):
    lc = RunningLC(tmp_path, our_gm)
    try:
        lc.wait_connected()
        for name in ("keep", "stale"):
            our_gm.send(make_frame(NS, "model", name, "insert", model(name)))
        our_gm.send(make_frame(NS, "dataset", "other-kind", "insert", dataset("other-kind")))
        wait_for("both models", lambda: len(lc.lc.store.resources("model")) == 2)
        our_gm.send(make_frame("", "", "", "resync",
                               {"kinds": ["model"], "objects": [{"kind": "model", "namespace": NS, "name": "keep"}]}))
        wait_for("the stale model to go", lambda: [r[2] for r in lc.lc.store.resources("model")] == ["keep"])
        assert lc.lc.store.get_resource("dataset", NS, "other-kind") is not None  # kinds not listed are kept
    finally:
        lc.close()


def test_a_restarted_lc_resumes_from_its_database_without_a_gm(tmp_path, our_gm):
    lc = RunningLC(tmp_path, our_gm)
    (lc.rootfs / "data/a.txt").write_text("1\n2\n")
    lc.wait_connected()
    our_gm.send(make_frame(NS, "dataset", "d1", "insert", dataset()))
    assert our_gm.next_frame(is_status)[2] == {"numberOfSamples": 2}
    wait_for("the ack", lambda: lc.lc.store.pending_reports() == 0)
    lc.close()
    our_gm.close()
    (lc.rootfs / "data/a.txt").write_text("1\n2\n3\n4\n")  # changed while the LC was down
    again = RunningLC(tmp_path, None, gm_address="127.0.0.1:1")  # no GM at all
    try:
        wait_for("the new count in the outbox", lambda: [e.content for e in again.lc.store.iter_reports()]
                 == [b'{"numberOfSamples":4}'])
        assert http_get(again.url + "/readyz")[0] == 503
        assert http_get(again.url + "/healthz")[0] == 200
        text = http_get(again.url + "/metrics")[1]
        assert "sedna_lc_upstream_pending 1.0" in text and "sedna_lc_gm_connected 0.0" in text
    finally:
        again.close()


def test_a_refused_connection_is_logged_and_retried(tmp_path):
    gm = FakeGM(features=["ack"], status=401)
    store = Store(str(tmp_path / "lc.db"))
    client = GMClient(f"ws://{gm.address}/", "edge-1", store, lambda f: None, lambda b: None, token="t0k",
                      backoff=Backoff(0.05, 0.1))
    stop = threading.Event()
    client.start(stop)
    try:
        wait_for("several attempts", lambda: len(gm.requests) >= 3)
        assert not client.connected.is_set()
        assert all(r.get("Authorization") == "Bearer t0k" and r.get("Node-Name") == "edge-1" for r in gm.requests)
    finally:
        stop.set()
        client.join(5)
        gm.close()
        store.close()


def test_a_report_over_the_frame_limit_is_dropped_and_later_reports_go_on(tmp_path, our_gm):
    store = Store(str(tmp_path / "lc.db"))
    store.add_report(NS, "Dataset", "big", b'{"numberOfSamples": "' + b"9" * 4096 + b'"}')
    store.add_report(NS, "Dataset", "small", b'{"numberOfSamples": 1}')
    client = GMClient(f"ws://{our_gm.address}/", "edge-1", store, lambda f: None, lambda b: None,
                      max_report_bytes=2048)
    stop = threading.Event()
    client.start(stop)
    try:
        _, header, content = our_gm.next_frame(is_status)
        assert header["resourceName"] == "small" and content == {"numberOfSamples": 1}
        wait_for("an empty outbox", lambda: store.pending_reports() == 0)
    finally:
        stop.set()
        client.join(5)
        store.close()


def test_a_gm_that_drops_every_connection_at_once_is_redialled_with_growing_backoff(tmp_path):
    connections = []

    def drop(conn) -> None:
        connections.append(conn)
        conn.close()

    server = websockets.sync.server.serve(drop, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    store = Store(str(tmp_path / "lc.db"))
    backoff = Backoff(0.01, 0.05)
    client = GMClient(f"ws://127.0.0.1:{server.socket.getsockname()[1]}/", "edge-1", store, lambda f: None,
                      lambda b: None, backoff=backoff, hello_timeout=0.1)
    stop = threading.Event()
    client.start(stop)
    try:
        wait_for("several short connections", lambda: len(connections) >= 4)
        assert backoff._attempt >= 3  # not reset by a connection that did not last
    finally:
        stop.set()
        client.join(5)
        server.shutdown()
        store.close()


def test_backoff_grows_with_jitter_to_its_cap_and_resets():
    class Top:
        def uniform(self, low: float, high: float) -> float:
            return high

    backoff = Backoff(0.5, 30.0, rng=Top())  # type: ignore[arg-type]
    assert [backoff.next() for _ in range(8)] == [0.5, 1, 2, 4, 8, 16, 30, 30]
    backoff.reset()
    assert backoff.next() == 0.5
    draws = [Backoff(0.5, 30.0).next() for _ in range(20)]
    assert all(0.25 <= d <= 0.5 for d in draws) and len(set(draws)) > 1


def test_running_lc_close_raises_what_the_lcs_run_raised(tmp_path, our_gm, monkeypatch):
    """``RunningLC.close`` used to fail with ``KeyError: 'code'`` (and the LC's thread died with the real error, which
    another directory's thread guard then blamed on its own test): it now raises the LC's own exception."""
    lc = RunningLC(tmp_path, our_gm)
    real_close = lc.lc.store.close

    def failing_close() -> None:
        real_close()
        raise OSError(9, "Bad file descriptor")

    monkeypatch.setattr(lc.lc.store, "close", failing_close)
    with pytest.raises(AssertionError, match="the LC's run\\(\\) raised") as raised:
        lc.close()
    assert isinstance(raised.value.__cause__, OSError) and raised.value.__cause__.errno == 9
