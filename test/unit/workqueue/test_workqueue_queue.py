"""Port of client-go util/workqueue/queue_test.go (release-1.32)."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Callable

import pytest
from testkit import wait_for

from workqueue import Queue

TIMEOUT = 5.0


def _start(fn: Callable[[], object]) -> threading.Thread:
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def _join_all(threads: list[threading.Thread]) -> None:
    for t in threads:
        t.join(TIMEOUT)
        assert not t.is_alive(), "thread did not finish in time"


@pytest.mark.parametrize("shut", ["shut_down", "shut_down_with_drain"])
def test_basic(shut: str) -> None:
    q = Queue()
    errors: list[str] = []
    producers = [_start(lambda i=i: [q.add(i) for _ in range(50)]) for i in range(50)]

    def consume() -> None:
        while True:
            item, quit_ = q.get()
            if item == "added after shutdown!":
                errors.append("got an item added after shutdown")
            if quit_:
                return
            q.done(item)

    consumers = [_start(consume) for _ in range(10)]
    _join_all(producers)
    getattr(q, shut)()
    q.add("added after shutdown!")
    _join_all(consumers)
    assert not errors
    assert q.len() == 0


@pytest.mark.parametrize("shut", ["shut_down", "shut_down_with_drain"])
def test_add_while_processing(shut: str) -> None:
    q = Queue()
    producers = [_start(lambda i=i: q.add(i)) for i in range(50)]

    def consume() -> None:
        # Every worker re-adds every item up to two times (dirty-while-processing case).
        counters: dict[object, int] = {}
        while True:
            item, quit_ = q.get()
            if quit_:
                return
            counters[item] = counters.get(item, 0) + 1
            if counters[item] < 2:
                q.add(item)
            q.done(item)

    consumers = [_start(consume) for _ in range(10)]
    _join_all(producers)
    getattr(q, shut)()
    _join_all(consumers)
    assert len(q) == 0


def test_len() -> None:
    q = Queue()
    q.add("foo")
    assert q.len() == 1
    q.add("bar")
    assert q.len() == 2
    q.add("foo")  # must not increase the length
    assert q.len() == 2 == len(q)


def test_len_counts_waiting_items_only() -> None:
    q = Queue()
    q.add("foo")
    item, _ = q.get()
    assert len(q) == 0  # processing is not waiting
    q.add("foo")
    assert len(q) == 0  # dirty while processing is not waiting either
    q.done(item)
    assert len(q) == 1


def test_reinsert() -> None:
    q = Queue()
    q.add("foo")
    i, _ = q.get()
    assert i == "foo"
    q.add(i)  # add back while processing
    q.done(i)
    i, _ = q.get()
    assert i == "foo"
    q.done(i)
    assert q.len() == 0


def test_fifo_order() -> None:
    q = Queue()
    for x in ["a", "b", "c", "a", "d"]:
        q.add(x)
    assert [q.get()[0] for _ in range(4)] == ["a", "b", "c", "d"]


def test_collapse() -> None:
    q = Queue()
    q.add("bar")
    q.add("bar")
    i, _ = q.get()
    assert i == "bar"
    q.done(i)
    assert q.len() == 0


def test_collapse_while_processing() -> None:
    q = Queue()
    q.add("foo")
    i, _ = q.get()
    assert i == "foo"
    q.add("foo")
    q.add("foo")
    first_done = threading.Event()
    result: list[tuple[object, bool]] = []

    def other_worker() -> None:
        item, _ = q.get()
        result.append((item, first_done.is_set()))  # what the other worker saw when it got the item
        q.done(item)

    t = _start(other_worker)
    # The other worker must stay blocked while "foo" is processing (stingy): it gets "foo" only after done.
    first_done.set()
    q.done("foo")
    _join_all([t])
    assert result == [("foo", True)]
    assert q.len() == 0


def test_item_never_processed_concurrently() -> None:
    q = Queue()
    active: set[int] = set()
    lock = threading.Lock()
    violations: list[int] = []

    def work() -> None:
        while True:
            item, quit_ = q.get()
            if quit_:
                return
            with lock:
                if item in active:
                    violations.append(item)
                active.add(item)
            time.sleep(0)
            with lock:
                active.discard(item)
            q.done(item)

    workers = [_start(work) for _ in range(4)]
    for n in range(2000):
        q.add(n % 7)
    wait_for("the condition", lambda: len(q) == 0, timeout=TIMEOUT, interval=0.001)
    q.shut_down_with_drain()
    _join_all(workers)
    assert not violations


def test_queue_drainage_using_shut_down_with_drain() -> None:
    q = Queue()
    q.add("foo")
    q.add("bar")
    first, _ = q.get()
    second, _ = q.get()
    processing = {first, second}  # what the test still processes; an item leaves it just before its done
    still_processing_at_return: list[set[object]] = []

    def drain() -> None:
        q.shut_down_with_drain()
        still_processing_at_return.append(set(processing))

    t = _start(drain)
    wait_for("the queue to shut down", q.shutting_down, timeout=TIMEOUT, interval=0.001)
    _, shutting_down = q.get()
    assert shutting_down
    for item in (first, second):
        processing.discard(item)
        q.done(item)
    _join_all([t])
    assert still_processing_at_return == [set()], "drain must wait for items being processed"


def test_no_queue_drainage_using_shut_down() -> None:
    q = Queue()
    q.add("foo")
    q.add("bar")
    q.get()
    q.get()
    t = _start(q.shut_down)  # returns without waiting for done
    _join_all([t])


def test_force_queue_shutdown_using_shut_down() -> None:
    q = Queue()
    q.add("foo")
    q.add("bar")
    q.get()
    q.get()
    t = _start(q.shut_down_with_drain)
    wait_for("the condition", q.shutting_down, timeout=TIMEOUT, interval=0.001)
    assert q.get() == (None, True)
    q.shut_down()  # releases the drain without any done
    _join_all([t])


def test_queue_drainage_using_shut_down_with_drain_with_dirty_item() -> None:
    q = Queue()
    q.add("foo")
    gotten, _ = q.get()
    q.add("foo")
    t = _start(q.shut_down_with_drain)
    wait_for("the condition", q.shutting_down, timeout=TIMEOUT, interval=0.001)
    assert q.get() == (None, True)
    q.done(gotten)
    _join_all([t])  # nothing is processing: the drain does not wait for the item queued again
    # done put the dirty item back, so get hands it out again even though shutting down
    again, shutting_down = q.get()
    assert again == "foo" and not shutting_down
    q.done(again)
    assert q.get() == (None, True)


def test_get_after_shut_down_drains_queued_items() -> None:
    q = Queue()
    q.add("a")
    q.add("b")
    q.shut_down()
    q.add("c")  # dropped
    assert q.get() == ("a", False)
    assert q.get() == ("b", False)
    assert q.get() == (None, True)
    assert q.shutting_down()


def test_shut_down_wakes_blocked_getters() -> None:
    q = Queue()
    results: list[tuple[object, bool]] = []
    getters = [_start(lambda: results.append(q.get())) for _ in range(3)]
    wait_for("the condition", lambda: q._getters == 3, timeout=TIMEOUT, interval=0.001)
    q.shut_down()
    _join_all(getters)
    assert results == [(None, True)] * 3


def test_getters_woken_once_each_and_only_while_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    q = Queue()
    notified = []
    original_notify = q._cond.notify
    monkeypatch.setattr(q._cond, "notify", lambda n=1: (notified.append(n), original_notify(n)))
    for i in range(5):
        q.add(i)  # nobody waits: no notify under the lock
    assert notified == []
    for _ in range(5):
        q.done(q.get()[0])
    results: list[tuple[object, bool]] = []
    getters = [_start(lambda: results.append(q.get())) for _ in range(2)]
    wait_for("both getters to wait", lambda: q._getters == 2, timeout=TIMEOUT, interval=0.001)
    for item in ("a", "b", "c", "d"):
        q.add(item)  # the first two wake one getter each; the others find no getter left to wake
    _join_all(getters)
    assert notified == [1, 1]
    assert sorted(results) == [("a", False), ("b", False)]
    assert q._getters == 0
    assert [q.get()[0], q.get()[0]] == ["c", "d"]


def test_unhashable_item_rejected() -> None:
    q = Queue()
    with pytest.raises(TypeError):
        q.add(["not", "hashable"])


def test_garbage_collection() -> None:
    class Big:
        pass

    q = Queue()
    obj = Big()
    ref = weakref.ref(obj)
    q.add(obj)
    got, _ = q.get()
    q.done(got)
    del obj, got
    gc.collect()
    assert ref() is None
