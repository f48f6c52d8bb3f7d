"""workqueue.keyed.KeyedFIFO: per-key order, one item per key at a time, rate-limited retry, worker threads."""

from __future__ import annotations

import threading

from testkit import wait_for

from workqueue import ItemExponentialFailureRateLimiter
from workqueue.keyed import KeyedFIFO


def test_items_of_a_key_come_in_order_and_one_at_a_time():
    fifo = KeyedFIFO()
    for item in ("a1", "a2"):
        fifo.put("a", item)
    fifo.put("b", "b1")
    assert fifo.pending() == 3
    key, item, _ = fifo.get()
    assert (key, item) == ("a", "a1")
    assert fifo.get()[:2] == ("b", "b1")  # a2 waits while a1 is held
    fifo.done("a")
    assert fifo.get()[:2] == ("a", "a2")
    fifo.shut_down()  # stops the delaying queue's thread
    fifo.done("a")
    fifo.done("b")
    assert fifo.pending() == 0


def test_retry_gives_the_same_item_again_after_the_rate_limit():
    fifo = KeyedFIFO(ItemExponentialFailureRateLimiter(0.001, 0.01))
    fifo.put("a", "a1")
    fifo.put("a", "a2")
    fifo.get()
    fifo.done("a", retry=True)
    assert fifo.num_requeues("a") == 1
    assert fifo.get()[:2] == ("a", "a1")
    fifo.done("a")
    assert fifo.num_requeues("a") == 0
    assert fifo.get()[:2] == ("a", "a2")
    fifo.shut_down()  # stops the delaying queue's thread


def test_workers_process_everything_in_per_key_order_and_survive_errors():
    fifo = KeyedFIFO(ItemExponentialFailureRateLimiter(0.001, 0.01))
    seen: dict[str, list[int]] = {"x": [], "y": []}
    errors: list[int] = []
    retried: set[int] = set()
    lock = threading.Lock()

    def process(key: str, item: int) -> bool:
        if item == 3:
            raise RuntimeError("boom")
        if item == 5 and item not in retried:
            retried.add(item)
            return True
        with lock:
            seen[key].append(item)
        return False

    fifo.start_workers(3, process, on_error=lambda key, item, exc: errors.append(item))
    try:
        for i in range(10):
            fifo.put("x", i)
            fifo.put("y", i)
        wait_for("every item", lambda: fifo.pending() == 0)
        expected = [i for i in range(10) if i != 3]
        assert seen == {"x": expected, "y": expected} and sorted(errors) == [3, 3]
    finally:
        fifo.stop()
