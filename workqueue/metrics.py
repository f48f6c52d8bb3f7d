"""Workqueue metrics: the provider protocol, the no-op provider and the global provider.

Port of client-go ``util/workqueue/metrics.go``. A queue asks its provider for its metrics once, at
construction. Unnamed queues and queues whose provider is the no-op provider record nothing (and
the queue skips every metric call).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Protocol, runtime_checkable

from workqueue.clock import Clock

__all__ = [
    "CounterMetric",
    "GaugeMetric",
    "HistogramMetric",
    "MetricsProvider",
    "NoopMetricsProvider",
    "SettableGaugeMetric",
    "SummaryMetric",
    "get_provider",
    "set_provider",
]


class GaugeMetric(Protocol):
    """A value that can go up and down."""

    def inc(self) -> None: ...

    def dec(self) -> None: ...


class SettableGaugeMetric(Protocol):
    """A value that can be set."""

    def set(self, value: float) -> None: ...


class CounterMetric(Protocol):
    """A value that only goes up."""

    def inc(self) -> None: ...


class HistogramMetric(Protocol):
    """Counts individual observations."""

    def observe(self, value: float) -> None: ...


SummaryMetric = HistogramMetric


@runtime_checkable
class MetricsProvider(Protocol):
    """Creates the metrics of the queue called ``name`` (Python spelling of client-go's MetricsProvider)."""

    def new_depth_metric(self, name: str) -> GaugeMetric: ...

    def new_adds_metric(self, name: str) -> CounterMetric: ...

    def new_latency_metric(self, name: str) -> HistogramMetric: ...

    def new_work_duration_metric(self, name: str) -> HistogramMetric: ...

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric: ...

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric: ...

    def new_retries_metric(self, name: str) -> CounterMetric: ...


class _NoopMetric:
    def inc(self) -> None:
        pass

    def dec(self) -> None:
        pass

    def set(self, value: float) -> None:
        pass

    def observe(self, value: float) -> None:
        pass


_NOOP_METRIC = _NoopMetric()


class NoopMetricsProvider:
    """A provider whose metrics discard everything; queues using it skip metrics entirely."""

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return _NOOP_METRIC

    def new_adds_metric(self, name: str) -> CounterMetric:
        return _NOOP_METRIC

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return _NOOP_METRIC

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return _NOOP_METRIC

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _NOOP_METRIC

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _NOOP_METRIC

    def new_retries_metric(self, name: str) -> CounterMetric:
        return _NOOP_METRIC


_global_provider: MetricsProvider = NoopMetricsProvider()
_provider_set = False
_provider_lock = threading.Lock()


def set_provider(provider: MetricsProvider) -> None:
    """Set the provider for every queue created afterwards. Only the first call has an effect."""
    global _global_provider, _provider_set
    with _provider_lock:
        if _provider_set:
            return
        _provider_set = True
        _global_provider = provider


def get_provider() -> MetricsProvider:
    """The global provider (the no-op provider until ``set_provider`` is called)."""
    return _global_provider


def _resolve(provider: MetricsProvider | None) -> MetricsProvider:
    return _global_provider if provider is None else provider


class QueueMetrics:
    """Per-queue metric bookkeeping. The caller holds the queue's lock around every call."""

    __slots__ = (
        "_now",
        "depth",
        "adds",
        "latency",
        "work_duration",
        "unfinished_work_seconds",
        "longest_running_processor",
        "add_times",
        "processing_start_times",
    )

    def __init__(self, provider: MetricsProvider, name: str, clock: Clock) -> None:
        self._now = clock.now
        self.depth = provider.new_depth_metric(name)
        self.adds = provider.new_adds_metric(name)
        self.latency = provider.new_latency_metric(name)
        self.work_duration = provider.new_work_duration_metric(name)
        self.unfinished_work_seconds = provider.new_unfinished_work_seconds_metric(name)
        self.longest_running_processor = provider.new_longest_running_processor_seconds_metric(name)
        self.add_times: dict[Hashable, float] = {}
        self.processing_start_times: dict[Hashable, float] = {}

    def add(self, item: Hashable) -> None:
        self.adds.inc()
        self.depth.inc()
        if item not in self.add_times:
            self.add_times[item] = self._now()

    def get(self, item: Hashable) -> None:
        self.depth.dec()
        now = self._now()
        self.processing_start_times[item] = now
        start = self.add_times.pop(item, None)
        if start is not None:
            self.latency.observe(now - start)

    def done(self, item: Hashable) -> None:
        start = self.processing_start_times.pop(item, None)
        if start is not None:
            self.work_duration.observe(self._now() - start)

    def update_unfinished_work(self) -> None:
        now = self._now()
        total = 0.0
        oldest = 0.0
        for start in self.processing_start_times.values():
            age = now - start
            total += age
            if age > oldest:
                oldest = age
        self.unfinished_work_seconds.set(total)
        self.longest_running_processor.set(oldest)


def new_queue_metrics(provider: MetricsProvider | None, name: str, clock: Clock) -> QueueMetrics | None:
    """Metrics for a queue, or None when nothing is to be recorded (unnamed queue or no-op provider)."""
    provider = _resolve(provider)
    if not name or isinstance(provider, NoopMetricsProvider):
        return None
    return QueueMetrics(provider, name, clock)


def new_retry_metric(provider: MetricsProvider | None, name: str) -> CounterMetric | None:
    """The retries counter of a queue, or None when nothing is to be recorded."""
    provider = _resolve(provider)
    if not name or isinstance(provider, NoopMetricsProvider):
        return None
    return provider.new_retries_metric(name)
