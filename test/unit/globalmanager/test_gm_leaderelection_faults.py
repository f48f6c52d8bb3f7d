"""Leader election when the API server misbehaves: refused connections, hung requests, renewals that end past the
deadline, a stop that arrives during the acquire, and a leader that keeps the lease while its work drains."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from lease_test_helpers import NAME, NS, FakeClock, lease
from testkit import wait_for

from apis import errors
from apis.clientset import Clientset
from apis.fake import FakeClientset
from apis.http_transport import ApiConnectionRefusedError, ApiConnectionTimeoutError
from globalmanager.leaderelection import LeaderCallbacks, LeaderElector


def refused(action):
    return True, None, ApiConnectionRefusedError("GET", "http://127.0.0.1:1/x", "connection refused")


def test_connection_errors_are_a_failed_round_not_an_exception():
    cs, clock = FakeClientset(), FakeClock()
    a = LeaderElector(cs, NAME, NS, LeaderCallbacks(lambda s: None, lambda: None), identity="a", clock=clock)
    cs.prepend_reactor("get", "leases", refused)
    assert a.try_acquire_or_renew() is False
    cs.clear_actions()
    timeout = ApiConnectionTimeoutError("PUT", "http://x", "read timeout")
    cs.prepend_reactor("get", "leases", lambda action: (True, None, timeout))
    assert a.try_acquire_or_renew() is False


def test_release_survives_a_lost_connection():
    cs, clock = FakeClientset(), FakeClock()
    a = LeaderElector(cs, NAME, NS, LeaderCallbacks(lambda s: None, lambda: None), identity="a", clock=clock)
    assert a.try_acquire_or_renew() is True
    cs.prepend_reactor("get", "leases", refused)
    assert a.release() is False


def test_run_keeps_retrying_against_an_unreachable_api_server_until_stopped():
    cs = Clientset.from_url("http://127.0.0.1:1")
    a = LeaderElector(cs, NAME, NS, LeaderCallbacks(lambda s: None, lambda: None), identity="a",
                      lease_duration=1.0, renew_deadline=0.6, retry_period=0.05)
    stop = threading.Event()
    attempts = {"n": 0}
    original = a.try_acquire_or_renew

    def counting() -> bool:
        attempts["n"] += 1
        if attempts["n"] >= 3:
            stop.set()
        return original()

    a.try_acquire_or_renew = counting  # type: ignore[method-assign]
    try:
        a.run(stop)  # must return, not raise, once stopped
    finally:
        cs.close()
    assert attempts["n"] >= 3 and not a.leading


@pytest.fixture
def hung_server() -> Iterator[str]:
    """A TCP server that accepts connections and never answers."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    conns: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        srv.settimeout(0.1)
        while not done.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            conns.append(conn)

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    done.set()
    t.join(5)
    for conn in conns:
        conn.close()
    srv.close()


def test_a_hung_request_is_cut_at_the_renew_deadline(hung_server):
    cs = Clientset.from_url(hung_server)  # default request timeout: 60 s
    a = LeaderElector(cs, NAME, NS, LeaderCallbacks(lambda s: None, lambda: None), identity="a",
                      lease_duration=1.0, renew_deadline=0.6, retry_period=0.2)
    result: list[bool] = []
    t = threading.Thread(target=lambda: result.append(a.try_acquire_or_renew()), daemon=True)
    t.start()
    t.join(10)  # far above the 0.6 s budget, far below the clientset's 60 s
    cs.close()
    assert not t.is_alive(), "the lease request was not bounded by the renew deadline"
    assert result == [False]


def test_the_lease_client_timeout_never_exceeds_the_remaining_renew_deadline():
    cs = Clientset.from_url("http://127.0.0.1:1")
    clock = FakeClock()
    a = LeaderElector(cs, NAME, NS, LeaderCallbacks(lambda s: None, lambda: None), identity="a",
                      lease_duration=15, renew_deadline=10, retry_period=2, clock=clock)
    assert a.request_timeout(deadline=None) == 10  # an attempt may take the renew deadline, not just a retry period
    assert a.request_timeout(deadline=clock.monotonic() + 0.5) <= 0.5
    assert a.request_timeout(deadline=clock.monotonic() + 100) == 10
    cs.close()


