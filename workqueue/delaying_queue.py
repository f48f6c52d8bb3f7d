"""Delaying queue: port of client-go ``util/workqueue/delaying_queue.go`` (release-1.32).

``add_after(item, delay)`` adds ``item`` once ``delay`` seconds have passed. Waiting items live in a
min-heap served by one background thread that sleeps until the earliest ready time (or at most
``MAX_WAIT`` seconds, Go's heartbeat). A later ``add_after`` never postpones an item that is already
waiting; an earlier one moves it forward. Shutting down stops the thread and drops waiting items.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Hashable
from typing import Any

from workqueue.clock import Clock
from workqueue.metrics import MetricsProvider, new_retry_metric
from workqueue.queue import Queue

__all__ = ["DelayingQueue", "MAX_WAIT"]

MAX_WAIT = 10.0
"""Longest time the waiting thread sleeps without re-checking (Go's ``maxWait`` heartbeat)."""

_REMOVED: Any = object()  # marks a heap entry superseded by an earlier add_after of its item


class DelayingQueue(Queue):
    """A ``Queue`` that can also add items after a delay."""

    def __init__(
        self,
        name: str = "",
        metrics_provider: MetricsProvider | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(name=name, metrics_provider=metrics_provider, clock=clock)
        self._retries = new_retry_metric(metrics_provider, name)
        self._waiting_cond = threading.Condition(threading.Lock())
        # heap of [ready_at, sequence, item]; item is _REMOVED once superseded
        self._waiting_heap: list[list[Any]] = []
        self._waiting_entries: dict[Hashable, list[Any]] = {}
        self._sequence = itertools.count()
        self._waiting_thread: threading.Thread | None = None
        self._waiting_stopped = False

    def add_after(self, item: Hashable, delay: float) -> None:
        """Add ``item`` after ``delay`` seconds (at once if ``delay <= 0``). Counts a retry.
        No-op once shutting down."""
        if self._shutting_down:
            return
        if self._retries is not None:
            self._retries.inc()
        if delay <= 0:
            self.add(item)
            return
        ready_at = self._clock.now() + delay
        with self._waiting_cond:
            if self._waiting_stopped:
                return
            existing = self._waiting_entries.get(item)
            if existing is not None:
                if existing[0] <= ready_at:
                    return
                existing[2] = _REMOVED
            entry = [ready_at, next(self._sequence), item]
            self._waiting_entries[item] = entry
            heapq.heappush(self._waiting_heap, entry)
            if self._waiting_thread is None:
                # Started lazily: a queue that never delays anything costs no thread.
                self._waiting_thread = threading.Thread(
                    target=self._waiting_loop, name=f"workqueue-delaying-{self.name}", daemon=True
                )
                self._waiting_thread.start()
            elif self._waiting_heap[0] is entry:
                self._waiting_cond.notify()

    def shut_down(self) -> None:
        """Shut the queue down, stop the waiting thread and drop items still waiting."""
        super().shut_down()
        self._stop_waiting()

    def shut_down_with_drain(self) -> None:
        """Drop items still waiting, then shut down with drain (see ``Queue.shut_down_with_drain``)."""
        self._stop_waiting()
        super().shut_down_with_drain()

    def _stop_waiting(self) -> None:
        with self._waiting_cond:
            self._waiting_stopped = True
            self._waiting_heap.clear()
            self._waiting_entries.clear()
            self._waiting_cond.notify_all()
            thread = self._waiting_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _waiting_loop(self) -> None:
        clock = self._clock
        cond = self._waiting_cond
        heap = self._waiting_heap
        entries = self._waiting_entries
        heappop = heapq.heappop
        with cond:
            while not self._waiting_stopped:
                now = clock.now()
                while heap and heap[0][0] <= now:
                    item = heappop(heap)[2]
                    if item is not _REMOVED:
                        del entries[item]
                        self.add(item)
                while heap and heap[0][2] is _REMOVED:
                    heappop(heap)
                deadline = now + MAX_WAIT
                if heap and heap[0][0] < deadline:
                    deadline = heap[0][0]
                clock.wait_until(cond, deadline)
