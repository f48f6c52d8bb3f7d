"""Retry pacing: the rate limiter of a controller's queue (failures) and Go Sedna's ``GetBackoff`` (non-immediate
enqueues of a key that keeps coming back)."""

from __future__ import annotations

from dataclasses import dataclass

from workqueue import RateLimiter, default_controller_rate_limiter

__all__ = ["MAX_RETRY_DELAY", "SednaBackoff", "controller_rate_limiter"]

MAX_RETRY_DELAY = 360.0  # Go Sedna's ItemExponentialFailureRateLimiter(10 s, 360 s) cap


def controller_rate_limiter(max_delay: float = MAX_RETRY_DELAY) -> RateLimiter:
    """``default_controller_rate_limiter`` (5 ms doubling per key, 10 qps / burst 100 overall) with the per-key
    backoff capped at ``max_delay`` instead of 1000 s: a key that keeps failing is retried every few minutes."""
    return default_controller_rate_limiter(max_delay)


@dataclass(frozen=True)
class SednaBackoff:
    """Go Sedna's ``GetBackoff``: ``base·2^(requeues−1)`` seconds, capped at ``cap``; 0 for a key never requeued."""

    base: float = 10.0
    cap: float = 360.0

    def delay(self, requeues: int) -> float:
        if requeues <= 0:
            return 0.0
        if requeues > 64:  # 2^63·base is past any cap: no need to build the huge number
            return self.cap
        return float(min(self.base * 2 ** (requeues - 1), self.cap))
