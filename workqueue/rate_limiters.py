"""Rate limiters: port of client-go ``util/workqueue/default_rate_limiters.go``.

Every limiter is thread-safe. ``when(item)`` returns how long (float seconds) to wait before the
item is processed again and counts a failure for it; ``forget(item)`` clears its history;
``num_requeues(item)`` tells how many failures it has had.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Hashable
from typing import Protocol, runtime_checkable

from workqueue.clock import REAL_CLOCK, Clock

__all__ = [
    "INF_DURATION",
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
]

_MAX_INT64 = (1 << 63) - 1
INF_DURATION = _MAX_INT64 / 1e9
"""Go's ``rate.InfDuration`` (the largest time.Duration), in seconds."""


def _go_duration(seconds: float) -> float:
    """Truncate to whole nanoseconds, as a conversion to Go's ``time.Duration`` does."""
    return int(seconds * 1e9) / 1e9


@runtime_checkable
class RateLimiter(Protocol):
    """client-go ``RateLimiter``."""

    def when(self, item: Hashable) -> float:
        """Seconds to wait before ``item`` is processed again; counts a failure."""
        ...

    def forget(self, item: Hashable) -> None:
        """Stop tracking ``item`` (its next ``when`` starts over)."""
        ...

    def num_requeues(self, item: Hashable) -> int:
        """How many failures ``item`` has had."""
        ...


class _PerItemFailures:
    """Thread-safe per-item failure counts shared by the per-item limiters."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: dict[Hashable, int] = {}

    def _count_failure(self, item: Hashable) -> int:
        """Record one more failure of ``item``; return how many it had before."""
        with self._lock:
            before = self._failures.get(item, 0)
            self._failures[item] = before + 1
        return before

    def num_requeues(self, item: Hashable) -> int:
        with self._lock:
            return self._failures.get(item, 0)

    def forget(self, item: Hashable) -> None:
        # Called after every successful sync: an item with no failures (the common case) costs one dict lookup, no
        # lock, which the queue's workers would otherwise contend for. A failure counted concurrently is ordered
        # after this forget, as it could be with the lock.
        if item in self._failures:
            with self._lock:
                self._failures.pop(item, None)


class ItemExponentialFailureRateLimiter(_PerItemFailures):
    """Per-item exponential backoff: ``base_delay * 2**failures``, capped at ``max_delay``."""

    def __init__(self, base_delay: float, max_delay: float) -> None:
        super().__init__()
        self.base_delay = base_delay
        self.max_delay = max_delay

    def when(self, item: Hashable) -> float:
        exp = self._count_failure(item)
        try:
            backoff = self.base_delay * math.ldexp(1.0, exp)
        except OverflowError:
            return self.max_delay
        # Same overflow guard as Go (which works in int64 nanoseconds).
        if backoff * 1e9 > _MAX_INT64:
            return self.max_delay
        return min(backoff, self.max_delay)


class ItemFastSlowRateLimiter(_PerItemFailures):
    """``fast_delay`` for the first ``max_fast_attempts`` failures of an item, then ``slow_delay``."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        super().__init__()
        self.fast_delay = fast_delay
        self.slow_delay = slow_delay
        self.max_fast_attempts = max_fast_attempts

    def when(self, item: Hashable) -> float:
        failures = self._count_failure(item) + 1
        return self.fast_delay if failures <= self.max_fast_attempts else self.slow_delay


class BucketRateLimiter:
    """Overall token bucket (golang.org/x/time/rate ``Limiter.Reserve().Delay()``).

    The bucket starts full with ``burst`` tokens and refills at ``qps`` per second. Every ``when``
    reserves a token whether or not the caller waits, so debt accumulates: with 10 qps / burst 100,
    calls 1-100 return 0, call 101 returns 0.1 s, call 102 0.2 s, and so on.
    """

    def __init__(self, qps: float, burst: int, clock: Clock | None = None) -> None:
        self.qps = float(qps)
        self.burst = int(burst)
        self._clock: Clock = REAL_CLOCK if clock is None else clock
        self._lock = threading.Lock()
        self._tokens = 0.0
        self._last: float | None = None  # None: never used, so the bucket is full

    def when(self, item: Hashable) -> float:
        return self.reserve()

    def reserve(self) -> float:
        """Take one token; return the delay until the reservation may act."""
        with self._lock:
            now = self._clock.now()
            if math.isinf(self.qps) and self.qps > 0:
                return 0.0
            if self.qps <= 0:
                # rate.Limit(0): only the burst is ever available.
                if self.burst >= 1:
                    self.burst -= 1
                    return 0.0
                return INF_DURATION
            if self.burst < 1:
                return INF_DURATION
            tokens = self._advance(now) - 1.0
            wait = _go_duration(-tokens / self.qps) if tokens < 0 else 0.0
            self._last = now
            self._tokens = tokens
            return wait

    def _advance(self, now: float) -> float:
        if self._last is None:
            return float(self.burst)
        last = min(self._last, now)
        tokens = self._tokens + (now - last) * self.qps
        return min(tokens, float(self.burst))

    def num_requeues(self, item: Hashable) -> int:
        return 0

    def forget(self, item: Hashable) -> None:
        pass

    forget.tracks_nothing = True  # type: ignore[attr-defined]  # MaxOfRateLimiter skips it


class MaxOfRateLimiter:
    """The worst of several limiters: ``when`` calls every limiter and returns the longest delay."""

    def __init__(self, *limiters: RateLimiter) -> None:
        self.limiters = tuple(limiters)
        # the forgets that do something (a bucket tracks no item): forget runs after every successful sync
        self._forgets = tuple(f for f in (limiter.forget for limiter in self.limiters)
                              if not getattr(f, "tracks_nothing", False))
        if len(self._forgets) == 1 and type(self).forget is MaxOfRateLimiter.forget:
            self.forget = self._forgets[0]  # type: ignore[method-assign]  # the default limiter: no loop, no layer

    def when(self, item: Hashable) -> float:
        ret = 0.0
        for limiter in self.limiters:
            delay = limiter.when(item)
            if delay > ret:
                ret = delay
        return ret

    def num_requeues(self, item: Hashable) -> int:
        ret = 0
        for limiter in self.limiters:
            n = limiter.num_requeues(item)
            if n > ret:
                ret = n
        return ret

    def forget(self, item: Hashable) -> None:
        for forget in self._forgets:
            forget(item)


class WithMaxWaitRateLimiter:
    """Caps the delay of ``limiter`` at ``max_delay``."""

    def __init__(self, limiter: RateLimiter, max_delay: float) -> None:
        self.limiter = limiter
        self.max_delay = max_delay

    def when(self, item: Hashable) -> float:
        return min(self.limiter.when(item), self.max_delay)

    def num_requeues(self, item: Hashable) -> int:
        return self.limiter.num_requeues(item)

    def forget(self, item: Hashable) -> None:
        self.limiter.forget(item)


def default_controller_rate_limiter(max_delay: float = 1000.0) -> RateLimiter:
    """Per-item exponential backoff (5 ms ... ``max_delay``, client-go's 1000 s by default) combined with an overall
    10 qps / burst 100 bucket."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, max_delay),
        BucketRateLimiter(qps=10, burst=100),
    )


def default_item_based_rate_limiter() -> RateLimiter:
    """Per-item exponential backoff from 1 ms to 1000 s."""
    return ItemExponentialFailureRateLimiter(0.001, 1000.0)
