"""Port of client-go util/workqueue/metrics_test.go, plus the Prometheus provider."""

from __future__ import annotations

import re
import threading

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from workqueue import DelayingQueue, FakeClock, Queue, RateLimitingQueue, metrics
from workqueue.prometheus import BUCKETS, PrometheusMetricsProvider, exponential_buckets
from workqueue.queue import UNFINISHED_WORK_UPDATE_PERIOD

TIMEOUT = 5.0


class FakeMetric:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.incs = 0
        self.decs = 0
        self.value: float | None = None
        self.observations: list[float] = []
        self.set_event = threading.Event()

    def inc(self) -> None:
        with self.lock:
            self.incs += 1

    def dec(self) -> None:
        with self.lock:
            self.decs += 1

    def set(self, value: float) -> None:
        with self.lock:
            self.value = value
        self.set_event.set()

    def observe(self, value: float) -> None:
        with self.lock:
            self.observations.append(value)

    def gauge(self) -> float:
        with self.lock:
            return float(self.incs - self.decs)


class FakeProvider:
    def __init__(self) -> None:
        self.depth = FakeMetric()
        self.adds = FakeMetric()
        self.latency = FakeMetric()
        self.duration = FakeMetric()
        self.unfinished = FakeMetric()
        self.longest = FakeMetric()
        self.retries = FakeMetric()
        self.names: list[str] = []

    def new_depth_metric(self, name: str) -> FakeMetric:
        self.names.append(name)
        return self.depth

    def new_adds_metric(self, name: str) -> FakeMetric:
        return self.adds

    def new_latency_metric(self, name: str) -> FakeMetric:
        return self.latency

    def new_work_duration_metric(self, name: str) -> FakeMetric:
        return self.duration

    def new_unfinished_work_seconds_metric(self, name: str) -> FakeMetric:
        return self.unfinished

    def new_longest_running_processor_seconds_metric(self, name: str) -> FakeMetric:
        return self.longest

    def new_retries_metric(self, name: str) -> FakeMetric:
        return self.retries


def test_metrics() -> None:
    mp = FakeProvider()
    clock = FakeClock(0.0)
    q = Queue(name="test", metrics_provider=mp, clock=clock)
    try:
        q.add("foo")
        assert mp.adds.incs == 1
        assert mp.depth.gauge() == 1.0
        clock.step(50e-6)

        i, _ = q.get()
        assert i == "foo"
        assert mp.latency.observations == [pytest.approx(5e-05)]

        # add it back while processing; multiple adds of the same item are de-duped
        for _ in range(5):
            q.add(i)
        assert mp.adds.incs == 2
        assert mp.depth.gauge() == 1.0
        clock.step(25e-6)

        q.done(i)
        assert mp.duration.observations == [pytest.approx(2.5e-05)]
        assert mp.depth.gauge() == 1.0

        i, _ = q.get()
        assert i == "foo"
        assert mp.latency.observations[-1] == pytest.approx(2.5e-05)
        assert len(mp.latency.observations) == 2
        assert mp.depth.gauge() == 0.0

        # the periodic updater reports the in-progress item
        clock.step(UNFINISHED_WORK_UPDATE_PERIOD)
        assert mp.unfinished.set_event.wait(TIMEOUT)
        assert mp.longest.set_event.wait(TIMEOUT)
        assert mp.unfinished.value == pytest.approx(0.5)
        assert mp.longest.value == pytest.approx(0.5)

        q.done(i)
        assert mp.duration.observations[-1] == pytest.approx(0.5)
        assert len(mp.duration.observations) == 2
    finally:
        q.shut_down()


def test_unfinished_work_sums_ages_and_takes_max() -> None:
    mp = FakeProvider()
    clock = FakeClock(0.0)
    q = Queue(name="sum", metrics_provider=mp, clock=clock)
    try:
        q.add("a")
        q.add("b")
        q.get()
        clock.step(0.25)
        q.get()
        clock.step(0.25)  # first tick at 0.5: ages 0.5 and 0.25
        assert mp.unfinished.set_event.wait(TIMEOUT)
        assert mp.longest.set_event.wait(TIMEOUT)
        assert mp.unfinished.value == pytest.approx(0.75)
        assert mp.longest.value == pytest.approx(0.5)
    finally:
        q.shut_down()


