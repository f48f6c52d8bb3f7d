"""The one injectable clock of the library (port of the parts of k8s.io/utils/clock that workqueue and informers use).

Times are float seconds on a monotonic scale. The queues wait with "wait on this condition until the clock reaches an
absolute deadline", so a ``FakeClock`` wakes them deterministically when a test steps it, with no race between reading
the time and starting to wait; reflectors and backoffs wait with a stop-aware ``sleep``. ``informers`` imports this
module (``workqueue`` imports nothing else of ours, so both can share it).
"""

from __future__ import annotations

import threading
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "FakeClock", "RealClock", "REAL_CLOCK"]


@runtime_checkable
class Clock(Protocol):
    """A source of time that can also put a thread to sleep on a condition."""

    def now(self) -> float:
        """Current time in seconds (monotonic)."""
        ...

    def wait_until(self, cond: threading.Condition, deadline: float) -> None:
        """Wait on ``cond`` (whose lock the caller holds) until notified or ``now() >= deadline``.

        May return early (spurious wake-up): callers re-check their predicate.
        """
        ...

    def sleep(self, seconds: float, stop_event: threading.Event) -> bool:
        """Wait ``seconds`` or until ``stop_event`` is set; True when stopped."""
        ...


class RealClock:
    """The process's monotonic clock."""

    def now(self) -> float:
        return time.monotonic()

    def wait_until(self, cond: threading.Condition, deadline: float) -> None:
        timeout = deadline - time.monotonic()
        if timeout > 0:
            # Condition.wait rejects absurdly large timeouts on some platforms.
            cond.wait(min(timeout, threading.TIMEOUT_MAX))

    def sleep(self, seconds: float, stop_event: threading.Event) -> bool:
        return stop_event.wait(min(max(0.0, seconds), threading.TIMEOUT_MAX))


REAL_CLOCK = RealClock()


class FakeClock:
    """A manually advanced clock for tests; ``step``/``set_time`` wake the waiters whose deadline passed."""

    def __init__(self, start: float = 0.0) -> None:
        self._lock = threading.Lock()
        self._now = float(start)
        # condition -> earliest deadline any thread waits for on it
        self._waiters: dict[threading.Condition, list[float]] = {}

    def now(self) -> float:
        with self._lock:
            return self._now

    def since(self, t: float) -> float:
        """Seconds elapsed since ``t``."""
        return self.now() - t

    def step(self, seconds: float) -> None:
        """Advance the clock by ``seconds`` and wake every waiter whose deadline is now reached."""
        with self._lock:
            self._now += seconds
        self._wake()

    def set_time(self, t: float) -> None:
        """Move the clock to ``t`` and wake every waiter whose deadline is now reached."""
        with self._lock:
            self._now = float(t)
        self._wake()

    def sleep(self, seconds: float, stop_event: threading.Event) -> bool:
        """Advance the clock by ``seconds`` instead of sleeping (as Go's ``FakeClock.Sleep``); True when stopped."""
        self.step(max(0.0, seconds))
        return stop_event.is_set()

    def has_waiters(self) -> bool:
        """True while some thread sleeps in ``wait_until`` with a deadline not yet reached."""
        with self._lock:
            return any(self._waiters.values())

    def wait_until(self, cond: threading.Condition, deadline: float) -> None:
        with self._lock:
            if self._now >= deadline:
                return
            deadlines = self._waiters.setdefault(cond, [])
            deadlines.append(deadline)
        try:
            cond.wait()
        finally:
            with self._lock:
                # _wake already unregistered a deadline it found due
                if deadline in deadlines:
                    deadlines.remove(deadline)
                if not deadlines and self._waiters.get(cond) is deadlines:
                    del self._waiters[cond]

    def _wake(self) -> None:
        due: list[threading.Condition] = []
        with self._lock:
            for cond, deadlines in self._waiters.items():
                if any(d <= self._now for d in deadlines):
                    deadlines[:] = [d for d in deadlines if d > self._now]
                    due.append(cond)
        # Notify outside our lock: a waiter takes our lock while holding its condition's lock.
        for cond in due:
            with cond:
                cond.notify_all()
