"""Leader election on a Lease with a fake clock: acquire, renew, takeover after expiry, release, conflicts."""

from __future__ import annotations

import re
import threading
from datetime import datetime, timezone

from lease_test_helpers import NAME, NS, FakeClock, lease

from apis import errors
from apis.fake import FakeClientset
from globalmanager.leaderelection import LeaderCallbacks, LeaderElector, format_micro_time

MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def elector(cs, identity, clock, **kw):
    callbacks = LeaderCallbacks(on_started_leading=lambda stop: None, on_stopped_leading=lambda: None)
    return LeaderElector(cs, NAME, NS, callbacks, identity=identity, clock=clock, **kw)


def test_micro_time_format():
    assert format_micro_time(datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)) == "2026-01-02T03:04:05.000000Z"


def test_acquire_absent_lease_then_renew():
    cs, clock = FakeClientset(), FakeClock()
    a = elector(cs, "a", clock)
    assert a.try_acquire_or_renew() is True and a.is_leader()
    spec = lease(cs)
    assert spec["holderIdentity"] == "a" and spec["leaseDurationSeconds"] == 15 and spec["leaseTransitions"] == 0
    assert MICRO.match(spec["acquireTime"]) and spec["acquireTime"] == spec["renewTime"]
    clock.advance(2)
    assert a.try_acquire_or_renew() is True
    renewed = lease(cs)
    assert renewed["acquireTime"] == spec["acquireTime"] and renewed["renewTime"] > spec["renewTime"]
    assert renewed["leaseTransitions"] == 0


def test_standby_waits_for_expiry_by_its_own_clock_then_takes_over():
    cs = FakeClientset()
    clock_a, clock_b = FakeClock(), FakeClock()
    a, b = elector(cs, "a", clock_a), elector(cs, "b", clock_b)
    assert a.try_acquire_or_renew()
    assert b.try_acquire_or_renew() is False and b.get_leader() == "a"
    clock_b.advance(14.9)
    assert b.try_acquire_or_renew() is False  # not expired yet by b's clock
    clock_b.advance(0.2)
    assert b.try_acquire_or_renew() is True and b.is_leader()
    spec = lease(cs)
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    # the old leader cannot renew any more
    assert a.try_acquire_or_renew() is False and not a.is_leader() and a.get_leader() == "b"


def test_renewal_resets_the_standby_expiry():
    cs = FakeClientset()
    clock_a, clock_b = FakeClock(), FakeClock()
    a, b = elector(cs, "a", clock_a), elector(cs, "b", clock_b)
    a.try_acquire_or_renew()
    b.try_acquire_or_renew()
    clock_b.advance(10)
    clock_a.advance(10)
    a.try_acquire_or_renew()  # renewTime changes: b observes a new record
    assert b.try_acquire_or_renew() is False
    clock_b.advance(10)
    assert b.try_acquire_or_renew() is False  # only 10 s since b saw the renewal


def test_release_hands_over_at_once():
    cs = FakeClientset()
    clock = FakeClock()
    a, b = elector(cs, "a", clock), elector(cs, "b", clock)
    a.try_acquire_or_renew()
    b.try_acquire_or_renew()
    assert a.release() is True
    spec = lease(cs)
    assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1
    assert b.try_acquire_or_renew() is True and lease(cs)["leaseTransitions"] == 1


def test_conflict_means_try_again_next_period():
    cs, clock = FakeClientset(), FakeClock()
    a = elector(cs, "a", clock)
    a.try_acquire_or_renew()
    cs.prepend_reactor("update", "leases", lambda action: (True, None, errors.ConflictError("modified")))
    assert a.try_acquire_or_renew() is False


def test_run_leads_until_stopped_and_releases():
    cs = FakeClientset()
    started, stopped = threading.Event(), threading.Event()
    seen_stop: list[threading.Event] = []

    def lead(stop: threading.Event) -> None:
        seen_stop.append(stop)
        started.set()
        stop.wait(10)

    callbacks = LeaderCallbacks(on_started_leading=lead, on_stopped_leading=stopped.set)
    a = LeaderElector(cs, NAME, NS, callbacks, identity="a", lease_duration=1.0, renew_deadline=0.6, retry_period=0.1)
    stop = threading.Event()
    t = threading.Thread(target=a.run, args=(stop,))
    t.start()
    try:
        assert started.wait(5)
        assert a.leading and lease(cs)["holderIdentity"] == "a"
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive() and stopped.is_set() and seen_stop[0].is_set()
    assert lease(cs)["holderIdentity"] == ""


def test_run_gives_up_when_renewal_fails_past_the_deadline():
    cs = FakeClientset()
    lost = threading.Event()
    leading = threading.Event()
    callbacks = LeaderCallbacks(on_started_leading=lambda s: leading.set(), on_stopped_leading=lost.set)
    a = LeaderElector(cs, NAME, NS, callbacks, identity="a", lease_duration=1.0, renew_deadline=0.6, retry_period=0.1)
    stop = threading.Event()
    t = threading.Thread(target=a.run, args=(stop,))
    t.start()
    try:
        assert leading.wait(5)
        cs.prepend_reactor("get", "leases", lambda action: (True, None, errors.InternalError("down")))
        assert lost.wait(5)
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive()
