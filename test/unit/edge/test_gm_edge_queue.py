"""The GM's per-node outgoing queue and writer, and the upstream dispatcher, without a network."""

from __future__ import annotations

import threading

import pytest
from prometheus_client import CollectorRegistry
from testkit import wait_for

from apis import errors
from apis.edge import DELETE, INSERT
from globalmanager.messagelayer.dispatcher import Outcome, Report, UpstreamDispatcher, is_transient
from globalmanager.messagelayer.layer import MessageLayer
from globalmanager.messagelayer.node import Node, Outgoing
from globalmanager.messagelayer.session import run_writer
from globalmanager.runtime.edge import InvalidReport, UpstreamMessage


class FakeSession:
    """Stands in for a websocket session: records frames, or fails every write."""

    _ids = iter(range(1, 10_000))

    def __init__(self, node: Node, fail: bool = False) -> None:
        self.id = next(self._ids)
        self.node = node.name
        self.features = frozenset()
        self.closed = threading.Event()
        self.fail = fail
        self.sent: list[str] = []

    def send(self, text: str) -> None:
        if self.fail:
            raise ConnectionError("peer gone")
        self.sent.append(text)

    def close(self, code: int = 1000, reason: str = "") -> None:
        self.closed.set()


def msg(name: str, text: str, operation: str = INSERT) -> Outgoing:
    return Outgoing(("dataset", "default", name), operation, text)


def test_a_failed_write_puts_the_message_back_and_the_next_session_delivers_it():
    node = Node("edge-1", lambda n, c: None)
    node.put(msg("d1", "v1"))
    broken = FakeSession(node, fail=True)
    node.session = broken
    run_writer(broken, node, lambda op: None)  # returns after the failed write
    assert broken.closed.is_set() and node.pending() == 1
    healthy = FakeSession(node)
    node.session = healthy
    writer = threading.Thread(target=run_writer, args=(healthy, node, lambda op: None), daemon=True)
    writer.start()
    wait_for("the re-queued message", lambda: healthy.sent == ["v1"])  # after the rate-limited delay
    healthy.closed.set()
    node.queue.shut_down()
    writer.join(5)


def test_a_newer_message_wins_over_one_whose_write_failed():
    node = Node("edge-1", lambda n, c: None)
    node.put(msg("d1", "v1"))
    taken = node.take(("dataset", "default", "d1"))
    node.put(msg("d1", "v2"))  # arrives while v1 is being written
    node.failed(taken)
    assert node.take(("dataset", "default", "d1")).text == "v2"


def test_a_delete_of_an_object_in_flight_is_still_sent():
    node = Node("edge-1", lambda n, c: None)
    node.put(msg("d1", "v1"))
    taken = node.take(("dataset", "default", "d1"))
    node.put(msg("d1", "gone", DELETE))  # the insert may reach the node: the delete must follow
    node.delivered(taken)
    assert node.take(("dataset", "default", "d1")).operation == DELETE


def test_reports_are_routed_only_while_the_latest_message_is_an_insert():
    layer = MessageLayer(CollectorRegistry())
    obj = {"kind": "Dataset", "metadata": {"namespace": "default", "name": "d1"}}
    layer.send_to_edge("edge-1", INSERT, obj)
    node = layer._nodes["edge-1"]
    assert node.is_routed(("dataset", "default", "d1"))
    layer.send_to_edge("edge-1", DELETE, obj)
    assert not node.is_routed(("dataset", "default", "d1"))
    assert "edge-1" not in layer._nodes  # idle and never connected: forgotten
    with pytest.raises(ValueError):
        layer.send_to_edge("edge-1", "status", obj)


def report(name: str, n: int, report_id: str = "") -> Report:
    return Report(UpstreamMessage("edge-1", "default", "dataset", name, "status", {"numberOfSamples": n}), report_id)


class Recorder:
    def __init__(self) -> None:
        self.outcomes: list[tuple[Report, Outcome]] = []

    def __call__(self, rep: Report, outcome: Outcome) -> None:
        self.outcomes.append((rep, outcome))


def test_transient_errors_retry_the_same_report_before_later_ones():
    finished = Recorder()
    dispatcher = UpstreamDispatcher(finished, workers=2)
    calls: list[int] = []

    def flaky(m: UpstreamMessage) -> None:
        calls.append(m.content["numberOfSamples"])
        if len(calls) <= 2:
            raise errors.ConflictError("the object has been modified")

    dispatcher.add_handler("Dataset", flaky)
    dispatcher.start()
    try:
        dispatcher.submit(report("d1", 1))
        dispatcher.submit(report("d1", 2))
        wait_for("both reports", lambda: len(finished.outcomes) == 2)
        assert calls == [1, 1, 1, 2]
        assert [o.error for _, o in finished.outcomes] == [None, None]
        assert dispatcher.pending() == 0
    finally:
        dispatcher.stop()


def test_refused_and_permanently_failing_reports_are_dropped_with_their_reason():
    finished = Recorder()
    dispatcher = UpstreamDispatcher(finished, workers=1)

    def handler(m: UpstreamMessage) -> None:
        if m.name == "bad":
            raise InvalidReport("numberOfSamples must be a non-negative integer")
        raise errors.InvalidError("status.numberOfSamples: Invalid value")

    dispatcher.add_handler("dataset", handler)
    with pytest.raises(ValueError):
        dispatcher.add_handler("DATASET", handler)
    dispatcher.start()
    try:
        dispatcher.submit(report("bad", -1))
        dispatcher.submit(report("rejected", 1))
        wait_for("both outcomes", lambda: len(finished.outcomes) == 2)
        reasons = {r.message.name: o.reason for r, o in finished.outcomes}
        assert reasons == {"bad": "invalid_report", "rejected": "apply_failed"}
    finally:
        dispatcher.stop()


@pytest.mark.parametrize(
    ("exc", "transient"),
    [
        (errors.ConflictError("x"), True),
        (errors.TooManyRequestsError("x"), True),
        (errors.InternalError("x"), True),
        (ConnectionRefusedError("x"), True),
        (errors.NotFoundError("x"), False),
        (errors.InvalidError("x"), False),
        (KeyError("x"), False),
    ],
)
def test_is_transient(exc, transient):
    assert is_transient(exc) is transient
