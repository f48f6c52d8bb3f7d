"""Workqueue metrics: the provider protocol, the no-op provider and the global provider.

Port of client-go ``util/workqueue/metrics.go``. A queue asks its provider for its metrics once, at
construction. Unnamed queues and queues whose provider is the no-op provider record nothing (and
the queue skips every metric call).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

from workqueue.clock import Clock, RealClock

__all__ = [
    "CounterMetric",
    "GaugeMetric",
    "HistogramMetric",
    "MetricsProvider",
    "NoopMetricsProvider",
    "SettableGaugeMetric",
    "SummaryMetric",
    "BufferedQueueMetricsRecorder",
    "OBSERVATIONS_FOLDED_AT",
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


def clock_reader(clock: Clock) -> Callable[[], float]:
    """``clock.now``, or ``time.monotonic`` itself for the real clock (no Python frame per read: queues with metrics
    read the clock three times per item)."""
    return time.monotonic if type(clock) is RealClock else clock.now


class QueueMetrics:
    """Per-queue metric bookkeeping for any provider: every call reaches the provider's metrics at once.

    The queue keeps the times (when each waiting item was added, since when each item is processed) and hands them
    in; it holds its lock around every call but ``flush``."""

    __slots__ = (
        "_now",
        "depth",
        "adds",
        "latency",
        "work_duration",
        "unfinished_work_seconds",
        "longest_running_processor",
    )

    def __init__(self, provider: MetricsProvider, name: str, clock: Clock) -> None:
        self._now = clock_reader(clock)
        self.depth = provider.new_depth_metric(name)
        self.adds = provider.new_adds_metric(name)
        self.latency = provider.new_latency_metric(name)
        self.work_duration = provider.new_work_duration_metric(name)
        self.unfinished_work_seconds = provider.new_unfinished_work_seconds_metric(name)
        self.longest_running_processor = provider.new_longest_running_processor_seconds_metric(name)

    def add(self) -> float:
        """An item needs processing (it was not waiting yet); returns the time it was added."""
        self.adds.inc()
        self.depth.inc()
        return self._now()

    def get(self, added_at: float | None) -> float:
        """An item added at ``added_at`` was handed out; returns the time its processing started."""
        self.depth.dec()
        now = self._now()
        if added_at is not None:
            self.latency.observe(now - added_at)
        return now

    def done(self, started_at: float) -> None:
        """The processing that started at ``started_at`` is done."""
        self.work_duration.observe(self._now() - started_at)

    def update_unfinished_work(self, started_at: Iterable[float | None]) -> None:
        """``started_at``: when the processing of every item being processed started."""
        total, oldest = unfinished_work(started_at, self._now())
        self.unfinished_work_seconds.set(total)
        self.longest_running_processor.set(oldest)

    def flush(self) -> None:
        """Nothing is held back here."""


def unfinished_work(started_at: Iterable[float | None], now: float) -> tuple[float, float]:
    """The summed and the longest age of the items being processed."""
    total = 0.0
    oldest = 0.0
    for start in started_at:
        if start is None:
            continue
        age = now - start
        total += age
        if age > oldest:
            oldest = age
    return total, oldest


class QueueMetricsRecorder(Protocol):
    """What a queue calls (see ``QueueMetrics``): everything but ``flush`` under the queue's lock."""

    def add(self) -> float: ...

    def get(self, added_at: float | None) -> float: ...

    def done(self, started_at: float) -> None: ...

    def update_unfinished_work(self, started_at: Iterable[float | None]) -> None: ...

    def flush(self) -> None: ...


OBSERVATIONS_FOLDED_AT = 1024
"""A buffered recorder holds at most about this many work durations (and as many queue durations, plus one per item
being processed) before the queue has it fold them into its counts."""


@runtime_checkable
class BufferedQueueMetricsRecorder(QueueMetricsRecorder, Protocol):
    """A recorder whose observations the queue appends itself, under its lock, without a call into the recorder (the
    queue's hot path): ``now()`` reads the clock, ``latencies`` and ``work_durations`` collect the queue and work
    durations observed since the last ``fold()``. The queue calls ``fold()`` once ``work_durations`` holds
    ``OBSERVATIONS_FOLDED_AT``; ``fold`` empties both lists in place."""

    now: Callable[[], float]
    latencies: list[float]
    work_durations: list[float]

    def fold(self) -> None: ...


class BatchingMetricsProvider(Protocol):
    """A provider that also builds a queue's whole bookkeeping itself (``PrometheusMetricsProvider`` does, to count
    in plain ints under the queue's lock and publish in batches); ``lock`` is the queue's lock, ``depth()`` the
    number of items it holds as needing processing (client-go's depth gauge)."""

    def new_queue_metrics(self, name: str, clock: Clock, lock: threading.Lock,
                          depth: Callable[[], int]) -> QueueMetricsRecorder: ...


def new_queue_metrics(provider: MetricsProvider | None, name: str, clock: Clock, lock: threading.Lock | None = None,
                      depth: Callable[[], int] | None = None) -> QueueMetricsRecorder | None:
    """Metrics for a queue, or None when nothing is to be recorded (unnamed queue or no-op provider). ``lock`` and
    ``depth`` are the queue's lock and item count (needed by a provider with ``new_queue_metrics``)."""
    provider = _resolve(provider)
    if not name or isinstance(provider, NoopMetricsProvider):
        return None
    batching = getattr(provider, "new_queue_metrics", None)
    if batching is not None and lock is not None and depth is not None:
        return batching(name, clock, lock, depth)  # type: ignore[no-any-return]
    return QueueMetrics(provider, name, clock)


def new_retry_metric(provider: MetricsProvider | None, name: str) -> CounterMetric | None:
    """The retries counter of a queue, or None when nothing is to be recorded."""
    provider = _resolve(provider)
    if not name or isinstance(provider, NoopMetricsProvider):
        return None
    return provider.new_retries_metric(name)
