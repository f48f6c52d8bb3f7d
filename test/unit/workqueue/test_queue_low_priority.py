"""``Queue.add_low_priority``: items added with it are handed out only when no item added with ``add`` waits; a later
``add`` raises a waiting low item to normal priority; a pending item keeps its priority; the queue stays stingy (an
item re-added while processed is queued again at ``done``, at the priority of the re-add); ``len()`` counts both
priorities; after shutdown both drain, then ``get`` returns ``(None, True)``."""

from __future__ import annotations

import queue as stdlib_queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from testkit import wait_for

from workqueue import DelayingQueue, FakeClock, ItemExponentialFailureRateLimiter, Queue, RateLimitingQueue

TIMEOUT = 5.0
NOT_HANDED_OUT = 0.2  # how long a blocked get is given to (wrongly) return; no assertion depends on its length


@pytest.fixture(params=[Queue, DelayingQueue, RateLimitingQueue], ids=["Queue", "DelayingQueue", "RateLimitingQueue"])
def q(request: pytest.FixtureRequest) -> Iterator[Queue]:
    cls = request.param
    made: Queue = cls(ItemExponentialFailureRateLimiter(0.001, 0.01)) if cls is RateLimitingQueue else cls()
    yield made
    made.shut_down()


def take(q: Queue, n: int) -> list[Any]:
    """Get ``n`` items and mark each done at once; the items, in the order handed out."""
    out = []
    for _ in range(n):
        item, shutdown = q.get()
        assert not shutdown
        out.append(item)
        q.done(item)
    return out


class BlockedGetter:
    """A ``get`` on another thread, whose result the test reads when it is expected (or checks has not come)."""

    def __init__(self, q: Queue) -> None:
        self.results: stdlib_queue.Queue[tuple[Any, bool]] = stdlib_queue.Queue()
        self.thread = threading.Thread(target=lambda: self.results.put(q.get()), daemon=True)
        self.thread.start()

    def result(self) -> tuple[Any, bool]:
        return self.results.get(timeout=TIMEOUT)

    def nothing_yet(self) -> bool:
        try:
            got = self.results.get(timeout=NOT_HANDED_OUT)
        except stdlib_queue.Empty:
            return True
        pytest.fail(f"get returned {got!r} while it should still block")

    def join(self) -> None:
        self.thread.join(TIMEOUT)
        assert not self.thread.is_alive()


# -- ordering ---------------------------------------------------------------------------------------------------------
def test_low_items_are_handed_out_fifo_among_themselves(q: Queue) -> None:
    for item in ("a", "b", "c"):
        q.add_low_priority(item)
    assert q.len() == 3 and len(q) == 3
    assert take(q, 3) == ["a", "b", "c"]
    assert q.len() == 0


def test_low_items_wait_behind_every_normal_item_even_ones_added_later(q: Queue) -> None:
    q.add_low_priority("low1")
    q.add("n1")
    q.add_low_priority("low2")
    q.add("n2")
    assert q.len() == 4
    assert take(q, 2) == ["n1", "n2"]
    assert q.len() == 2
    q.add("n3")  # a normal item that arrives while low ones wait still goes first
    assert take(q, 3) == ["n3", "low1", "low2"]
    assert q.len() == 0


def test_an_add_raises_a_waiting_low_item_to_the_end_of_the_normal_items(q: Queue) -> None:
    q.add("n1")
    q.add_low_priority("x")
    q.add_low_priority("y")
    q.add("n2")
    q.add("x")  # promoted: after n2, before y
    assert q.len() == 4  # counted once, at its new priority
    assert take(q, 4) == ["n1", "n2", "x", "y"]
    assert q.len() == 0


def test_a_pending_item_keeps_its_priority(q: Queue) -> None:
    q.add("x")
    q.add_low_priority("low")
    q.add_low_priority("x")  # already pending at normal priority: nothing changes
    q.add_low_priority("low")  # already pending at low priority: not queued twice
    assert q.len() == 2
    q.add("n")
    assert take(q, 3) == ["x", "n", "low"]
    assert q.len() == 0


def test_a_promoted_item_is_handed_out_once(q: Queue) -> None:
    q.add_low_priority("x")
    q.add("x")
    q.add_low_priority("y")
    assert take(q, 2) == ["x", "y"]
    assert q.len() == 0
    getter = BlockedGetter(q)
    assert getter.nothing_yet()  # the low entry x left behind by its promotion is not handed out
    q.shut_down()
    assert getter.result() == (None, True)
    getter.join()


# -- stingy: re-adds while processing ---------------------------------------------------------------------------------
def test_a_low_re_add_while_processing_is_queued_at_done_behind_normal_items_added_meanwhile(q: Queue) -> None:
    q.add_low_priority("x")
    assert q.get() == ("x", False)
    assert q.len() == 0
    q.add_low_priority("x")
    assert q.len() == 0  # being processed: not waiting yet
    q.add("n")
    assert q.len() == 1
    q.done("x")
    assert q.len() == 2
    assert take(q, 2) == ["n", "x"]
    assert q.len() == 0


def test_a_low_re_add_while_processing_is_not_handed_out_before_done(q: Queue) -> None:
    q.add_low_priority("x")
    assert q.get() == ("x", False)
    q.add_low_priority("x")
    getter = BlockedGetter(q)
    assert getter.nothing_yet()
    q.done("x")
    assert getter.result() == ("x", False)
    getter.join()
    q.done("x")
    assert q.len() == 0


