"""Prometheus metrics for work queues (port of component-base ``metrics/prometheus/workqueue``).

Exposes ``workqueue_depth``, ``workqueue_adds_total``, ``workqueue_queue_duration_seconds``,
``workqueue_work_duration_seconds``, ``workqueue_unfinished_work_seconds``,
``workqueue_longest_running_processor_seconds`` and ``workqueue_retries_total``, labelled ``name``.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from workqueue.metrics import CounterMetric, GaugeMetric, HistogramMetric, SettableGaugeMetric

__all__ = ["BUCKETS", "PrometheusMetricsProvider", "exponential_buckets"]


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """Go's ``prometheus.ExponentialBuckets``: each bound is the previous one times ``factor``, multiplied step by
    step (not ``start * factor**i``), so the float values, and the exposed ``le`` labels, are client-go's."""
    if count < 1 or start <= 0 or factor <= 1:
        raise ValueError(f"exponential_buckets needs count >= 1, start > 0, factor > 1 (got {start}, {factor}, {count})")
    bounds = []
    for _ in range(count):
        bounds.append(start)
        start *= factor
    return tuple(bounds)


BUCKETS: tuple[float, ...] = exponential_buckets(10e-9, 10, 10)
"""client-go's ``ExponentialBuckets(10e-9, 10, 10)``: 1e-8 … 10 seconds (two bounds read ``9.999999999999999e-06``
and ``9.999999999999999e-05``, as in Go)."""


class _Families:
    """The seven metric families, registered once per registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ["name"]
        self.depth = Gauge(
            "depth", "Current depth of workqueue", labels, subsystem="workqueue", registry=registry
        )
        self.adds = Counter(
            "adds_total",
            "Total number of adds handled by workqueue",
            labels,
            subsystem="workqueue",
            registry=registry,
        )
        self.latency = Histogram(
            "queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested.",
            labels,
            subsystem="workqueue",
            buckets=BUCKETS,
            registry=registry,
        )
        self.work_duration = Histogram(
            "work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            labels,
            subsystem="workqueue",
            buckets=BUCKETS,
            registry=registry,
        )
        self.unfinished = Gauge(
            "unfinished_work_seconds",
            "How many seconds of work has done that is in progress and hasn't been observed by "
            "work_duration. Large values indicate stuck threads. One can deduce the number of "
            "stuck threads by observing the rate at which this increases.",
            labels,
            subsystem="workqueue",
            registry=registry,
        )
        self.longest = Gauge(
            "longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            labels,
            subsystem="workqueue",
            registry=registry,
        )
        self.retries = Counter(
            "retries_total",
            "Total number of retries handled by workqueue",
            labels,
            subsystem="workqueue",
            registry=registry,
        )


_families_lock = threading.Lock()
_families_by_registry: weakref.WeakKeyDictionary[CollectorRegistry, _Families] = weakref.WeakKeyDictionary()


def _families_for(registry: CollectorRegistry) -> _Families:
    with _families_lock:
        families = _families_by_registry.get(registry)
        if families is None:
            families = _Families(registry)
            _families_by_registry[registry] = families
        return families


class PrometheusMetricsProvider:
    """A ``MetricsProvider`` backed by prometheus_client (default registry: ``prometheus_client.REGISTRY``).

    One instance serves any number of queues (each gets the children labelled with its name), and
    several instances on the same registry share the same metric families.
    """

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = REGISTRY if registry is None else registry
        self._families = _families_for(self.registry)

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return self._families.depth.labels(name=name)

    def new_adds_metric(self, name: str) -> CounterMetric:
        return self._families.adds.labels(name=name)

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return self._families.latency.labels(name=name)

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return self._families.work_duration.labels(name=name)

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self._families.unfinished.labels(name=name)

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self._families.longest.labels(name=name)

    def new_retries_metric(self, name: str) -> CounterMetric:
        return self._families.retries.labels(name=name)

    def families(self) -> dict[str, Any]:
        """The underlying prometheus_client metric families, by exposed name."""
        f = self._families
        return {
            "workqueue_depth": f.depth,
            "workqueue_adds_total": f.adds,
            "workqueue_queue_duration_seconds": f.latency,
            "workqueue_work_duration_seconds": f.work_duration,
            "workqueue_unfinished_work_seconds": f.unfinished,
            "workqueue_longest_running_processor_seconds": f.longest,
            "workqueue_retries_total": f.retries,
        }
