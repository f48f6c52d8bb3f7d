"""Jittered exponential backoff for the reflector, with an injectable clock (``workqueue.clock``) and random source.

Port of apimachinery's ``NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0, clock)`` as client-go ≤ 1.35 uses
it: delays [0.8, 1.6), [1.6, 3.2), … then [30, 60) s forever; the sequence restarts when more than ``reset_after``
seconds passed since the previous backoff (the server is then assumed healthy again). It never gives up.
"""

from __future__ import annotations

import random
import threading

from workqueue.clock import REAL_CLOCK, Clock

__all__ = ["Backoff", "jitter"]


def jitter(duration: float, max_factor: float, rng: random.Random | None = None) -> float:
    """``duration + U[0, 1) * max_factor * duration`` (a factor ≤ 0 counts as 1.0, as in apimachinery)."""
    if max_factor <= 0.0:
        max_factor = 1.0
    return duration + (rng or random).random() * max_factor * duration


class Backoff:
    """Exponential backoff: ``next_delay()`` returns the next (jittered) delay; ``wait`` sleeps it."""

    def __init__(
        self,
        initial: float = 0.8,
        cap: float = 30.0,
        factor: float = 2.0,
        jitter_factor: float = 1.0,
        reset_after: float = 120.0,
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if initial <= 0 or cap < initial or factor < 1.0:
            raise ValueError(f"invalid backoff: initial={initial} cap={cap} factor={factor}")
        self.initial = initial
        self.cap = cap
        self.factor = factor
        self.jitter_factor = jitter_factor
        self.reset_after = reset_after
        self.clock: Clock = clock or REAL_CLOCK
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._duration = initial
        self._capped = False
        self._last_backoff_start: float | None = None

    def fresh_copy(self) -> Backoff:
        """A new backoff with the same settings, clock and random source but its own state (one per reflector)."""
        return Backoff(self.initial, self.cap, self.factor, self.jitter_factor, self.reset_after, self.clock,
                       self._rng)

    def next_delay(self) -> float:
        with self._lock:
            now = self.clock.now()
            if self._last_backoff_start is None or now - self._last_backoff_start > self.reset_after:
                self._duration = self.initial
                self._capped = False
            self._last_backoff_start = now
            duration = self._duration
            if not self._capped:
                nxt = self._duration * self.factor
                if nxt > self.cap:
                    nxt = self.cap
                    self._capped = True
                self._duration = nxt
            if self.jitter_factor > 0:
                duration = jitter(duration, self.jitter_factor, self._rng)
            return duration

    def wait(self, stop_event: threading.Event) -> bool:
        """Sleep one backoff step; True when ``stop_event`` was set (the caller should stop)."""
        return self.clock.sleep(self.next_delay(), stop_event)