def test_metric_shutdown() -> None:
    mp = FakeProvider()
    clock = FakeClock(0.0)
    q = Queue(name="test", metrics_provider=mp, clock=clock)
    clock.step(UNFINISHED_WORK_UPDATE_PERIOD)
    assert mp.unfinished.set_event.wait(TIMEOUT)
    updater = q._updater
    q.shut_down()
    assert updater is not None and not updater.is_alive()
    mp.unfinished.set_event.clear()
    clock.step(3600)
    assert not mp.unfinished.set_event.is_set()


def test_unnamed_queue_records_nothing() -> None:
    mp = FakeProvider()
    q = RateLimitingQueue(metrics_provider=mp)
    q.add("a")
    q.add_after("b", 0)
    q.get()
    assert mp.names == []
    assert mp.adds.incs == 0 and mp.retries.incs == 0
    assert q._updater is None
    q.shut_down()


def test_noop_provider_starts_no_updater() -> None:
    q = Queue(name="named", metrics_provider=metrics.NoopMetricsProvider())
    assert q._metrics is None and q._updater is None
    q.shut_down()


def test_retries_counted_on_add_after() -> None:
    mp = FakeProvider()
    clock = FakeClock(0.0)
    q = DelayingQueue(name="retry", metrics_provider=mp, clock=clock)
    try:
        q.add_after("a", 0)  # counts even with no delay
        q.add_after("b", 1.0)
        q.add_after("b", 2.0)
        assert mp.retries.incs == 3
        assert mp.adds.incs == 1
    finally:
        q.shut_down()
    q.add_after("c", 1.0)  # no-op after shutdown, not counted
    assert mp.retries.incs == 3


@pytest.fixture
def fresh_global_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics, "_global_provider", metrics.NoopMetricsProvider())
    monkeypatch.setattr(metrics, "_provider_set", False)


@pytest.mark.usefixtures("fresh_global_provider")
def test_set_provider_first_call_wins() -> None:
    first, second = FakeProvider(), FakeProvider()
    metrics.set_provider(first)
    metrics.set_provider(second)
    assert metrics.get_provider() is first
    q = Queue(name="global")
    q.add("x")
    q.shut_down()
    assert first.adds.incs == 1 and second.adds.incs == 0


@pytest.mark.usefixtures("fresh_global_provider")
def test_explicit_provider_overrides_global() -> None:
    global_mp, own = FakeProvider(), FakeProvider()
    metrics.set_provider(global_mp)
    q = Queue(name="own", metrics_provider=own)
    q.add("x")
    q.shut_down()
    assert own.adds.incs == 1 and global_mp.adds.incs == 0


def _sample(registry: CollectorRegistry, metric: str, **labels: str) -> float | None:
    return registry.get_sample_value(metric, labels)


