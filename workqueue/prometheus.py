"""Prometheus metrics for work queues (port of component-base ``metrics/prometheus/workqueue``).

Exposes ``workqueue_depth``, ``workqueue_adds_total``, ``workqueue_queue_duration_seconds``,
``workqueue_work_duration_seconds``, ``workqueue_unfinished_work_seconds``,
``workqueue_longest_running_processor_seconds`` and ``workqueue_retries_total``, labelled ``name``.
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_right
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.metrics_core import Metric

from workqueue.clock import Clock
from workqueue.metrics import (
    OBSERVATIONS_FOLDED_AT,
    CounterMetric,
    GaugeMetric,
    HistogramMetric,
    SettableGaugeMetric,
    clock_reader,
    unfinished_work,
)

__all__ = ["BUCKETS", "PrometheusMetricsProvider", "PrometheusQueueMetrics", "exponential_buckets"]


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


_BOUNDS: tuple[float, ...] = (*BUCKETS, float("inf"))


class _FlushedBeforeCollect:
    """Mixed into the families: queues' batched counts are published before a family is read."""

    before_collect: Callable[[], None] | None = None

    def collect(self) -> Iterable[Metric]:
        if self.before_collect is not None:
            self.before_collect()
        return super().collect()  # type: ignore[misc, no-any-return]


class _Gauge(_FlushedBeforeCollect, Gauge):
    pass


class _Counter(_FlushedBeforeCollect, Counter):
    pass


class _Histogram(_FlushedBeforeCollect, Histogram):
    def add_counts(self, counts: list[int], total: float) -> None:
        """Publish observations already sorted into the buckets (one count per bound of ``_BOUNDS``) and their sum:
        what ``observe`` would have recorded for each of them."""
        self._sum.inc(total)
        for bucket, n in zip(self._buckets, counts, strict=True):
            if n:
                bucket.inc(n)


