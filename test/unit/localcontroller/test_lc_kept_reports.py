"""A 200 from the worker API is a promise (issue 25 item 1, issue 26 item 5): a report for a job this node does not
hold yet is kept (durably, bounded) and reaches the GM in order once the job arrives; past a bound, or with the outbox
full, the answer is 503 with Retry-After."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import structlog.testing
from testkit import FakeGM, make_frame, wait_for
from testkit.lc import RecordingManager, RunningLC

from localcontroller.delivery import OutboxLimits, PendingLimits, WorkerReports
from localcontroller.downstream import Change
from localcontroller.server import KEPT, ReportRefused
from localcontroller.store import Store
from localcontroller.worker import WorkerMessage

NS = "default"
JI = "jointinferenceservice"


def ji_service(name: str = "helmet") -> dict[str, Any]:
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "JointInferenceService",
            "metadata": {"namespace": NS, "name": name, "uid": "u-ji"},
            "spec": {"edgeWorker": {"model": {"name": "little"}, "template": {"spec": {"nodeName": "edge-1"}}},
                     "cloudWorker": {"model": {"name": "big"}, "template": {"spec": {"containers": []}}}}}


def report(number: int, owner: str = "helmet") -> dict[str, Any]:
    return {"name": "edgeworker-abcde", "namespace": NS, "ownerName": owner, "ownerKind": JI, "kind": "inference",
            "ownerInfo": {"inferenceNumber": number}}


def post(lc: RunningLC, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
    request = urllib.request.Request(f"{lc.url}/sedna/workers/{body['name']}/info", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, dict(resp.headers), json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


def statuses_upstream(gm: FakeGM, count: int) -> list[int]:
    """The ``inferenceNumber`` of the next ``count`` status reports the GM receives."""
    numbers = []
    for _ in range(count):
        _, _, content = gm.next_frame(lambda h, c: h.get("operation") == "status")
        numbers.append(content["output"]["ownerInfo"]["inferenceNumber"])
    return numbers


@pytest.fixture
def gm() -> Iterator[FakeGM]:
    fake = FakeGM(features=[])
    yield fake
    fake.close()


def send_service(gm: FakeGM) -> None:
    gm.send(make_frame(NS, JI, "helmet", "insert", ji_service()))


def test_reports_before_their_job_reach_the_gm_in_order_once_it_arrives(tmp_path, gm):
    lc = RunningLC(tmp_path, gm)
    try:
        lc.wait_connected()
        with structlog.testing.capture_logs() as logs:
            assert [post(lc, report(n))[0] for n in (1, 2, 3)] == [200, 200, 200]
        assert lc.lc.store.pending_usage()[0] == 3 and lc.lc.store.pending_reports() == 0
        assert sum(e["event"].startswith("kept a worker report") for e in logs) == 3
        send_service(gm)
        assert statuses_upstream(gm, 3) == [1, 2, 3]
        assert post(lc, report(4))[0] == 200  # now held: relayed at once, after the kept ones
        assert statuses_upstream(gm, 1) == [4]
        assert lc.lc.store.pending_usage() == (0, 0)
    finally:
        lc.close()


def test_kept_reports_survive_a_restart_of_the_lc(tmp_path, gm):
    lc = RunningLC(tmp_path, gm)
    lc.wait_connected()
    assert post(lc, report(7))[0] == 200
    assert lc.close() == 0
    again = RunningLC(tmp_path, gm)
    try:
        again.wait_connected()
        send_service(gm)
        assert statuses_upstream(gm, 1) == [7]
    finally:
        again.close()


def test_a_job_taken_off_the_node_keeps_its_later_reports_until_it_is_back(tmp_path, gm):
    lc = RunningLC(tmp_path, gm)
    try:
        lc.wait_connected()
        send_service(gm)
        wait_for("the service held", lambda: lc.lc.store.get_resource(JI, NS, "helmet"))
        gm.send(make_frame(NS, JI, "helmet", "delete", ji_service()))
        wait_for("the service gone", lambda: lc.lc.store.get_resource(JI, NS, "helmet") is None)
        assert post(lc, report(5))[0] == 200
        assert lc.lc.store.pending_usage()[0] == 1
        send_service(gm)
        assert statuses_upstream(gm, 1) == [5]
    finally:
        lc.close()


def test_past_the_bound_of_kept_reports_the_answer_is_503_with_retry_after(tmp_path, gm):
    lc = RunningLC(tmp_path, gm)
    try:
        lc.wait_connected()
        lc.lc.reports.pending = PendingLimits(max_reports=2, retry_after=4)
        assert [post(lc, report(n))[0] for n in (1, 2)] == [200, 200]
        with structlog.testing.capture_logs() as logs:
            status, headers, body = post(lc, report(3))
        assert status == 503 and headers["Retry-After"] == "4" and body["Status"] == 503
        assert "kept for jobs this node does not hold yet" in body["Message"]
        assert any(e["event"].startswith("refused a worker report") for e in logs)
        lc.lc.reports.pending = PendingLimits(max_bytes=100)  # one report is bigger than that
        assert post(lc, report(4, owner="another"))[0] == 503
        send_service(gm)
        assert statuses_upstream(gm, 2) == [1, 2]  # the kept ones, and nothing refused
    finally:
        lc.close()


def test_a_full_outbox_answers_503_until_it_drains(tmp_path):
    gm_down = "127.0.0.1:9"  # nothing listens: the outbox only grows
    lc = RunningLC(tmp_path, None, gm_address=gm_down)
    try:
        lc.lc.downstream.apply(Change("insert", JI, NS, "helmet", ji_service()))
        lc.lc.reports.outbox = OutboxLimits(max_reports=2, retry_after=6)
        assert [post(lc, report(n))[0] for n in (1, 2)] == [200, 200]
        status, headers, body = post(lc, report(3))
        assert status == 503 and headers["Retry-After"] == "6" and "outbox" in body["Message"]
        assert lc.lc.store.pending_reports() == 2
        for entry in list(lc.lc.store.iter_reports()):
            lc.lc.store.remove_report(entry.seq)  # as acks from the GM would
        assert post(lc, report(3))[0] == 200
    finally:
        lc.close()


# -- WorkerReports on its own: age bound with a clock ---------------------------------------------------------------
def message(number: int, owner_kind: str = JI) -> WorkerMessage:
    return WorkerMessage(name="w", namespace=NS, owner_name="helmet", owner_kind=owner_kind, kind="inference",
                         owner_info={"inferenceNumber": number})


def test_a_kept_report_older_than_the_age_bound_is_dropped_with_a_log(tmp_path):
    store = Store(str(tmp_path / "lc.db"))
    now = [1000.0]
    manager = RecordingManager(JI)
    reports = WorkerReports(store, {JI: manager}, PendingLimits(max_age=60), clock=lambda: now[0])
    assert reports.deliver(message(1)) == KEPT
    now[0] += 30
    assert reports.deliver(message(2)) == KEPT
    now[0] += 31  # the first is 61 s old, the second 31 s
    with structlog.testing.capture_logs() as logs:
        reports.arrived(JI, NS, "helmet")
    assert [m.owner_info["inferenceNumber"] for m in manager.messages] == [2]
    dropped = [e for e in logs if e["event"].startswith("dropped worker reports kept for jobs that did not arrive")]
    assert len(dropped) == 1 and dropped[0]["examples"] == [f"{JI} {NS}/helmet"]
    assert (dropped[0]["reports"], dropped[0]["oldest_seconds"]) == (1, 61)
    store.close()


def test_the_sdks_default_kind_is_kept_and_given_to_the_job_of_its_name(tmp_path):
    store = Store(str(tmp_path / "lc.db"))
    manager = RecordingManager(JI)
    reports = WorkerReports(store, {JI: manager})
    assert reports.deliver(message(1, owner_kind="default")) == KEPT
    assert reports.deliver(message(2, owner_kind="nosuchkind")) == "unhandled"  # as Go's LC
    reports.arrived(JI, NS, "helmet")
    assert [(m.owner_kind, m.owner_info["inferenceNumber"]) for m in manager.messages] == [(JI, 1)]
    store.close()


def test_refused_is_raised_not_kept_past_the_count_bound(tmp_path):
    store = Store(str(tmp_path / "lc.db"))
    reports = WorkerReports(store, {JI: RecordingManager(JI)}, PendingLimits(max_reports=1))
    reports.deliver(message(1))
    with pytest.raises(ReportRefused):
        reports.deliver(message(2))
    assert store.pending_usage()[0] == 1
    store.close()


class Relayer(RecordingManager):
    """A manager that relays each worker report to the outbox in the calling thread, as the real ones do."""

    def __init__(self, store: Store) -> None:
        super().__init__(JI)
        self.store = store

    def add_worker_message(self, message: WorkerMessage) -> None:
        super().add_worker_message(message)
        self.store.add_report(message.namespace, JI, message.owner_name, json.dumps(message.owner_info).encode())


class Killed(BaseException):
    """The LC killed at this point (nothing after it runs, no handler catches it)."""


def test_a_kill_right_after_a_kept_report_is_handed_over_never_sends_it_twice(tmp_path, monkeypatch):
    """Hand-over to the outbox and removal from ``lc_pending`` are one transaction: killed between them, the LC
    finds after its restart either the report in the outbox or still kept, never both."""
    path = str(tmp_path / "lc.db")
    store = Store(path)
    reports = WorkerReports(store, {JI: Relayer(store)})
    assert reports.deliver(message(1)) == KEPT

    def killed(seqs: list[int]) -> None:
        raise Killed

    monkeypatch.setattr(store, "remove_pending", killed)
    with pytest.raises(Killed):
        reports.arrived(JI, NS, "helmet")
    store.close()

    restarted = Store(path)
    reports = WorkerReports(restarted, {JI: Relayer(restarted)})
    reports.arrived(JI, NS, "helmet")  # the job is stored: resumed at start
    assert [e.content for e in restarted.iter_reports()] == [json.dumps({"inferenceNumber": 1}).encode()]
    assert restarted.pending_usage() == (0, 0)
    restarted.close()


def test_reports_kept_for_a_job_taken_off_the_node_before_it_arrived_reach_the_gm(tmp_path, gm):
    """Go's GM can take a job off a node it never sent it to (its insert was lost, or the stage it was sent for
    ended first): the train report kept for it reaches the GM then, against the copy the ``delete`` carries."""
    lc = RunningLC(tmp_path, gm)
    try:
        lc.wait_connected()
        assert post(lc, report(1))[0] == 200
        assert lc.lc.store.pending_usage()[0] == 1
        gm.send(make_frame(NS, JI, "helmet", "delete", ji_service()))
        assert statuses_upstream(gm, 1) == [1]
        wait_for("the kept report handed over", lambda: lc.lc.store.pending_usage(), check=lambda u: u == (0, 0))
        # the delete itself is applied after the hand-over, on the downstream worker
        wait_for("the job taken off the node", lambda: lc.lc.store.get_resource(JI, NS, "helmet") is None)
    finally:
        lc.close()


def test_reports_kept_for_a_job_deleted_for_good_never_reach_a_job_recreated_under_its_name(tmp_path, gm):
    lc = RunningLC(tmp_path, gm)
    try:
        lc.wait_connected()
        assert post(lc, report(1))[0] == 200
        deleted = ji_service()
        deleted["metadata"]["deletionTimestamp"] = "2026-11-28T10:00:00Z"
        with structlog.testing.capture_logs() as logs:
            gm.send(make_frame(NS, JI, "helmet", "delete", deleted))
            wait_for("the kept report dropped", lambda: lc.lc.store.pending_usage(), check=lambda u: u == (0, 0))
        assert any(e["event"] == "dropped the worker reports kept for a job deleted for good" for e in logs)
        recreated = ji_service()
        recreated["metadata"]["uid"] = "u-ji-2"
        gm.send(make_frame(NS, JI, "helmet", "insert", recreated))
        wait_for("the new service held", lambda: lc.lc.store.get_resource(JI, NS, "helmet"))
        assert post(lc, report(2))[0] == 200
        assert statuses_upstream(gm, 1) == [2]  # the first status the GM gets: the old job's report never came
    finally:
        lc.close()