def test_prometheus_provider() -> None:
    registry = CollectorRegistry()
    provider = PrometheusMetricsProvider(registry)
    clock = FakeClock(0.0)
    q = RateLimitingQueue(name="jobs", metrics_provider=provider, clock=clock)
    other = Queue(name="other", metrics_provider=PrometheusMetricsProvider(registry), clock=clock)
    try:
        q.add("a")
        q.add("b")
        other.add("z")
        clock.step(0.05)
        item, _ = q.get()
        clock.step(2.0)
        q.done(item)
        q.add_after("c", 0)
        q.add_after("d", 5.0)

        assert _sample(registry, "workqueue_adds_total", name="jobs") == 3
        assert _sample(registry, "workqueue_adds_total", name="other") == 1
        assert _sample(registry, "workqueue_depth", name="jobs") == 2
        assert _sample(registry, "workqueue_retries_total", name="jobs") == 2
        assert _sample(registry, "workqueue_queue_duration_seconds_count", name="jobs") == 1
        assert _sample(registry, "workqueue_queue_duration_seconds_sum", name="jobs") == pytest.approx(0.05)
        assert _sample(registry, "workqueue_queue_duration_seconds_bucket", name="jobs", le="0.01") == 0
        assert _sample(registry, "workqueue_queue_duration_seconds_bucket", name="jobs", le="0.1") == 1
        assert _sample(registry, "workqueue_work_duration_seconds_bucket", name="jobs", le="1.0") == 0
        assert _sample(registry, "workqueue_work_duration_seconds_bucket", name="jobs", le="10.0") == 1
        assert _sample(registry, "workqueue_work_duration_seconds_bucket", name="jobs", le="+Inf") == 1
        assert _sample(registry, "workqueue_unfinished_work_seconds", name="jobs") == 0
        assert _sample(registry, "workqueue_longest_running_processor_seconds", name="jobs") == 0

        families = {m.name: m for m in registry.collect()}
        assert families["workqueue_depth"].type == "gauge"
        assert families["workqueue_depth"].documentation == "Current depth of workqueue"
        assert families["workqueue_adds"].type == "counter"
        assert families["workqueue_retries"].type == "counter"
        assert families["workqueue_queue_duration_seconds"].type == "histogram"
        assert families["workqueue_work_duration_seconds"].type == "histogram"
        assert families["workqueue_unfinished_work_seconds"].type == "gauge"
        assert families["workqueue_longest_running_processor_seconds"].type == "gauge"
        bounds = [
            float(s.labels["le"])
            for s in families["workqueue_queue_duration_seconds"].samples
            if s.name.endswith("_bucket") and s.labels["name"] == "jobs"
        ]
        assert bounds[:-1] == pytest.approx([1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0])
        assert bounds[-1] == float("inf")
        assert list(BUCKETS) == pytest.approx([10.0**e for e in range(-8, 2)])
        # Go's ExponentialBuckets multiplies step by step, so two bounds are not the decimal literals: the `le`
        # labels must read exactly as client-go exposes them.
        exposed = generate_latest(registry).decode()
        les = re.findall(r'workqueue_queue_duration_seconds_bucket\{le="([^"]+)",name="jobs"\}', exposed)
        assert les == ["1e-08", "1e-07", "1e-06", "9.999999999999999e-06", "9.999999999999999e-05", "0.001",
                       "0.01", "0.1", "1.0", "10.0", "+Inf"]
    finally:
        q.shut_down()
        other.shut_down()


def test_prometheus_unfinished_gauges_updated() -> None:
    registry = CollectorRegistry()
    clock = FakeClock(0.0)
    q = Queue(name="slow", metrics_provider=PrometheusMetricsProvider(registry), clock=clock)
    try:
        q.add("a")
        q.get()
        clock.step(UNFINISHED_WORK_UPDATE_PERIOD)
        pause = threading.Event()
        for _ in range(int(TIMEOUT / 0.001)):
            if _sample(registry, "workqueue_longest_running_processor_seconds", name="slow"):
                break
            pause.wait(0.001)
        assert _sample(registry, "workqueue_unfinished_work_seconds", name="slow") == pytest.approx(0.5)
        assert _sample(registry, "workqueue_longest_running_processor_seconds", name="slow") == (
            pytest.approx(0.5)
        )
    finally:
        q.shut_down()


def test_exponential_buckets_multiply_step_by_step():
    assert exponential_buckets(1, 2, 4) == (1, 2, 4, 8)
    assert exponential_buckets(10e-9, 10, 10)[3] == 1e-8 * 10 * 10 * 10 != 1e-5
    for bad in ((0, 10, 3), (1, 1, 3), (1, 10, 0)):
        with pytest.raises(ValueError, match="exponential_buckets"):
            exponential_buckets(*bad)