def test_a_renewal_that_ends_after_the_deadline_counts_as_lost():
    cs, clock = FakeClientset(), FakeClock()
    leading, lost = threading.Event(), threading.Event()
    a = LeaderElector(cs, NAME, NS, LeaderCallbacks(lambda s: leading.set(), lost.set), identity="a",
                      lease_duration=15, renew_deadline=10, retry_period=2, clock=clock)
    stop = threading.Event()
    t = threading.Thread(target=a.run, args=(stop,))
    t.start()
    try:
        assert leading.wait(5)

        def slow_get(action):  # the GET hangs past the renew deadline, then answers
            clock.advance(11)
            return False, None, None

        cs.prepend_reactor("get", "leases", slow_get)
        assert lost.wait(5), "a renewal that ended after the renew deadline kept the leadership"
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive() and not a.leading


def test_stop_during_a_successful_acquire_releases_the_lease():
    cs = FakeClientset()
    stop = threading.Event()
    started = threading.Event()

    def stop_while_creating(action):
        stop.set()  # SIGTERM arrives while the create is in flight
        return False, None, None

    cs.prepend_reactor("create", "leases", stop_while_creating)
    a = LeaderElector(cs, NAME, NS, LeaderCallbacks(lambda s: started.set(), lambda: None), identity="a",
                      lease_duration=1.0, renew_deadline=0.6, retry_period=0.1)
    a.run(stop)
    assert lease(cs)["holderIdentity"] == ""
    assert not started.is_set()


def test_the_leader_keeps_renewing_while_its_work_drains():
    cs = FakeClientset()
    leading, drained, release_drain = threading.Event(), threading.Event(), threading.Event()

    def lead(stop: threading.Event) -> None:
        leading.set()
        stop.wait(10)
        release_drain.wait(10)  # in-flight syncs finishing
        drained.set()

    a = LeaderElector(cs, NAME, NS, LeaderCallbacks(lead, lambda: None), identity="a",
                      lease_duration=1.0, renew_deadline=0.6, retry_period=0.05)
    stop = threading.Event()
    t = threading.Thread(target=a.run, args=(stop,))
    t.start()
    try:
        assert leading.wait(5)
        stop.set()
        renewed_at = lease(cs)["renewTime"]
        wait_for("the lease to be renewed while the leader drains",
                 lambda: (spec := lease(cs))["holderIdentity"] == "a" and spec["renewTime"] != renewed_at, timeout=5)
        assert not drained.is_set()
    finally:
        release_drain.set()
        stop.set()
        t.join(10)
    assert not t.is_alive() and drained.is_set()
    assert lease(cs)["holderIdentity"] == ""  # released once the work had stopped


def test_expiry_uses_the_lease_duration_written_in_the_lease():
    cs = FakeClientset()
    clock_a, clock_b = FakeClock(), FakeClock()
    cb = LeaderCallbacks(lambda s: None, lambda: None)
    a = LeaderElector(cs, NAME, NS, cb, identity="a", clock=clock_a, lease_duration=30, renew_deadline=20)
    b = LeaderElector(cs, NAME, NS, cb, identity="b", clock=clock_b, lease_duration=15, renew_deadline=10)
    assert a.try_acquire_or_renew()
    assert lease(cs)["leaseDurationSeconds"] == 30
    assert b.try_acquire_or_renew() is False
    clock_b.advance(15.5)  # expired by b's own duration, not by the lease's
    assert b.try_acquire_or_renew() is False
    clock_b.advance(15)
    assert b.try_acquire_or_renew() is True


def test_lease_round_health_for_readiness():
    cs, clock = FakeClientset(), FakeClock()
    cb = LeaderCallbacks(lambda s: None, lambda: None)
    a = LeaderElector(cs, NAME, NS, cb, identity="a", clock=clock)
    b = LeaderElector(cs, NAME, NS, cb, identity="b", clock=clock)
    assert b.lease_rounds_healthy() is False  # no round has succeeded yet
    a.try_acquire_or_renew()
    assert b.try_acquire_or_renew() is False
    assert b.lease_rounds_healthy() is True  # the API answered: standing by is a healthy round
    cs.prepend_reactor("get", "leases", refused)
    clock.advance(10)
    assert b.try_acquire_or_renew() is False
    assert b.lease_rounds_healthy() is True  # within leaseDuration of the last good round
    clock.advance(6)
    assert b.try_acquire_or_renew() is False
    assert b.lease_rounds_healthy() is False


def test_conflicting_api_errors_still_count_as_an_answer():
    cs, clock = FakeClientset(), FakeClock()
    a = LeaderElector(cs, NAME, NS, LeaderCallbacks(lambda s: None, lambda: None), identity="a", clock=clock)
    cs.prepend_reactor("create", "leases", lambda action: (True, None, errors.AlreadyExistsError("raced")))
    assert a.try_acquire_or_renew() is False
    assert a.lease_rounds_healthy() is True
