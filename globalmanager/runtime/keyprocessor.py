"""``KeyProcessor``: what a controller does with one key taken from its rate-limited queue, shared by
``BaseController`` (the job kinds) and ``SyncLoop`` (Dataset, Model).

``process(key, sync)`` runs ``sync(key)`` with ``controller`` and ``key`` bound to every log line it writes, times
it (``sedna_gm_controller_sync_duration_seconds``) and counts its result (``sedna_gm_controller_sync_total``):

* ``success``: ``sync`` returned; its rate-limit history is forgotten when it returned True;
* ``error``: ``sync`` raised; the key is requeued with rate limiting. With ``max_retries=None`` (the job
  kinds) this goes on for as long as the failure lasts, as Go Sedna's ``AddRateLimited`` does: nothing else
  would bring the key back (periodic resyncs of an unchanged object are ignored), so a job blocked for a while
  (a quota's 403, an API outage) must not be given up. ``controller_rate_limiter()`` keeps the first retries
  fast and caps the wait at ``MAX_RETRY_DELAY``;
* ``dropped``: only with a ``max_retries`` limit: it raised that many times in a row; the key is forgotten.

A failing key is logged (``sync failed, requeueing``: ``failures`` in a row, ``retry_in`` seconds) at its
first failure and then at most once per ``log_interval``, with the number of failures not logged since
(``suppressed``); a success after failures is logged once (``sync succeeded after failures``).

``failure_fields(exc)`` is how a failure is logged: an answer of the API server (``ApiError``: 403, 404, 409,
422...) or a lost connection is an expected failure, logged with its status code, reason and message and no
traceback; anything else is a bug and carries its traceback.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from apis import errors
from workqueue import RateLimiter, RateLimitingQueue, default_controller_rate_limiter

from .metrics import ControllerMetrics

__all__ = [
    "KeyProcessor", "MAX_RETRY_DELAY", "RETRY_LOG_INTERVAL", "controller_rate_limiter", "failure_fields",
]

SUCCESS, ERROR, DROPPED = "success", "error", "dropped"
MAX_RETRY_DELAY = 360.0  # Go Sedna's ItemExponentialFailureRateLimiter(10 s, 360 s) cap
RETRY_LOG_INTERVAL = 60.0


def controller_rate_limiter(max_delay: float = MAX_RETRY_DELAY) -> RateLimiter:
    """``default_controller_rate_limiter`` (5 ms doubling per key, 10 qps / burst 100 overall) with the per-key
    backoff capped at ``max_delay`` instead of 1000 s: a key that keeps failing is retried every few minutes."""
    return default_controller_rate_limiter(max_delay)


def failure_fields(exc: BaseException) -> dict[str, Any]:
    """Log fields for ``exc``: ``error`` always; ``status_code`` and ``reason`` for an API error; ``error_type``
    for a connection error; ``exc_info`` (the traceback) only for an unexpected exception."""
    if isinstance(exc, errors.ApiError):
        return {"error": exc.message or str(exc), "status_code": exc.status, "reason": exc.reason}
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return {"error": str(exc), "error_type": type(exc).__name__}
    return {"error": str(exc), "exc_info": exc}


@dataclass
class _Failing:
    """The failures in a row of one key (kept until it succeeds or is dropped)."""

    failures: int = 0
    logged_at: float = 0.0
    suppressed: int = 0


class KeyProcessor:
    """Processes keys of ``queue`` for controller ``name``; safe from any number of worker threads (the queue never
    hands one key to two of them). ``max_retries=None``: a failing key is retried for as long as it fails."""

    def __init__(self, name: str, queue: RateLimitingQueue, metrics: ControllerMetrics,
                 max_retries: int | None, log: Any, clock: Callable[[], float] = time.monotonic,
                 log_interval: float = RETRY_LOG_INTERVAL) -> None:
        self.name = name
        self.queue = queue
        self.metrics = metrics
        self.max_retries = max_retries
        self.clock = clock
        self.log_interval = log_interval
        self._log = log
        self._lock = threading.Lock()
        self._failing: dict[str, _Failing] = {}

    def process(self, key: str, sync: Callable[[str], bool]) -> str:
        """Run ``sync(key)`` (True: forget the key's rate-limit history) and handle its outcome; returns the result
        counted (``success``, ``error`` or ``dropped``). Never raises what ``sync`` raised."""
        started = time.monotonic()
        result = SUCCESS
        try:
            with structlog.contextvars.bound_contextvars(controller=self.name, key=key):
                forget = sync(key)
            if forget:
                self.queue.forget(key)
            self._succeeded(key)
        except Exception as exc:
            result = self._failed(key, exc)
        finally:
            self.metrics.sync_total.labels(controller=self.name, result=result).inc()
            self.metrics.sync_duration.labels(controller=self.name).observe(time.monotonic() - started)
        return result

    def failures(self, key: str) -> int:
        """How many times in a row the sync of ``key`` failed (0 after a success)."""
        with self._lock:
            state = self._failing.get(key)
            return state.failures if state is not None else 0

    def _succeeded(self, key: str) -> None:
        with self._lock:
            state = self._failing.pop(key, None)
        if state is not None:
            self._log.info("sync succeeded after failures", key=key, failures=state.failures)

    def _failed(self, key: str, exc: Exception) -> str:
        now = self.clock()
        with self._lock:
            state = self._failing.setdefault(key, _Failing())
            state.failures += 1
            failures = state.failures
            give_up = self.max_retries is not None and failures > self.max_retries
            due = give_up or failures == 1 or now - state.logged_at >= self.log_interval
            suppressed = state.suppressed
            if give_up:
                del self._failing[key]
            elif due:
                state.logged_at, state.suppressed = now, 0
            else:
                state.suppressed += 1
        if give_up:
            self._log.error("sync failed too often, dropping key", key=key, failures=failures,
                            **failure_fields(exc))
            self.queue.forget(key)
            return DROPPED
        delay = self.queue.rate_limiter.when(key)  # add_rate_limited, with the delay known for the log line
        self.queue.add_after(key, delay)
        if due:
            self._log.warning("sync failed, requeueing", key=key, failures=failures, retry_in=round(delay, 3),
                              suppressed=suppressed, **failure_fields(exc))
        return ERROR
