"""reconcile.Controller: what a sync's Result and errors do to its key, the worker guarantees (stingy, restart,
bounded drain), cache waiting, and the metrics it reports. Delays run on ``workqueue.FakeClock``."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from testkit import wait_for
from testkit.logs import capture_library_logs

from apis import errors
from reconcile import (
    Controller,
    PrometheusControllerMetrics,
    Reconciler,
    Result,
    RetryableError,
    SednaBackoff,
    TerminalError,
)
from workqueue import FakeClock, ItemExponentialFailureRateLimiter


class RecordingMetrics:
    def __init__(self, fail_first_observe: bool = False) -> None:
        self.results: Counter[str] = Counter()
        self.restarts = 0
        self._fail = fail_first_observe

    def observe_sync(self, controller: str, result: str, seconds: float) -> None:
        if self._fail:
            self._fail = False
            raise RuntimeError("metrics backend bug")
        self.results[result] += 1

    def worker_restarted(self, controller: str) -> None:
        self.restarts += 1


@pytest.fixture
def made() -> Iterator[Callable[..., Controller[Any]]]:
    controllers: list[Controller[Any]] = []

    def make(sync: Any, **options: Any) -> Controller[Any]:
        options.setdefault("rate_limiter", ItemExponentialFailureRateLimiter(1.0, 60.0))
        c: Controller[Any] = Controller("Demo", sync, **options)
        controllers.append(c)
        return c

    yield make
    for c in controllers:
        c.queue.shut_down()


def queued(c: Controller[Any]) -> list[Any]:
    """The keys ready in the queue now (taken and handed back)."""
    keys = []
    while len(c.queue):
        key, _ = c.queue.get()
        keys.append(key)
    for key in keys:
        c.queue.done(key)
        c.queue.add(key)
    return keys


# -- what a sync's outcome does to its key ------------------------------------------------------------------------------
def test_none_and_an_empty_result_forget_the_keys_history(made):
    c = made(lambda key: None)
    c.queue.rate_limiter.when("ns/a")
    assert c.queue.num_requeues("ns/a") == 1
    assert c.process("ns/a") == "success"
    assert c.queue.num_requeues("ns/a") == 0 and len(c.queue) == 0


def test_requeue_after_syncs_again_after_that_delay(made):
    clock = FakeClock()
    c = made(lambda key: Result(requeue_after=5.0), clock=clock)
    c.process("ns/a")
    assert len(c.queue) == 0 and c.queue.num_requeues("ns/a") == 0
    clock.step(4.9)
    assert len(c.queue) == 0  # the waiting thread never hands an item over early: it is not due
    clock.step(0.1)
    wait_for("the key due", lambda: queued(c) == ["ns/a"], timeout=5)


def test_requeue_is_rate_limited_and_keeps_the_history(made):
    clock = FakeClock()
    c = made(lambda key: Result(requeue=True), clock=clock)
    c.process("ns/a")
    c.process("ns/a")
    assert c.queue.num_requeues("ns/a") == 2  # waits of 1 s, then 2 s: the history grows
    clock.step(2.0)
    wait_for("the key due", lambda: queued(c) == ["ns/a"], timeout=5)


def test_forget_false_keeps_the_history_without_requeueing(made):
    c = made(lambda key: Result(forget=False))
    c.queue.rate_limiter.when("ns/a")
    c.process("ns/a")
    assert c.queue.num_requeues("ns/a") == 1 and len(c.queue) == 0


def test_a_retryable_error_is_retried_after_its_own_delay(made):
    clock = FakeClock()
    c = made(lambda key: (_ for _ in ()).throw(RetryableError("bucket not there yet", delay=30.0)), clock=clock)
    with capture_library_logs() as logs:
        assert c.process("ns/a") == "error"
    (line,) = [e for e in logs if e["event"] == "sync failed, requeueing"]
    assert (line["retry_in"], line["error"], line["error_type"]) == (30.0, "bucket not there yet", "RetryableError")
    assert "exc_info" not in line and c.failures("ns/a") == 1
    clock.step(29.0)
    assert len(c.queue) == 0
    clock.step(1.0)
    wait_for("the retry due", lambda: queued(c) == ["ns/a"], timeout=5)


def test_a_retryable_error_without_delay_is_rate_limited(made):
    c = made(lambda key: (_ for _ in ()).throw(RetryableError("later")), clock=FakeClock())
    c.process("ns/a")
    c.process("ns/a")
    assert c.queue.num_requeues("ns/a") == 2


def test_a_terminal_error_is_logged_once_forgotten_and_never_retried(made):
    clock = FakeClock()
    c = made(lambda key: (_ for _ in ()).throw(TerminalError("spec.url: not a URL")), clock=clock)
    c.queue.rate_limiter.when("ns/a")
    with capture_library_logs() as logs:
        assert c.process("ns/a") == "terminal"
    (line,) = [e for e in logs if e["key"] == "ns/a" and e["log_level"] == "error"]
    assert line["event"] == "sync failed for good, not retried" and line["error"] == "spec.url: not a URL"
    assert c.queue.num_requeues("ns/a") == 0 and c.failures("ns/a") == 0
    clock.step(3600.0)
    assert not clock.has_waiters() and len(c.queue) == 0  # nothing was scheduled at all


def test_any_other_exception_is_retried_without_limit_and_logged_at_a_bounded_rate(made):
    now = [1000.0]
    c = made(lambda key: (_ for _ in ()).throw(errors.ForbiddenError(403, "Forbidden", "quota")), clock=FakeClock())
    c.failure_log.clock = lambda: now[0]
    with capture_library_logs() as logs:
        for _ in range(10):
            assert c.process("ns/a") == "error"
        now[0] += c.failure_log.interval
        c.process("ns/a")
    lines = [e for e in logs if e["event"] == "sync failed, requeueing"]
    assert [(e["failures"], e["suppressed"]) for e in lines] == [(1, 0), (11, 9)]
    assert (lines[0]["status_code"], lines[0]["reason"], lines[0]["error"]) == (403, "Forbidden", "quota")
    assert "exc_info" not in lines[0]


def test_max_retries_drops_the_key_with_a_log_line(made):
    bug = KeyError("spec")
    c = made(lambda key: (_ for _ in ()).throw(bug), max_retries=1, clock=FakeClock())
    with capture_library_logs() as logs:
        assert [c.process("ns/a"), c.process("ns/a")] == ["error", "dropped"]
    dropped = [e for e in logs if e["event"] == "sync failed too often, dropping key"]
    assert dropped[0]["failures"] == 2 and dropped[0]["error"] == str(bug) and "status_code" not in dropped[0]
    assert c.queue.num_requeues("ns/a") == 0 and c.failures("ns/a") == 0


def test_a_success_after_failures_is_logged_once(made):
    outcomes: list[Exception | None] = [ConnectionRefusedError("refused"), None]

    def sync(key: str) -> None:
        exc = outcomes.pop(0)
        if exc is not None:
            raise exc

    c = made(sync, clock=FakeClock())
    with capture_library_logs() as logs:
        c.process("ns/a")
        c.process("ns/a")
    assert [(e["key"], e["failures"]) for e in logs if e["event"] == "sync succeeded after failures"] == [("ns/a", 1)]


def test_a_sync_returning_something_else_is_a_bug_and_retried(made):
    c = made(lambda key: True, clock=FakeClock())
    with capture_library_logs() as logs:
        assert c.process("ns/a") == "error"
    (line,) = [e for e in logs if e["event"] == "sync failed, requeueing"]
    assert "sync returned bool, not a Result or None" in line["error"] and "error_type" not in line


def test_a_reconciler_object_is_run_too(made):
    class Mirror:
        def __init__(self) -> None:
            self.synced: list[str] = []

        def sync(self, key: str) -> Result | None:
            self.synced.append(key)
            return None

    mirror = Mirror()
    assert isinstance(mirror, Reconciler)
    c = made(mirror)
    c.process("ns/a")
    assert mirror.synced == ["ns/a"]


# -- enqueueing ---------------------------------------------------------------------------------------------------------
def test_enqueue_controller_queues_the_key_of_an_object_or_tombstone_after_its_backoff(made):
    clock = FakeClock()
    c = made(lambda key: None, clock=clock, backoff=SednaBackoff(base=10.0, cap=360.0))
    c.enqueue_controller({"metadata": {"namespace": "ns", "name": "a"}})
    assert queued(c) == ["ns/a"]  # never requeued: no backoff
    c.queue.rate_limiter.when("ns/b")
    c.enqueue_controller({"metadata": {"namespace": "ns", "name": "b"}})
    assert c.get_backoff("ns/b") == 10.0 and "ns/b" not in queued(c)
    c.enqueue_controller({"metadata": {"namespace": "ns", "name": "b"}}, immediate=True)
    assert "ns/b" in queued(c)


def test_an_object_without_a_key_is_named_by_kind_and_type_never_by_content(made):
    c = made(lambda key: None)
    with capture_library_logs() as logs:
        c.enqueue_controller({"kind": "Secret", "data": {"token": "c2VjcmV0"}})
    (line,) = [e for e in logs if e["event"] == "cannot get key for object; not queued"]
    assert (line["kind"], line["type"]) == ("Secret", "dict") and "c2VjcmV0" not in str(logs)
    assert len(c.queue) == 0


def test_sedna_backoff_doubles_and_is_capped():
    backoff = SednaBackoff(base=10.0, cap=360.0)
    assert [backoff.delay(n) for n in (0, 1, 2, 3, 6, 7, 10_000)] == [0.0, 10.0, 20.0, 40.0, 320.0, 360.0, 360.0]


# -- workers ------------------------------------------------------------------------------------------------------------
def run_in_thread(c: Controller[Any]) -> tuple[threading.Event, threading.Thread]:
    stop = threading.Event()
    runner = threading.Thread(target=c.run, args=(stop,), daemon=True)
    runner.start()
    return stop, runner


def test_a_key_is_never_synced_by_two_workers_at_once(made):
    lock = threading.Lock()
    running: Counter[str] = Counter()
    most: Counter[str] = Counter()
    done: Counter[str] = Counter()
    first_started, release = threading.Event(), threading.Event()

    def sync(key: str) -> None:
        with lock:
            running[key] += 1
            most[key] = max(most[key], running[key])
        if key == "ns/a" and not first_started.is_set():
            first_started.set()
            release.wait(10)
        with lock:
            running[key] -= 1
            done[key] += 1

    c = made(sync, workers=2)
    stop, runner = run_in_thread(c)
    c.enqueue("ns/a")
    assert first_started.wait(10)
    c.enqueue("ns/a")  # while its first sync runs
    c.enqueue("ns/b")
    wait_for("the other worker synced ns/b", lambda: done["ns/b"] == 1, timeout=10)
    assert done["ns/a"] == 0  # the free worker took ns/b, never the second ns/a
    release.set()
    wait_for("ns/a synced again afterwards", lambda: done["ns/a"] == 2, timeout=10)
    stop.set()
    runner.join(10)
    assert most == Counter({"ns/a": 1, "ns/b": 1}) and not runner.is_alive()


def test_workers_grow_with_the_backlog_up_to_max_workers_and_shrink_when_it_is_gone(made):
    lock = threading.Lock()
    in_flight, most = [0], [0]
    release = threading.Event()

    def sync(key: str) -> None:
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        release.wait(10)
        with lock:
            in_flight[0] -= 1

    c = made(sync, workers=1, max_workers=3)
    stop, runner = run_in_thread(c)
    wait_for("the first worker", c.running_workers, check=lambda n: n == 1)
    for i in range(8):
        c.enqueue(f"ns/{i}")
    wait_for("three syncs at once", lambda: in_flight[0], check=lambda n: n == 3, timeout=10)
    assert c.running_workers() == 3
    release.set()
    wait_for("the backlog worked off", lambda: c.queue.len() == 0 and in_flight[0] == 0, timeout=10)
    wait_for("back to one worker", c.running_workers, check=lambda n: n == 1, timeout=10)
    stop.set()
    runner.join(10)
    assert most[0] == 3 and not runner.is_alive()


def test_without_max_workers_the_worker_count_is_fixed(made):
    release = threading.Event()
    started: list[str] = []
    c = made(lambda key: (started.append(key), release.wait(10)) and None, workers=2)
    stop, runner = run_in_thread(c)
    for i in range(5):
        c.enqueue(f"ns/{i}")
    wait_for("two syncs started", lambda: len(started), check=lambda n: n == 2, timeout=10)
    assert c.running_workers() == 2 and c.max_workers == 2
    release.set()
    stop.set()
    runner.join(10)


def test_the_drain_is_bounded_by_drain_timeout(made):
    started, release = threading.Event(), threading.Event()

    def stuck(key: str) -> None:
        started.set()
        release.wait(30)

    c = made(stuck, drain_timeout=0.05)
    stop, runner = run_in_thread(c)
    c.enqueue("ns/a")
    assert started.wait(10)
    with capture_library_logs() as logs:
        stop.set()
        runner.join(10)
    assert not runner.is_alive()  # returned while the sync is still stuck
    assert [e["timeout"] for e in logs if e["event"] == "drain timed out; abandoning in-flight syncs"] == [0.05]
    release.set()


def test_the_drain_waits_for_a_sync_in_flight(made):
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow(key: str) -> None:
        started.set()
        release.wait(30)
        finished.set()

    c = made(slow, drain_timeout=30)
    stop, runner = run_in_thread(c)
    c.enqueue("ns/a")
    assert started.wait(10)
    stop.set()
    release.set()
    runner.join(30)
    assert finished.is_set() and not runner.is_alive()


def test_a_crashed_worker_is_restarted_and_counted(made):
    metrics = RecordingMetrics(fail_first_observe=True)
    synced: list[str] = []
    c = made(synced.append, metrics=metrics, restart_period=0.01)
    stop, runner = run_in_thread(c)
    with capture_library_logs() as logs:
        c.enqueue("ns/a")
        wait_for("the restart", lambda: metrics.restarts == 1, timeout=10)
        c.enqueue("ns/b")
        wait_for("ns/b synced by the restarted worker", lambda: "ns/b" in synced, timeout=10)
    stop.set()
    runner.join(10)
    assert [e["event"] for e in logs if e["log_level"] == "error"] == ["worker crashed, restarting"]
    assert metrics.results["success"] >= 1


def test_run_waits_for_the_caches_and_a_stop_meanwhile_is_a_normal_shutdown(made):
    c = made(lambda key: None)
    c.add_cache_sync(lambda: False)
    stop = threading.Event()
    stop.set()
    with capture_library_logs() as logs:
        c.run(stop)
    assert not c.synced.is_set()
    assert [e for e in logs if e["log_level"] == "error"] == []
    assert any(e["event"] == "stopped before the caches synced" for e in logs)


def test_run_sets_synced_once_the_caches_are_synced(made):
    ready = threading.Event()
    c = made(lambda key: None)
    c.add_cache_sync(ready.is_set)
    stop, runner = run_in_thread(c)
    ready.set()
    assert c.synced.wait(10)
    stop.set()
    runner.join(10)
    assert not runner.is_alive()


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="workers"):
        Controller("Demo", lambda key: None, workers=0)
    with pytest.raises(ValueError, match="max_retries"):
        Controller("Demo", lambda key: None, max_retries=-1)
    with pytest.raises(ValueError, match="max_workers"):
        Controller("Demo", lambda key: None, workers=2, max_workers=1)
    with pytest.raises(ValueError, match="requeue_after"):
        Result(requeue_after=-1.0)
    with pytest.raises(ValueError, match="delay"):
        RetryableError("x", delay=-1.0)


# -- metrics -------------------------------------------------------------------------------------------------------------
def test_every_sync_is_counted_and_timed_under_the_names_the_caller_chose(made):
    registry = CollectorRegistry()
    metrics = PrometheusControllerMetrics(registry, prefix="demo_")
    outcomes: list[Any] = [None, KeyError("bug"), TerminalError("bad spec")]

    def sync(key: str) -> None:
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome

    c = made(sync, metrics=metrics, clock=FakeClock())
    for _ in range(3):
        c.process("ns/a")
    metrics.worker_restarted("Demo")

    def sample(name: str, **labels: str) -> float:
        return registry.get_sample_value(name, {"controller": "Demo", **labels}) or 0.0

    assert [sample("demo_controller_sync_total", result=r) for r in ("success", "error", "terminal")] == [1, 1, 1]
    assert sample("demo_controller_sync_duration_seconds_count") == 3
    assert sample("demo_controller_worker_restarts_total") == 1


def test_what_a_sync_logs_carries_the_controller_and_the_key(made):
    import structlog

    seen: list[dict[str, Any]] = []
    c = made(lambda key: seen.append(structlog.contextvars.get_contextvars()))
    c.process("ns/a")
    assert seen == [{"controller": "Demo", "key": "ns/a"}]
    assert structlog.contextvars.get_contextvars() == {}  # unbound after the sync
