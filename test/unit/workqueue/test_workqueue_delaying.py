"""Port of client-go util/workqueue/delaying_queue_test.go and rate_limiting_queue_test.go."""

from __future__ import annotations

import threading

import pytest
from testkit import wait_for

from workqueue import (
    DelayingQueue,
    FakeClock,
    ItemExponentialFailureRateLimiter,
    RateLimitingQueue,
)
from workqueue.rate_limiters import MaxOfRateLimiter

TIMEOUT = 5.0


def wait_for_added(q: DelayingQueue, depth: int) -> None:
    wait_for("the condition", lambda: q.len() == depth, timeout=TIMEOUT, interval=0.001)


def wait_for_waiting_thread(clock: FakeClock) -> None:
    """Wait until the waiting thread sleeps, i.e. has handled everything due."""
    wait_for("the waiting thread to sleep", clock.has_waiters, timeout=TIMEOUT, interval=0.001)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1000.0)


@pytest.fixture
def delaying(clock: FakeClock):
    q = DelayingQueue(clock=clock)
    yield q
    q.shut_down()


def test_simple_queue(delaying: DelayingQueue, clock: FakeClock) -> None:
    q = delaying
    q.add_after("foo", 0.05)
    wait_for_waiting_thread(clock)
    assert q.len() == 0
    clock.step(0.06)
    wait_for_added(q, 1)
    item, _ = q.get()
    q.done(item)
    # step past the next heartbeat: nothing comes back
    clock.step(10)
    wait_for_waiting_thread(clock)
    assert q.len() == 0


def test_not_added_before_ready(delaying: DelayingQueue, clock: FakeClock) -> None:
    q = delaying
    q.add_after("foo", 1.0)
    wait_for_waiting_thread(clock)
    clock.step(0.5)
    wait_for_waiting_thread(clock)
    assert q.len() == 0
    clock.step(0.5)
    wait_for_added(q, 1)


def test_deduping(delaying: DelayingQueue, clock: FakeClock) -> None:
    q = delaying
    q.add_after("foo", 0.05)
    q.add_after("foo", 0.07)  # a later add_after never postpones
    wait_for_waiting_thread(clock)
    assert q.len() == 0
    clock.step(0.06)
    wait_for_added(q, 1)
    item, _ = q.get()
    q.done(item)
    clock.step(0.02)
    wait_for_waiting_thread(clock)
    assert q.len() == 0

    # this time the earlier one overrides
    q.add_after("foo", 0.05)
    q.add_after("foo", 0.03)
    wait_for_waiting_thread(clock)
    assert q.len() == 0
    clock.step(0.04)
    wait_for_added(q, 1)
    item, _ = q.get()
    q.done(item)
    clock.step(0.02)
    wait_for_waiting_thread(clock)
    assert q.len() == 0


def test_add_two_fire_early(delaying: DelayingQueue, clock: FakeClock) -> None:
    q = delaying
    q.add_after("foo", 1.0)
    q.add_after("bar", 0.05)
    wait_for_waiting_thread(clock)
    assert q.len() == 0
    clock.step(0.06)
    wait_for_added(q, 1)
    assert q.get()[0] == "bar"
    q.add_after("baz", 2.0)
    clock.step(1.0)
    wait_for_added(q, 1)
    assert q.get()[0] == "foo"
    clock.step(2.0)
    wait_for_added(q, 1)
    assert q.get()[0] == "baz"


def test_copy_shifting(delaying: DelayingQueue, clock: FakeClock) -> None:
    q = delaying
    q.add_after("foo", 1.0)
    q.add_after("bar", 0.5)
    q.add_after("baz", 0.25)
    wait_for_waiting_thread(clock)
    assert q.len() == 0
    clock.step(2.0)
    wait_for_added(q, 3)
    assert [q.get()[0] for _ in range(3)] == ["baz", "bar", "foo"]


def test_many_items_fire_in_ready_order(delaying: DelayingQueue, clock: FakeClock) -> None:
    q = delaying
    delays = [((i * 37) % 100 + 1) / 10 for i in range(100)]
    for i, d in enumerate(delays):
        q.add_after(i, d)
    clock.step(11)
    wait_for_added(q, 100)
    got = [q.get()[0] for _ in range(100)]
    assert got == sorted(range(100), key=lambda i: delays[i])