class _Families:
    """The seven metric families, registered once per registry, and the queues that record into them."""

    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ["name"]
        self._queues: weakref.WeakSet[PrometheusQueueMetrics] = weakref.WeakSet()
        self._queues_lock = threading.Lock()
        self.depth = _Gauge(
            "depth", "Current depth of workqueue", labels, subsystem="workqueue", registry=registry
        )
        self.adds = _Counter(
            "adds_total",
            "Total number of adds handled by workqueue",
            labels,
            subsystem="workqueue",
            registry=registry,
        )
        self.latency = _Histogram(
            "queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested.",
            labels,
            subsystem="workqueue",
            buckets=BUCKETS,
            registry=registry,
        )
        self.work_duration = _Histogram(
            "work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            labels,
            subsystem="workqueue",
            buckets=BUCKETS,
            registry=registry,
        )
        self.unfinished = _Gauge(
            "unfinished_work_seconds",
            "How many seconds of work has done that is in progress and hasn't been observed by "
            "work_duration. Large values indicate stuck threads. One can deduce the number of "
            "stuck threads by observing the rate at which this increases.",
            labels,
            subsystem="workqueue",
            registry=registry,
        )
        self.longest = _Gauge(
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
        for family in (self.depth, self.adds, self.latency, self.work_duration, self.unfinished, self.longest):
            family.before_collect = self.flush

    def track(self, queue_metrics: PrometheusQueueMetrics) -> None:
        with self._queues_lock:
            self._queues.add(queue_metrics)

    def flush(self) -> None:
        """Publish what every live queue has recorded so far."""
        with self._queues_lock:
            queues = list(self._queues)
        for queue_metrics in queues:
            queue_metrics.flush()


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

    def new_queue_metrics(self, name: str, clock: Clock, lock: threading.Lock,
                          depth: Callable[[], int]) -> PrometheusQueueMetrics:
        """The bookkeeping of the queue ``name`` whose lock is ``lock`` and which holds ``depth()`` items needing
        processing (see ``PrometheusQueueMetrics``)."""
        queue_metrics = PrometheusQueueMetrics(self._families, name, clock, lock, depth)
        self._families.track(queue_metrics)
        return queue_metrics

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


def _fold_into(observations: list[float], counts: list[int]) -> float:
    """Count ``observations`` in the buckets of ``_BOUNDS`` (each in the first bound >= it, as ``observe``), empty
    the list in place, and return their sum."""
    total = sum(observations)
    observations.sort()
    below = 0
    for i, bound in enumerate(_BOUNDS):
        upto = bisect_right(observations, bound)  # observations <= bound
        counts[i] += upto - below
        below = upto
    observations.clear()
    return total


class PrometheusQueueMetrics:
    """One queue's metrics for ``PrometheusMetricsProvider``, at a fraction of the cost of a Prometheus call per event.

    A ``BufferedQueueMetricsRecorder``: under the queue's lock, an add only reads the clock, and a get and a done
    append one duration to a list (the queue does it itself, with no call in between); ``fold`` counts the buffered
    durations in their buckets, in plain ints, every ``OBSERVATIONS_FOLDED_AT`` items and at every flush. ``flush``
    publishes to the Prometheus children exactly what one ``inc``/``dec``/``observe`` per event would have recorded:
    the depth is the number of items the queue holds as needing processing (``depth()``, what client-go's inc at add
    and dec at get count), and the adds since the last flush are the depth's change plus the gets (every get observes
    one queue latency). Flushed before every collection of the families, at every unfinished-work tick
    (``UNFINISHED_WORK_UPDATE_PERIOD``) and when the queue shuts down, so a scrape sees every operation that
    completed before it.
    """

    __slots__ = (
        "__weakref__",
        "add",
        "now",
        "latencies",
        "work_durations",
        "_lock",
        "_depth",
        "_publish_lock",
        "_depth_gauge",
        "_adds_counter",
        "_latency_histogram",
        "_work_histogram",
        "_unfinished_gauge",
        "_longest_gauge",
        "_published_depth",
        "_untimed_gets",
        "_latency_counts",
        "_latency_sum",
        "_work_counts",
        "_work_sum",
        "_unfinished",
    )

    def __init__(self, families: _Families, name: str, clock: Clock, lock: threading.Lock,
                 depth: Callable[[], int]) -> None:
        self.now = clock_reader(clock)
        self.add: Callable[[], float] = self.now  # an add only needs its time (see the class doc)
        self.latencies: list[float] = []
        self.work_durations: list[float] = []
        self._lock = lock
        self._depth = depth
        self._publish_lock = threading.Lock()  # one flush at a time, so gauges are set in order
        self._depth_gauge = families.depth.labels(name=name)
        self._adds_counter = families.adds.labels(name=name)
        self._latency_histogram = families.latency.labels(name=name)
        self._work_histogram = families.work_duration.labels(name=name)
        self._unfinished_gauge = families.unfinished.labels(name=name)
        self._longest_gauge = families.longest.labels(name=name)
        self._published_depth = 0
        self._untimed_gets = 0  # gets of an item with no add time (none, as the queue records one for every add)
        self._latency_counts = [0] * len(_BOUNDS)
        self._latency_sum = 0.0
        self._work_counts = [0] * len(_BOUNDS)
        self._work_sum = 0.0
        self._unfinished: tuple[float, float] | None = None

    def get(self, added_at: float | None) -> float:
        now = self.now()
        if added_at is not None:
            self.latencies.append(now - added_at)
        else:
            self._untimed_gets += 1
        return now

    def done(self, started_at: float) -> None:
        work_durations = self.work_durations
        work_durations.append(self.now() - started_at)
        if len(work_durations) >= OBSERVATIONS_FOLDED_AT:
            self.fold()

    def fold(self) -> None:
        if self.latencies:
            self._latency_sum += _fold_into(self.latencies, self._latency_counts)
        if self.work_durations:
            self._work_sum += _fold_into(self.work_durations, self._work_counts)

    def update_unfinished_work(self, started_at: Iterable[float | None]) -> None:
        self._unfinished = unfinished_work(started_at, self.now())

    def flush(self) -> None:
        """Publish what was recorded since the last flush. Takes the queue's lock: never call it holding that."""
        with self._publish_lock:
            with self._lock:
                self.fold()
                depth = self._depth()
                depth_change = depth - self._published_depth
                self._published_depth = depth
                latency_counts, latency_sum = self._latency_counts, self._latency_sum
                observed = sum(latency_counts)
                gets = observed + self._untimed_gets
                self._untimed_gets = 0
                if observed:
                    self._latency_counts, self._latency_sum = [0] * len(_BOUNDS), 0.0
                work_counts, work_sum = self._work_counts, self._work_sum
                if any(work_counts):
                    self._work_counts, self._work_sum = [0] * len(_BOUNDS), 0.0
                else:
                    work_counts = []
                unfinished, self._unfinished = self._unfinished, None
            adds = depth_change + gets
            if adds:
                self._adds_counter.inc(adds)
            if depth_change:
                self._depth_gauge.inc(depth_change)
            if observed:
                self._latency_histogram.add_counts(latency_counts, latency_sum)
            if work_counts:
                self._work_histogram.add_counts(work_counts, work_sum)
            if unfinished is not None:
                self._unfinished_gauge.set(unfinished[0])
                self._longest_gauge.set(unfinished[1])
