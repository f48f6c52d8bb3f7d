"""Issue 38 item 2: the bounds of the worker reports an LC keeps for jobs it does not hold yet never let one client
make another worker's report be lost. Reports for jobs that do not exist fill no node-wide bound against the others:
room is made from the reports of the client that keeps the most for jobs the GM never sent, its oldest job first;
a job's and a source's own bounds refuse only that job's or source's reports; jobs the GM never sent expire minutes
into a connection to the GM (counted, one log line), jobs it sent before after an hour."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
import structlog.testing
from testkit.lc import RecordingManager

from localcontroller.delivery import PendingLimits, WorkerReports
from localcontroller.server import DELIVERED, KEPT, ReportRefused
from localcontroller.store import Store
from localcontroller.worker import WorkerMessage

NS = "default"
JI = "jointinferenceservice"
REAL = "10.0.0.7"  # the real worker's address
FLOODER = "10.0.0.66"


def report(owner: str, worker: str = "edgeworker-abcde", number: int = 0) -> WorkerMessage:
    return WorkerMessage(name=worker, namespace=NS, owner_name=owner, owner_kind=JI, kind="inference",
                         owner_info={"inferenceNumber": number})


@dataclass
class Node:
    store: Store
    manager: RecordingManager
    reports: WorkerReports
    now: list[float]
    dropped: Counter[str] = field(default_factory=Counter)

    def flood(self, count: int, client: str = FLOODER, first: int = 0) -> None:
        """``count`` tiny reports for jobs that do not exist, each under a worker name of its own."""
        for i in range(first, first + count):
            assert self.reports.deliver(report(f"nosuchjob-{i}", worker=f"w-{i}"), client) == KEPT

    def kept_owners(self) -> set[str]:
        return {k.name for k in self.store.kept_reports()}


@pytest.fixture
def make(tmp_path) -> Iterator[Callable[[PendingLimits], Node]]:
    """``make(limits)``: the delivery of an LC (its database in ``tmp_path``: a second one is that LC restarted)."""
    stores: list[Store] = []

    def node(limits: PendingLimits) -> Node:
        if stores:
            stores[-1].close()
        store = Store(str(tmp_path / "lc.db"))
        stores.append(store)
        manager = RecordingManager(JI)
        now = [1000.0]
        dropped: Counter[str] = Counter()
        reports = WorkerReports(store, {JI: manager}, limits, clock=lambda: now[0],
                                dropped=lambda reason, count: dropped.update({reason: count}))
        return Node(store, manager, reports, now, dropped)

    yield node
    stores[-1].close()


@pytest.fixture
def node(make: Callable[[PendingLimits], Node]) -> Node:
    return make(PendingLimits(max_reports=40))


def test_a_flood_from_one_client_neither_refuses_nor_pushes_out_another_clients_report(node):
    node.flood(40)  # the node-wide bound
    with structlog.testing.capture_logs() as logs:
        assert node.reports.deliver(report("helmet", number=1), REAL) == KEPT  # was 503 for an hour
    evicted = [e for e in logs if e["event"].startswith("dropped the worker reports kept for jobs the GM has not")]
    assert len(evicted) == 1 and evicted[0]["reports"] == 1 and evicted[0]["examples"] == [f"{JI} {NS}/nosuchjob-0"]
    node.flood(200, first=40)  # it goes on: it pushes out its own reports only
    assert "helmet" in node.kept_owners() and len(node.kept_owners()) == 40
    assert node.dropped == {"evicted": 201}
    node.reports.arrived(JI, NS, "helmet")
    assert [(m.owner_name, m.owner_info["inferenceNumber"]) for m in node.manager.messages] == [("helmet", 1)]


def test_a_flood_from_the_workers_own_address_takes_its_oldest_jobs_first(node):
    """Host-network workers share the node's address: a flood from it pushes out reports oldest job first, so a
    report that came after the flood stays until as many reports again have come."""
    node.flood(40, client=REAL)
    assert node.reports.deliver(report("helmet"), REAL) == KEPT
    node.flood(38, client=REAL, first=40)
    assert "helmet" in node.kept_owners()
    node.flood(2, client=REAL, first=78)  # 40 reports after it: it is the oldest left
    assert "helmet" not in node.kept_owners()


def test_a_job_and_a_source_are_refused_past_their_own_bounds_only(make):
    node = make(PendingLimits(max_reports_per_owner=3, max_reports_per_source=5))
    for _ in range(3):
        assert node.reports.deliver(report("helmet"), REAL) == KEPT
    with pytest.raises(ReportRefused, match="3 reports .* are kept for job default/helmet"):
        node.reports.deliver(report("helmet", worker="another-replica"), REAL)
    node.flood(5, client=FLOODER)  # one worker name each: five sources
    for i in range(5):
        node.reports.deliver(report(f"made-up-{i}", worker="w-x"), FLOODER)
    with pytest.raises(ReportRefused, match=f"5 reports .* are kept from worker w-x at {FLOODER}"):
        node.reports.deliver(report("made-up-5", worker="w-x"), FLOODER)
    assert node.reports.deliver(report("fire"), REAL) == KEPT  # everyone else: as before
    assert node.dropped == {}


def test_reports_for_jobs_the_gm_sent_before_are_never_pushed_out_and_make_room(node):
    """A job taken off this node (sent before, coming back) keeps its reports against any flood; its next report
    makes room among the reports for jobs the GM never sent."""
    for name in ("left-1", "left-2"):
        node.reports.arrived(JI, NS, name)
        node.reports.departed(JI, NS, name)
    for i in range(39):
        assert node.reports.deliver(report(f"left-{1 + i % 2}", worker=f"r-{i}"), REAL) == KEPT
    node.flood(1)
    with pytest.raises(ReportRefused, match="kept for jobs this node does not hold yet"):
        node.reports.deliver(report("nosuchjob-0", worker="w-1"), FLOODER)  # only its own job's could make room
    assert node.reports.deliver(report("left-1", worker="r-39"), REAL) == KEPT
    assert node.kept_owners() == {"left-1", "left-2"} and node.dropped == {"evicted": 1}


def test_jobs_the_gm_never_sent_expire_minutes_into_a_connection_counted_and_logged_once(node):
    node.reports.arrived(JI, NS, "left")
    node.reports.departed(JI, NS, "left")
    node.flood(3)
    assert node.reports.deliver(report("left"), REAL) == KEPT
    node.now[0] += 3000  # not connected to the GM: it could not have sent them; they wait
    node.reports.expire()
    assert len(node.kept_owners()) == 4
    node.reports.gm_connection(True)
    node.now[0] += 301  # connected five minutes: the GM sends a node its jobs when it connects
    with structlog.testing.capture_logs() as logs:
        node.reports.expire()
    assert node.kept_owners() == {"left"}  # sent before: an hour
    lines = [e for e in logs if e["event"].startswith("dropped worker reports kept for jobs that did not arrive")]
    assert len(lines) == 1 and (lines[0]["reports"], lines[0]["jobs"], lines[0]["unsent"]) == (3, 3, 3)
    assert node.dropped == {"expired": 3}
    node.now[0] += 300  # 3601 s since it arrived
    node.reports.expire()
    assert node.kept_owners() == set() and node.dropped == {"expired": 4}


def test_a_reconnection_starts_the_unsent_clock_again(node):
    node.reports.gm_connection(True)
    node.flood(1)
    node.now[0] += 200
    node.reports.gm_connection(False)
    node.reports.gm_connection(True)
    node.now[0] += 200  # 400 s kept, 200 s of this connection
    node.reports.expire()
    assert node.kept_owners() == {"nosuchjob-0"}


def test_a_restarted_lc_still_knows_which_kept_reports_are_for_jobs_it_held(make):
    first = make(PendingLimits(max_reports=3))
    first.reports.arrived(JI, NS, "left")
    first.reports.departed(JI, NS, "left")
    assert first.reports.deliver(report("left"), REAL) == KEPT
    again = make(PendingLimits(max_reports=3))  # the same database
    again.flood(2)
    assert again.reports.deliver(report("left", worker="r-2"), REAL) == KEPT  # sent: room made from the flood
    assert again.dropped == {"evicted": 1}
    assert [k.sent for k in again.store.kept_reports() if k.name == "left"] == [True, True]


def test_a_held_jobs_report_is_never_refused_for_kept_reports(node):
    node.flood(40)
    node.reports.arrived(JI, NS, "helmet")
    assert node.reports.deliver(report("helmet"), REAL) == DELIVERED