def test_add_after_non_positive_adds_now(delaying: DelayingQueue) -> None:
    q = delaying
    q.add_after("a", 0)
    q.add_after("b", -1)
    assert q.len() == 2
    assert q._waiting_thread is None  # no thread needed for immediate adds


def test_fired_item_already_queued_is_deduped(delaying: DelayingQueue, clock: FakeClock) -> None:
    q = delaying
    q.add("foo")
    q.add_after("foo", 0.1)
    clock.step(0.2)
    wait_for_waiting_thread(clock)
    assert q.len() == 1


def test_shut_down_drops_waiting_items_and_stops_thread(clock: FakeClock) -> None:
    q = DelayingQueue(clock=clock)
    q.add_after("foo", 1.0)
    thread = q._waiting_thread
    assert thread is not None and thread.is_alive()
    q.shut_down()
    assert not thread.is_alive()
    q.add_after("bar", 0.5)  # no-op after shutdown
    q.add_after("baz", 0)
    clock.step(5)
    assert q.get() == (None, True)


def test_shut_down_with_drain_stops_thread(clock: FakeClock) -> None:
    q = DelayingQueue(clock=clock)
    q.add_after("foo", 1.0)
    thread = q._waiting_thread
    assert thread is not None
    q.shut_down_with_drain()
    assert not thread.is_alive()
    assert q.get() == (None, True)


def test_real_clock_add_after_fires() -> None:
    q = DelayingQueue()
    try:
        q.add_after("x", 0.01)
        result: list[object] = []
        t = threading.Thread(target=lambda: result.append(q.get()), daemon=True)
        t.start()
        t.join(TIMEOUT)
        assert result == [("x", False)]
    finally:
        q.shut_down()


def _ready_in(q: DelayingQueue, clock: FakeClock, item: object) -> float:
    with q._waiting_cond:
        return q._waiting_entries[item][0] - clock.now()


def test_rate_limiting_queue(clock: FakeClock) -> None:
    limiter = ItemExponentialFailureRateLimiter(0.001, 1.0)
    q = RateLimitingQueue(limiter, clock=clock)
    try:
        q.add_rate_limited("one")
        assert _ready_in(q, clock, "one") == pytest.approx(0.001)
        # an item already waiting keeps its earlier ready time
        q.add_rate_limited("one")
        assert _ready_in(q, clock, "one") == pytest.approx(0.001)
        assert q.num_requeues("one") == 2

        q.add_rate_limited("two")
        assert _ready_in(q, clock, "two") == pytest.approx(0.001)
        q.forget("one")
        assert q.num_requeues("one") == 0
        clock.step(0.0015)
        wait_for_added(q, 2)
        assert {q.get()[0], q.get()[0]} == {"one", "two"}
        q.add_rate_limited("one")
        assert _ready_in(q, clock, "one") == pytest.approx(0.001)
        q.add_rate_limited("two")
        assert _ready_in(q, clock, "two") == pytest.approx(0.002)
    finally:
        q.shut_down()


def test_rate_limiting_queue_default_limiter() -> None:
    q = RateLimitingQueue()
    try:
        assert isinstance(q.rate_limiter, MaxOfRateLimiter)
        q.add_rate_limited("a")
        assert q.num_requeues("a") == 1
        q.forget("a")
        assert q.num_requeues("a") == 0
    finally:
        q.shut_down()


def test_canonical_worker_loop(clock: FakeClock) -> None:
    q = RateLimitingQueue(ItemExponentialFailureRateLimiter(0.01, 1.0), name="", clock=clock)
    attempts: list[int] = []
    q.add("key")
    for _ in range(3):
        key, quit_ = q.get()
        assert not quit_
        attempts.append(q.num_requeues(key))
        q.add_rate_limited(key)  # "sync failed"
        q.done(key)
        clock.step(1.0)
        wait_for_added(q, 1)
    key, _ = q.get()
    q.forget(key)
    q.done(key)
    assert attempts == [0, 1, 2]
    assert q.num_requeues("key") == 0
    q.shut_down()
