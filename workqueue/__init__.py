"""Port of client-go ``util/workqueue`` (release-1.32): fair, stingy work queues for controllers.

``Queue`` (add/get/done), ``DelayingQueue`` (+ ``add_after``), ``RateLimitingQueue``
(+ ``add_rate_limited``/``forget``/``num_requeues``), the rate limiters, and pluggable metrics
(``workqueue.metrics.set_provider``; ``PrometheusMetricsProvider`` in ``workqueue.prometheus``).
"""

from workqueue import metrics
from workqueue.clock import Clock, FakeClock, RealClock
from workqueue.delaying_queue import DelayingQueue
from workqueue.metrics import MetricsProvider, NoopMetricsProvider, set_provider
from workqueue.queue import Queue
from workqueue.rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
    default_item_based_rate_limiter,
)
from workqueue.rate_limiting_queue import RateLimitingQueue

__all__ = [
    "BucketRateLimiter",
    "Clock",
    "DelayingQueue",
    "FakeClock",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "NoopMetricsProvider",
    "PrometheusMetricsProvider",
    "Queue",
    "RateLimiter",
    "RateLimitingQueue",
    "RealClock",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
    "metrics",
    "set_provider",
]


def __getattr__(name: str) -> object:
    # prometheus_client is imported only when the Prometheus provider is asked for.
    if name == "PrometheusMetricsProvider":
        from workqueue.prometheus import PrometheusMetricsProvider

        return PrometheusMetricsProvider
    raise AttributeError(f"module 'workqueue' has no attribute {name!r}")