class _PerEventProvider:
    """The Prometheus provider's metrics without its batching hook: every event reaches Prometheus at once."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._inner = PrometheusMetricsProvider(registry)

    def __getattr__(self, attr: str) -> object:
        if attr == "new_queue_metrics":
            raise AttributeError(attr)
        return getattr(self._inner, attr)


def _drive(q: Queue, clock: FakeClock) -> None:
    """Adds, duplicate adds, re-adds while processing; durations on and between bucket bounds."""
    for i, step in enumerate([0.0, 1e-9, 1e-8, 3e-6, 0.1, 0.5, 1.0, 10.0, 20.0]):
        q.add(f"k{i}")
        q.add(f"k{i}")
        clock.step(step)
        item, _ = q.get()
        q.add(item)  # while processing: queued again at done
        clock.step(step / 2)
        q.done(item)
    while len(q):
        item, _ = q.get()
        clock.step(0.01)
        q.done(item)
    q.add("left-waiting")


def _exposition(registry: CollectorRegistry) -> list[str]:
    return [line for line in generate_latest(registry).decode().splitlines()
            if line.startswith("workqueue_") and "_created{" not in line]


def test_prometheus_batched_metrics_equal_per_event_metrics() -> None:
    batched_registry, per_event_registry = CollectorRegistry(), CollectorRegistry()
    clock, per_event_clock = FakeClock(0.0), FakeClock(0.0)  # the same durations, to the last bit
    batched = Queue(name="q", metrics_provider=PrometheusMetricsProvider(batched_registry), clock=clock)
    per_event = Queue(name="q", metrics_provider=_PerEventProvider(per_event_registry), clock=per_event_clock)
    try:
        assert type(batched._metrics).__name__ == "PrometheusQueueMetrics"
        assert type(per_event._metrics) is metrics.QueueMetrics
        _drive(batched, clock)
        _drive(per_event, per_event_clock)
        exact = [line for line in _exposition(per_event_registry) if "_sum{" not in line]
        assert [line for line in _exposition(batched_registry) if "_sum{" not in line] == exact
        assert len(exact) == 2 * 12 + 4  # two histograms (11 buckets + count), depth, adds and the two gauges
        for histogram in ("workqueue_queue_duration_seconds_sum", "workqueue_work_duration_seconds_sum"):
            per_event_sum = _sample(per_event_registry, histogram, name="q")
            assert per_event_sum and _sample(batched_registry, histogram, name="q") == pytest.approx(per_event_sum)
        assert _sample(batched_registry, "workqueue_depth", name="q") == 1
        assert _sample(batched_registry, "workqueue_adds_total", name="q") == 19
        assert _sample(batched_registry, "workqueue_queue_duration_seconds_count", name="q") == 18
    finally:
        batched.shut_down()
        per_event.shut_down()


def test_prometheus_buffered_observations_stay_bounded_and_exact() -> None:
    """Observations are folded into bucket counts every OBSERVATIONS_FOLDED_AT items, between flushes too, and the
    result equals one observe per event."""
    batched_registry, per_event_registry = CollectorRegistry(), CollectorRegistry()
    clock, per_event_clock = FakeClock(0.0), FakeClock(0.0)
    batched = Queue(name="q", metrics_provider=PrometheusMetricsProvider(batched_registry), clock=clock)
    per_event = Queue(name="q", metrics_provider=_PerEventProvider(per_event_registry), clock=per_event_clock)
    batched._stop_updater(join=True)  # no unfinished-work tick (a flush) as the clock steps: folds come from done
    recorder = batched._metrics
    assert isinstance(recorder, metrics.BufferedQueueMetricsRecorder)
    items = 3 * metrics.OBSERVATIONS_FOLDED_AT + 7
    steps = [0.0, 2e-8, 5e-7, 3e-5, 0.002, 0.4, 7.0, 12.0]  # every bucket, the last one included
    try:
        for q, c in ((batched, clock), (per_event, per_event_clock)):
            for i in range(items):
                q.add(i)
                c.step(steps[i % len(steps)])
                item, _ = q.get()
                c.step(steps[(i + 3) % len(steps)])
                q.done(item)
                if q is batched:
                    assert len(recorder.work_durations) < metrics.OBSERVATIONS_FOLDED_AT
                    assert len(recorder.latencies) <= metrics.OBSERVATIONS_FOLDED_AT
        assert len(recorder.work_durations) == 7 and len(recorder.latencies) == 7  # the items since the last fold
        def counted(registry: CollectorRegistry) -> list[str]:  # the gauges of unfinished work are sampled by time
            return [line for line in _exposition(registry) if "_sum{" not in line and "_seconds{" not in line]

        exact = counted(per_event_registry)
        assert counted(batched_registry) == exact
        assert len(exact) == 2 * 12 + 2  # two histograms (11 buckets + count), depth and adds
        assert recorder.latencies == [] and recorder.work_durations == []  # the scrape folded the rest
        assert _sample(batched_registry, "workqueue_work_duration_seconds_count", name="q") == items
        for histogram in ("workqueue_queue_duration_seconds_sum", "workqueue_work_duration_seconds_sum"):
            assert _sample(batched_registry, histogram, name="q") == pytest.approx(
                _sample(per_event_registry, histogram, name="q"))
    finally:
        batched.shut_down()
        per_event.shut_down()


def test_prometheus_metrics_reach_prometheus_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hot path makes no Prometheus call per event; a collection (also of a restricted registry) publishes
    everything recorded before it."""
    registry = CollectorRegistry()
    clock = FakeClock(0.0)
    q = Queue(name="batched", metrics_provider=PrometheusMetricsProvider(registry), clock=clock)
    calls = []
    value_class = type(registry._names_to_collectors["workqueue_depth"].labels(name="batched")._value)
    for method in ("inc", "set"):
        original = getattr(value_class, method)

        def counting(self: object, *args: object, _original=original, _method=method) -> None:
            calls.append(_method)
            _original(self, *args)

        monkeypatch.setattr(value_class, method, counting)
    try:
        for i in range(100):
            q.add(i)
            clock.step(0.001)
            item, _ = q.get()
            q.done(item)
        assert calls == []
        restricted = registry.restricted_registry(["workqueue_adds_total", "workqueue_queue_duration_seconds_count"])
        exposed = generate_latest(restricted).decode()
        assert 'workqueue_adds_total{name="batched"} 100.0' in exposed
        assert 'workqueue_queue_duration_seconds_count{name="batched"} 100.0' in exposed
        assert 0 < len(calls) < 30  # one publication per counter, gauge and histogram bucket, not one per event
    finally:
        q.shut_down()


def test_prometheus_metrics_exact_under_concurrent_scrapes() -> None:
    registry = CollectorRegistry()
    q = Queue(name="busy", metrics_provider=PrometheusMetricsProvider(registry))
    items, workers = 20_000, 4
    stop = threading.Event()

    def scrape() -> None:
        while not stop.is_set():
            generate_latest(registry)

    def work() -> None:
        while True:
            item, shutdown = q.get()
            if shutdown:
                return
            q.done(item)

    threads = [threading.Thread(target=work) for _ in range(workers)]
    scraper = threading.Thread(target=scrape)
    for t in (*threads, scraper):
        t.start()
    for i in range(items):
        q.add(i)
    q.shut_down()
    for t in threads:
        t.join(TIMEOUT)
    stop.set()
    scraper.join(TIMEOUT)
    assert _sample(registry, "workqueue_adds_total", name="busy") == items
    assert _sample(registry, "workqueue_depth", name="busy") == 0
    assert _sample(registry, "workqueue_queue_duration_seconds_count", name="busy") == items
    assert _sample(registry, "workqueue_work_duration_seconds_count", name="busy") == items
    assert _sample(registry, "workqueue_work_duration_seconds_bucket", name="busy", le="+Inf") == items
