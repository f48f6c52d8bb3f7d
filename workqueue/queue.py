"""The basic work queue: port of client-go ``util/workqueue/queue.go`` (release-1.32).

Guarantees:
* Fair: items are processed in the order in which they are added; those added with ``add_low_priority`` after every
  item added with ``add`` (an extension of client-go's queue, as controller-runtime's priority queue: work that can
  wait, such as refreshing a status, yields to new work under a backlog).
* Stingy: a single item is never processed by two workers at once, and an item added several
  times before it is processed is processed once.
* An item added while it is being processed is queued again when ``done`` is called for it.
* Multiple producers and consumers; after ``shut_down`` queued items still drain, then ``get``
  returns ``(None, True)``; adds after shutdown are dropped.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

from workqueue.clock import REAL_CLOCK, Clock
from workqueue.metrics import (
    OBSERVATIONS_FOLDED_AT,
    BufferedQueueMetricsRecorder,
    MetricsProvider,
    new_queue_metrics,
)

__all__ = ["Queue", "UNFINISHED_WORK_UPDATE_PERIOD"]

UNFINISHED_WORK_UPDATE_PERIOD = 0.5
"""Seconds between updates of the unfinished-work gauges of a named queue with real metrics."""


def _nothing() -> None:
    pass


class Queue:
    """A fair, stingy work queue of hashable items (client-go ``workqueue.Type``)."""

    def __init__(
        self,
        name: str = "",
        metrics_provider: MetricsProvider | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.name = name
        self._clock: Clock = REAL_CLOCK if clock is None else clock
        self._lock = threading.Lock()
        # Getters wait on _cond; shut_down_with_drain waits on _drain_cond (same lock), so a
        # notification meant for one kind of waiter is never swallowed by the other.
        self._cond = threading.Condition(self._lock)
        self._drain_cond = threading.Condition(self._lock)
        # Items waiting to be handed out; each is in _dirty and not in _processing.
        self._queue: deque[Any] = deque()
        # Items pending at low priority (each also in _dirty) -> their ticket; _low holds (item, ticket) in order. An
        # entry whose ticket is no longer its item's (raised to normal priority, handed out) is stale: get skips it.
        self._low: deque[tuple[Any, int]] = deque()
        self._low_items: dict[Any, int] = {}
        self._low_tickets = 0
        self._low_waiting = 0  # items of _low_items not being processed
        # Everything that needs processing (queued, or re-added while processing) -> when it was added, and what is
        # being processed -> since when: client-go's metrics' addTimes and processingStartTimes, which have exactly
        # these lifetimes (the times are None when no metrics are recorded).
        self._dirty: dict[Any, float | None] = {}
        self._processing: dict[Any, float | None] = {}
        self._getters = 0  # getters waiting on _cond that no one has woken yet
        self._drain_waiters = 0
        self._shutting_down = False
        self._drain = False
        self._metrics = new_queue_metrics(metrics_provider, name, self._clock, self._lock, self._dirty.__len__)
        # A buffered recorder's clock and observation lists, which get and done use directly (else None).
        buffered = self._metrics if isinstance(self._metrics, BufferedQueueMetricsRecorder) else None
        self._latencies = None if buffered is None else buffered.latencies
        self._work_durations = None if buffered is None else buffered.work_durations
        self._now: Callable[[], float] = self._clock.now if buffered is None else buffered.now
        self._fold: Callable[[], None] = _nothing if buffered is None else buffered.fold
        self._updater: threading.Thread | None = None
        self._updater_cond = threading.Condition(threading.Lock())
        self._updater_stopped = False
        if self._metrics is not None:
            first_tick = self._clock.now() + UNFINISHED_WORK_UPDATE_PERIOD
            self._updater = threading.Thread(
                target=self._update_unfinished_work_loop,
                args=(first_tick,),
                name=f"workqueue-metrics-{name}",
                daemon=True,
            )
            self._updater.start()

    def add(self, item: Hashable) -> None:
        """Mark ``item`` as needing processing (no-op after shutdown or if already pending)."""
        with self._lock:
            if self._shutting_down:
                return
            if item in self._dirty:
                if self._low_items.pop(item, None) is not None:  # pending at low priority: raised
                    if item not in self._processing:
                        self._low_waiting -= 1
                        self._queue.append(item)
                return
            self._dirty[item] = None if self._metrics is None else self._metrics.add()
            if item in self._processing:
                return
            self._queue.append(item)
            if self._getters:
                self._wake_getter()

    def add_low_priority(self, item: Hashable) -> None:
        """Like ``add``, but ``item`` is handed out only when no item added with ``add`` waits; a later ``add`` of it
        raises it to normal priority. A pending item keeps its priority."""
        with self._lock:
            if self._shutting_down or item in self._dirty:
                return
            self._dirty[item] = None if self._metrics is None else self._metrics.add()
            self._low_tickets += 1
            self._low_items[item] = self._low_tickets
            if item in self._processing:
                return
            self._append_low(item)
            if self._getters:
                self._wake_getter()

    def _append_low(self, item: Any) -> None:
        low = self._low
        low.append((item, self._low_items[item]))
        self._low_waiting += 1
        if len(low) > 2 * self._low_waiting + 64:  # mostly stale entries: drop them (amortized O(1))
            items, processing = self._low_items, self._processing
            self._low = deque(e for e in low if items.get(e[0]) == e[1] and e[0] not in processing)

    def _wake_getter(self) -> None:
        # only while someone waits: Condition.notify is Python code, and it runs under the lock the workers contend for
        self._getters -= 1
        self._cond.notify()

    def get(self) -> tuple[Any, bool]:
        """Block until an item is available; return ``(item, False)``, or ``(None, True)`` once shut
        down and empty. The caller must call ``done(item)`` when finished with it."""
        with self._lock:
            queue = self._queue
            while not queue and not self._low_waiting:
                if self._shutting_down:
                    return None, True
                # the thread that wakes this getter counts it out (after an interrupted wait the count is one too
                # high until an add spends a notify on no one)
                self._getters += 1
                self._cond.wait()
            item = queue.popleft() if queue else self._pop_low()
            added_at = self._dirty.pop(item, None)
            latencies = self._latencies
            if latencies is not None and added_at is not None:
                started_at = self._processing[item] = self._now()
                latencies.append(started_at - added_at)
            else:
                self._processing[item] = None if self._metrics is None else self._metrics.get(added_at)
            return item, False

    def _pop_low(self) -> Any:
        low, items, processing = self._low, self._low_items, self._processing
        while True:
            item, ticket = low.popleft()
            if items.get(item) == ticket and item not in processing:
                del items[item]
                self._low_waiting -= 1
                return item

    def done(self, item: Hashable) -> None:
        """Mark ``item`` as processed; if it was added again meanwhile it is queued again."""
        with self._lock:
            started_at = self._processing.pop(item, None)
            if started_at is not None:  # recorded with metrics only
                work_durations = self._work_durations
                if work_durations is not None:
                    work_durations.append(self._now() - started_at)
                    if len(work_durations) >= OBSERVATIONS_FOLDED_AT:
                        self._fold()
                elif self._metrics is not None:
                    self._metrics.done(started_at)
            if item in self._dirty:
                if item in self._low_items:
                    self._append_low(item)
                else:
                    self._queue.append(item)
                if self._getters:
                    self._wake_getter()
            if self._drain_waiters and not self._processing:  # a drain waits for processing only, not for the queue
                self._drain_cond.notify_all()

    def len(self) -> int:
        """Number of items waiting to be handed out (not those being processed)."""
        return len(self._queue) + self._low_waiting

    def __len__(self) -> int:
        return len(self._queue) + self._low_waiting

    def shut_down(self) -> None:
        """Stop accepting items; getters drain what is queued, then see shutdown. Releases a
        pending ``shut_down_with_drain``."""
        with self._lock:
            self._drain = False
            self._shutting_down = True
            self._getters = 0
            self._cond.notify_all()
            self._drain_cond.notify_all()
        self._stop_updater(join=True)

    def shut_down_with_drain(self) -> None:
        """Like ``shut_down``, then block until every item being processed is done (or until
        ``shut_down`` is called). Items still queued are not waited for."""
        with self._lock:
            self._drain = True
            self._shutting_down = True
            self._getters = 0
            self._cond.notify_all()
        self._stop_updater(join=False)
        with self._lock:
            while self._processing and self._drain:
                self._drain_waiters += 1
                try:
                    self._drain_cond.wait()
                finally:
                    self._drain_waiters -= 1
        self._stop_updater(join=True)

    def shutting_down(self) -> bool:
        """True once ``shut_down`` or ``shut_down_with_drain`` has been called."""
        return self._shutting_down

    def _stop_updater(self, join: bool) -> None:
        updater = self._updater
        if updater is None:
            return
        with self._updater_cond:
            self._updater_stopped = True
            self._updater_cond.notify_all()
        if join and updater is not threading.current_thread():
            updater.join()
        if self._metrics is not None:
            self._metrics.flush()

    def _update_unfinished_work_loop(self, next_tick: float) -> None:
        clock = self._clock
        cond = self._updater_cond
        metrics = self._metrics
        assert metrics is not None
        with cond:
            while True:
                while not self._updater_stopped and clock.now() < next_tick:
                    clock.wait_until(cond, next_tick)
                if self._updater_stopped:
                    return
                # Like a Go ticker: ticks that could not be delivered in time are dropped.
                now = clock.now()
                next_tick += UNFINISHED_WORK_UPDATE_PERIOD
                if next_tick <= now:
                    next_tick = now + UNFINISHED_WORK_UPDATE_PERIOD
                with self._lock:
                    if self._shutting_down:
                        return
                    metrics.update_unfinished_work(self._processing.values())
                metrics.flush()
