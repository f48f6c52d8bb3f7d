"""``KeyProcessor``: what a controller does with one key taken from its rate-limited queue, shared by
``BaseController`` (the job kinds) and ``SyncLoop`` (Dataset, Model).

``process(key, sync)`` runs ``sync(key)`` with ``controller`` and ``key`` bound to every log line it writes, times
it (``sedna_gm_controller_sync_duration_seconds``) and counts its result (``sedna_gm_controller_sync_total``):

* ``success``: ``sync`` returned; its rate-limit history is forgotten when it returned True;
* ``error``: ``sync`` raised; the key is requeued with rate limiting;
* ``dropped``: it raised ``max_retries`` times in a row; the key is forgotten (a new event queues it again).

``failure_fields(exc)`` is how a failure is logged: an answer of the API server (``ApiError``: 403, 404, 409,
422...) or a lost connection is an expected failure, logged with its status code, reason and message and no
traceback; anything else is a bug and carries its traceback.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import structlog

from apis import errors
from workqueue import RateLimitingQueue

from .metrics import ControllerMetrics

__all__ = ["KeyProcessor", "failure_fields"]

SUCCESS, ERROR, DROPPED = "success", "error", "dropped"


def failure_fields(exc: BaseException) -> dict[str, Any]:
    """Log fields for ``exc``: ``error`` always; ``status_code`` and ``reason`` for an API error; ``error_type``
    for a connection error; ``exc_info`` (the traceback) only for an unexpected exception."""
    if isinstance(exc, errors.ApiError):
        return {"error": exc.message or str(exc), "status_code": exc.status, "reason": exc.reason}
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return {"error": str(exc), "error_type": type(exc).__name__}
    return {"error": str(exc), "exc_info": exc}


class KeyProcessor:
    """Processes keys of ``queue`` for controller ``name``; safe from any number of worker threads (the queue never
    hands one key to two of them)."""

    def __init__(self, name: str, queue: RateLimitingQueue, metrics: ControllerMetrics, max_retries: int,
                 log: Any) -> None:
        self.name = name
        self.queue = queue
        self.metrics = metrics
        self.max_retries = max_retries
        self._log = log

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
        except Exception as exc:
            result = self._failed(key, exc)
        finally:
            self.metrics.sync_total.labels(controller=self.name, result=result).inc()
            self.metrics.sync_duration.labels(controller=self.name).observe(time.monotonic() - started)
        return result

    def _failed(self, key: str, exc: Exception) -> str:
        retries = self.queue.num_requeues(key)
        if retries < self.max_retries:
            self._log.warning("sync failed, requeueing", key=key, retries=retries, **failure_fields(exc))
            self.queue.add_rate_limited(key)
            return ERROR
        self._log.error("sync failed too often, dropping key", key=key, retries=retries, **failure_fields(exc))
        self.queue.forget(key)
        return DROPPED
