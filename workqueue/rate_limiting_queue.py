"""Rate-limiting queue: port of client-go ``util/workqueue/rate_limiting_queue.go``."""

from __future__ import annotations

from collections.abc import Hashable

from workqueue.clock import Clock
from workqueue.delaying_queue import DelayingQueue
from workqueue.metrics import MetricsProvider
from workqueue.rate_limiters import RateLimiter, default_controller_rate_limiter

__all__ = ["RateLimitingQueue"]


class RateLimitingQueue(DelayingQueue):
    """A ``DelayingQueue`` whose re-adds are paced by a rate limiter.

    Canonical worker: ``key, quit = q.get()``; on success ``q.forget(key)``; on failure
    ``q.add_rate_limited(key)`` (or ``forget`` after too many ``num_requeues``); always ``q.done(key)``.
    """

    def __init__(
        self,
        rate_limiter: RateLimiter | None = None,
        name: str = "",
        metrics_provider: MetricsProvider | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(name=name, metrics_provider=metrics_provider, clock=clock)
        self.rate_limiter: RateLimiter = (
            default_controller_rate_limiter() if rate_limiter is None else rate_limiter
        )

    def add_rate_limited(self, item: Hashable) -> None:
        """Add ``item`` after the delay the rate limiter gives it."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: Hashable) -> None:
        """Clear the limiter's history of ``item``; does not remove it from the queue."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        """How many times ``item`` has been re-queued through the rate limiter."""
        return self.rate_limiter.num_requeues(item)