def test_a_normal_add_while_processing_after_a_low_re_add_raises_it(q: Queue) -> None:
    q.add("x")
    assert q.get() == ("x", False)
    q.add_low_priority("x")
    q.add_low_priority("low")
    q.add("x")  # raised to normal priority while still processing
    assert q.len() == 1  # only "low" waits
    q.done("x")
    assert q.len() == 2
    assert take(q, 2) == ["x", "low"]
    assert q.len() == 0


def test_a_normal_re_add_while_processing_is_not_lowered_by_a_later_low_add(q: Queue) -> None:
    q.add_low_priority("x")
    assert q.get() == ("x", False)
    q.add("x")
    q.add_low_priority("x")  # pending at normal priority: keeps it
    q.add_low_priority("low")
    q.done("x")
    assert q.len() == 2
    assert take(q, 2) == ["x", "low"]


def test_a_promoted_item_re_added_low_while_processing_is_not_handed_out_again_before_done(q: Queue) -> None:
    # x's promotion leaves its old low entry behind: it must not hand x out while x is being processed
    q.add_low_priority("x")
    q.add("x")
    assert q.len() == 1
    assert q.get() == ("x", False)
    assert q.len() == 0
    q.add_low_priority("x")
    assert q.len() == 0  # x is being processed: nothing waits
    getter = BlockedGetter(q)
    assert getter.nothing_yet()
    q.add_low_priority("y")
    assert getter.result() == ("y", False)  # y, not x
    getter.join()
    assert q.len() == 0
    q.done("y")
    q.done("x")  # x was re-added: queued again now, at low priority
    assert q.len() == 1
    q.add("n")
    assert take(q, 2) == ["n", "x"]
    assert q.len() == 0


def test_a_promoted_item_re_added_low_while_processing_waits_its_turn_at_done(q: Queue) -> None:
    # the same as above, with y already waiting at low priority when x is queued again
    q.add_low_priority("x")
    q.add("x")
    assert q.get() == ("x", False)
    q.add_low_priority("x")
    q.add_low_priority("y")
    assert q.len() == 1
    q.done("x")
    assert q.len() == 2
    assert take(q, 2) == ["y", "x"]


def test_fifo_among_low_items_holds_after_an_earlier_promotion(q: Queue) -> None:
    q.add_low_priority("x")
    q.add("x")  # promoted: its low entry is stale
    q.add_low_priority("y")
    assert take(q, 1) == ["x"]
    q.add_low_priority("z")
    q.add_low_priority("x")  # queued after y and z
    assert q.len() == 3
    assert take(q, 3) == ["y", "z", "x"]


def test_promotions_leave_a_bounded_trace(q: Queue) -> None:
    for _ in range(1000):
        q.add_low_priority("x")
        q.add("x")
        assert take(q, 1) == ["x"]
    assert q.len() == 0
    assert len(q._low) <= 65  # white box: the stale entries of promoted items are dropped, not one per promotion


# -- len and shutdown -------------------------------------------------------------------------------------------------
def test_len_counts_waiting_items_of_both_priorities_and_not_those_being_processed(q: Queue) -> None:
    assert q.len() == 0
    q.add_low_priority("a")
    q.add("b")
    q.add_low_priority("c")
    assert q.len() == 3
    assert q.get() == ("b", False)
    assert q.len() == 2
    assert q.get() == ("a", False)
    assert q.len() == 1
    q.add_low_priority("a")  # being processed
    q.add("b")
    assert q.len() == 1
    q.done("a")
    q.done("b")
    assert q.len() == 3
    assert take(q, 3) == ["b", "c", "a"]
    assert q.len() == 0


def test_a_blocked_getter_is_woken_by_a_low_add(q: Queue) -> None:
    getter = BlockedGetter(q)
    assert getter.nothing_yet()
    q.add_low_priority("x")
    assert getter.result() == ("x", False)
    getter.join()
    q.done("x")


def test_after_shutdown_both_priorities_drain_then_get_reports_shutdown(q: Queue) -> None:
    q.add_low_priority("low1")
    q.add("n1")
    q.add_low_priority("low2")
    q.add("n2")
    q.shut_down()
    q.add("late")  # dropped
    q.add_low_priority("late-low")  # dropped
    assert q.len() == 4
    assert take(q, 4) == ["n1", "n2", "low1", "low2"]
    assert q.get() == (None, True)
    assert q.len() == 0


def test_a_low_re_add_while_processing_drains_after_shutdown(q: Queue) -> None:
    q.add_low_priority("x")
    assert q.get() == ("x", False)
    q.add_low_priority("x")
    q.shut_down()
    q.done("x")  # queued again: it was added before the shutdown
    assert q.get() == ("x", False)
    q.done("x")
    assert q.get() == (None, True)


def test_the_rate_limiting_queue_orders_low_items_behind_delayed_and_rate_limited_adds() -> None:
    clock = FakeClock()
    q = RateLimitingQueue(ItemExponentialFailureRateLimiter(1.0, 10.0), clock=clock)
    try:
        q.add_low_priority("low")
        q.add_rate_limited("retry")  # after 1 s, then at normal priority
        q.add_after("later", 2.0)
        assert q.len() == 1
        clock.step(2.5)
        wait_for("the delayed items to be queued", q.len, TIMEOUT, check=lambda n: n == 3)
        assert take(q, 3) == ["retry", "later", "low"]
        q.add_low_priority("x")
        q.add_after("x", 1.0)
        clock.step(1.5)  # add_after's add raises x
        q.add_low_priority("y")
        wait_for("x to be queued", q.len, TIMEOUT, check=lambda n: n == 2)
        assert take(q, 2) == ["x", "y"]
    finally:
        q.shut_down()

