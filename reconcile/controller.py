"""``Controller``: the reconcile runner every controller uses, in the vocabulary of client-go and Go Sedna.

handlers → ``enqueue``/``enqueue_controller``/``enqueue_after`` → a rate-limited queue named after the controller →
``workers`` threads running ``worker()`` → ``process_next_work_item()`` → ``sync(key) -> Result | None``.

Guarantees:
* A key is never synced by two workers at once (the queue is stingy), and a key added while it is being synced is
  synced again afterwards.
* Every sync is counted by result and timed (``ControllerMetrics``); log lines written during a sync carry
  ``controller`` and ``key`` (``apis.logs.bound_context``).
* ``None``/``Result()``: the key's rate-limit history is forgotten; ``Result(requeue_after=s)``: synced again after
  ``s``; ``Result(requeue=True)``: again after its rate-limited delay; ``Result(forget=False)``: history kept.
* ``RetryableError(delay=s)``: synced again after ``s`` (rate-limited delay when ``s`` is None); ``TerminalError``:
  logged once, history forgotten, never retried; any other exception: retried with rate limiting for as long as it
  fails (Go Sedna's ``AddRateLimited``), or dropped with a log line after ``max_retries`` failures in a row.
* A failure is logged with the API server's status, reason and message and no traceback when it is an expected one
  (``failures.failure_fields``), at its first failure and then at most once per ``log_interval`` per key.
* ``run(stop)`` waits for the caches (a stop during the wait is a normal shutdown), sets ``synced``, runs the
  workers (a worker that dies of an unexpected error is restarted after ``restart_period``, counted) until
  ``stop``, then stops taking work and waits up to ``drain_timeout`` for the syncs in flight.
* Workers grow with the backlog: with ``max_workers`` above ``workers``, a worker that takes a key while more keys
  wait starts one more worker, up to ``max_workers`` threads; a worker beyond ``workers`` that finds the queue empty
  ends. A sync mostly waits on the API server, so a backlog is worked off by more threads, not more CPU; an idle
  controller keeps only ``workers`` threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Generic

from apis.logs import bound_context, get_logger
from informers import deletion_handling_meta_namespace_key_func, wait_for_cache_sync
from reconcile.backoff import SednaBackoff, controller_rate_limiter
from reconcile.errors import RetryableError, TerminalError
from reconcile.failures import RETRY_LOG_INTERVAL, FailureLog, failure_fields
from reconcile.identity import object_identity
from reconcile.metrics import DROPPED, ERROR, SUCCESS, TERMINAL, ControllerMetrics, NoopControllerMetrics
from reconcile.reconciler import KeyT, Reconciler, SyncFunc
from reconcile.result import Result
from workqueue import Clock, RateLimiter, RateLimitingQueue, RealClock

__all__ = ["Controller", "WORKER_RESTART_PERIOD"]

WORKER_RESTART_PERIOD = 1.0

_log = get_logger(__name__)


class Controller(Generic[KeyT]):
    """Runs ``sync`` (a function or a ``Reconciler``) for the keys queued, on ``workers`` threads. Keys are
    ``namespace/name`` strings (``Controller[str]``, what ``enqueue_controller`` makes) or any hashable value.

    ``rate_limiter``: paces failed keys (default ``controller_rate_limiter()``: 5 ms doubling to 360 s);
    ``backoff``: Go Sedna's ``GetBackoff`` for non-immediate ``enqueue_controller`` (default: none, at once);
    ``log``: a structlog-style logger (default: the library logger ``reconcile.controller``), bound to
    ``controller=name``; ``clock``: the queue's clock and the failure log's (``workqueue.FakeClock`` in tests).
    """

    def __init__(
        self,
        name: str,
        sync: Reconciler[KeyT] | SyncFunc[KeyT],
        *,
        workers: int = 1,
        max_workers: int | None = None,
        rate_limiter: RateLimiter | None = None,
        metrics: ControllerMetrics | None = None,
        max_retries: int | None = None,
        drain_timeout: float = 10.0,
        backoff: SednaBackoff | None = None,
        log: Any = None,
        clock: Clock | None = None,
        log_interval: float = RETRY_LOG_INTERVAL,
        restart_period: float = WORKER_RESTART_PERIOD,
    ) -> None:
        if workers < 1:
            raise ValueError(f"{name}: workers must be >= 1, got {workers}")
        if max_workers is not None and max_workers < workers:
            raise ValueError(f"{name}: max_workers must be >= workers ({workers}), got {max_workers}")
        if max_retries is not None and max_retries < 0:
            raise ValueError(f"{name}: max_retries must be >= 0 or None, got {max_retries}")
        self.name = name
        self._sync: SyncFunc[KeyT] = sync.sync if isinstance(sync, Reconciler) else sync
        self.workers = workers
        self.max_workers = workers if max_workers is None else max_workers
        self.max_retries = max_retries
        self.drain_timeout = drain_timeout
        self.backoff = backoff
        self.restart_period = restart_period
        self.metrics: ControllerMetrics = metrics if metrics is not None else NoopControllerMetrics()
        self.clock: Clock = clock if clock is not None else RealClock()
        self.queue = RateLimitingQueue(rate_limiter or controller_rate_limiter(), name=name, clock=self.clock)
        self.failure_log = FailureLog(self.clock.now, log_interval)
        self.log = (log if log is not None else _log).bind(controller=name)
        self.synced = threading.Event()
        self._cache_syncs: list[Callable[[], bool]] = []
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._threads_lock = threading.Lock()
        self._running = 0  # worker threads started and not ended
        self._started = 0  # worker threads ever started (their names)

    # -- enqueueing -----------------------------------------------------------------------------------------------
    def enqueue(self, key: KeyT) -> None:
        """Sync ``key`` as soon as a worker is free."""
        self.queue.add(key)

    def enqueue_after(self, key: KeyT, delay: float) -> None:
        """Sync ``key`` after ``delay`` seconds (at once when ``delay <= 0``)."""
        self.queue.add_after(key, delay)

    def enqueue_rate_limited(self, key: KeyT) -> None:
        """Sync ``key`` after its rate-limited delay (its history grows: the next wait is longer)."""
        self.queue.add_rate_limited(key)

    def get_backoff(self, key: KeyT) -> float:
        """Go Sedna's ``GetBackoff`` of ``key`` (0 without a ``backoff``)."""
        return self.backoff.delay(self.queue.num_requeues(key)) if self.backoff is not None else 0.0

    def enqueue_controller(self: Controller[str], obj: object, immediate: bool = False,
                           low_priority: bool = False) -> None:
        """Queue the key of ``obj`` (or of a tombstone); without ``immediate``, after the key's ``get_backoff``;
        with ``low_priority`` (and no backoff), behind every key queued without it (``Queue.add_low_priority``). An
        object without a key is logged by kind and type (never its content) and not queued."""
        try:
            key = deletion_handling_meta_namespace_key_func(obj)
        except Exception as exc:  # the key function's message quotes the object: never logged
            self.log.warning("cannot get key for object; not queued", error=type(exc).__name__,
                             **object_identity(obj))
            return
        delay = 0.0 if immediate else self.get_backoff(key)
        if delay > 0:
            self.queue.add_after(key, delay)
        elif low_priority:
            self.queue.add_low_priority(key)
        else:
            self.queue.add(key)

    def failures(self, key: KeyT) -> int:
        """How many times in a row the sync of ``key`` failed (0 after a success)."""
        return self.failure_log.failures(key)

    # -- one key --------------------------------------------------------------------------------------------------
    def process(self, key: KeyT) -> str:
        """Sync ``key`` once and act on its outcome (module doc); returns the result counted: ``success``, ``error``,
        ``dropped`` or ``terminal``. Never raises what ``sync`` raised. The caller holds ``key`` (``worker`` takes it
        from the queue): it must not be synced by another thread meanwhile."""
        started = time.perf_counter()
        result = SUCCESS
        try:
            with bound_context(controller=self.name, key=key):
                outcome = self._sync(key)
            if outcome is not None and not isinstance(outcome, Result):
                raise TypeError(f"sync returned {type(outcome).__name__}, not a Result or None")
            self._succeeded(key, outcome or Result())
        except Exception as exc:
            result = self._failed(key, exc)
        finally:
            self.metrics.observe_sync(self.name, result, time.perf_counter() - started)
        return result

    def _succeeded(self, key: KeyT, outcome: Result) -> None:
        failures = self.failure_log.cleared(key)
        if failures:
            self.log.info("sync succeeded after failures", key=key, failures=failures)
        if outcome.requeue_after is not None:
            self.queue.forget(key)
            self.queue.add_after(key, outcome.requeue_after)
        elif outcome.requeue:
            self.queue.add_rate_limited(key)
        elif outcome.forget:
            self.queue.forget(key)

    def _failed(self, key: KeyT, exc: Exception) -> str:
        if isinstance(exc, TerminalError):
            self.failure_log.cleared(key)
            self.queue.forget(key)
            self.log.error("sync failed for good, not retried", key=key, **failure_fields(exc))
            return TERMINAL
        failure = self.failure_log.failed(key)
        if self.max_retries is not None and failure.failures > self.max_retries:
            self.failure_log.cleared(key)
            self.queue.forget(key)
            self.log.error("sync failed too often, dropping key", key=key, failures=failure.failures,
                           **failure_fields(exc))
            return DROPPED
        if isinstance(exc, RetryableError) and exc.delay is not None:
            delay = exc.delay
        else:
            delay = self.queue.rate_limiter.when(key)  # add_rate_limited, with the delay known for the log line
        self.queue.add_after(key, delay)
        if failure.due:
            self.log.warning("sync failed, requeueing", key=key, failures=failure.failures, retry_in=round(delay, 3),
                             suppressed=failure.suppressed, **failure_fields(exc))
        return ERROR

    # -- workers --------------------------------------------------------------------------------------------------
    def worker(self) -> None:
        """Process keys until the queue shuts down or the controller stops."""
        while self.process_next_work_item():
            pass

    def process_next_work_item(self) -> bool:
        """Take one key (blocking), sync it, mark it done; False once the controller stops taking work."""
        key, shutdown = self.queue.get()
        if shutdown:
            return False
        try:
            if self._stopping.is_set():
                return False  # stop taking work; the next start resyncs from the informers anyway
            if self.queue.len() > 0:
                self._grow()
            self.process(key)
            return True
        finally:
            self.queue.done(key)

    def _elastic_worker(self) -> None:
        """A worker beyond ``workers``: ends once it finds nothing waiting."""
        while self.queue.len() > 0 and self.process_next_work_item():
            pass

    def _run_worker(self, work: Callable[[], None]) -> None:
        try:
            while not self._stopping.is_set() and not self.queue.shutting_down():
                try:
                    work()
                    return
                except Exception:
                    self.log.exception("worker crashed, restarting", restart_in=self.restart_period)
                    self.metrics.worker_restarted(self.name)
                    if self._stopping.wait(self.restart_period):
                        return
        finally:
            with self._threads_lock:
                self._running -= 1

    def _new_worker(self, work: Callable[[], None]) -> threading.Thread:
        """A worker thread running ``work``, registered (so that ``shutdown`` waits for it) but not started yet;
        ``_threads_lock`` held."""
        t = threading.Thread(target=self._run_worker, args=(work,), name=f"{self.name}-worker-{self._started}",
                             daemon=True)
        self._started += 1
        self._running += 1
        self._threads = [*(old for old in self._threads if old.is_alive() or old.ident is None), t]
        return t

    def _grow(self) -> None:
        if self.max_workers <= self.workers or self._stopping.is_set():
            return
        with self._threads_lock:
            if self._running >= self.max_workers or self._stopping.is_set():
                return
            t = self._new_worker(self._elastic_worker)
        t.start()

    def running_workers(self) -> int:
        """How many worker threads run now (between ``workers`` and ``max_workers`` while running)."""
        with self._threads_lock:
            return self._running

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def add_cache_sync(self, has_synced: Callable[[], bool]) -> None:
        """``run`` waits for ``has_synced`` (an informer's) before starting the workers."""
        self._cache_syncs.append(has_synced)

    @property
    def cache_syncs(self) -> list[Callable[[], bool]]:
        """The ``has_synced`` functions ``run`` waits for (a list the caller may append to)."""
        return self._cache_syncs

    def run(self, stop: threading.Event) -> None:
        """Wait for the caches, run the workers until ``stop``, then drain (bounded by ``drain_timeout``) and
        return."""
        self.log.info("starting controller", workers=self.workers, max_workers=self.max_workers)
        try:
            self.log.info("waiting for caches to sync")
            if not wait_for_cache_sync(stop, *self._cache_syncs):
                if stop.is_set():
                    self.log.info("stopped before the caches synced")
                else:
                    self.log.error("caches did not sync")
                return
            self.log.info("caches are synced")
            self.synced.set()
            with self._threads_lock:
                started = [self._new_worker(self.worker) for _ in range(self.workers)]
            for t in started:
                t.start()
            stop.wait()
        finally:
            self.shutdown()

    def shutdown(self, timeout: float | None = None) -> bool:
        """Stop taking work and wait up to ``timeout`` (default ``drain_timeout``) for in-flight syncs. Returns True
        when every worker finished in time. Safe to call more than once."""
        timeout = self.drain_timeout if timeout is None else timeout
        self._stopping.set()
        drainer = threading.Thread(target=self.queue.shut_down_with_drain, name=f"{self.name}-drain", daemon=True)
        drainer.start()
        deadline = time.monotonic() + timeout
        with self._threads_lock:
            threads = list(self._threads)  # no worker is added once stopping is set
        for t in threads:
            if t.ident is not None:  # one registered and not started yet sees stopping set and ends at once
                t.join(max(0.0, deadline - time.monotonic()))
        drained = not any(t.is_alive() for t in threads)
        if not drained:
            self.log.warning("drain timed out; abandoning in-flight syncs", timeout=timeout)
        self.queue.shut_down()  # releases the drainer if it is still waiting
        drainer.join(1.0)
        self.log.info("controller stopped")
        return drained
