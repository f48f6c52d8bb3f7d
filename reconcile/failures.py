"""How a failed sync is logged: ``failure_fields(exc)`` (what the line says) and ``FailureLog`` (when: a failing key
at its first failure, then at most once per ``interval``, with the failures not logged since).

An answer of the API server (``ApiError``: 403, 404, 409, 422...), a lost connection and a ``RetryableError`` or
``TerminalError`` are expected failures, logged with status code, reason and message and no traceback; anything else
is a bug and carries its traceback."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from apis import errors
from apis.logthrottle import LogThrottle
from reconcile.errors import RetryableError, TerminalError

__all__ = ["Failure", "FailureLog", "RETRY_LOG_INTERVAL", "failure_fields"]

RETRY_LOG_INTERVAL = 60.0


def failure_fields(exc: BaseException) -> dict[str, Any]:
    """Log fields for ``exc``: ``error`` always; ``status_code`` and ``reason`` for an API error; ``error_type``
    for a connection error; ``exc_info`` (the traceback) only for an unexpected exception."""
    if isinstance(exc, errors.ApiError):
        return {"error": exc.message or str(exc), "status_code": exc.status, "reason": exc.reason}
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return {"error": str(exc), "error_type": type(exc).__name__}
    if isinstance(exc, (RetryableError, TerminalError)):
        return {"error": exc.message, "error_type": type(exc).__name__}
    return {"error": str(exc), "exc_info": exc}


@dataclass(frozen=True)
class Failure:
    """One failure of a key: how many in a row, whether to log it now, and how many were not logged before it."""

    failures: int
    due: bool
    suppressed: int


class FailureLog:
    """The failures in a row of each key (kept until it succeeds or is dropped); safe from any thread. When to log
    is ``apis.logthrottle.LogThrottle``'s rule, per key."""

    def __init__(self, clock: Callable[[], float], interval: float = RETRY_LOG_INTERVAL) -> None:
        self._throttle: LogThrottle[Hashable] = LogThrottle(interval, max_keys=None, clock=clock)
        self._lock = threading.Lock()
        self._failing: dict[Hashable, int] = {}

    @property
    def clock(self) -> Callable[[], float]:
        return self._throttle.clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        self._throttle.clock = clock

    @property
    def interval(self) -> float:
        return self._throttle.interval

    def failed(self, key: Hashable) -> Failure:
        with self._lock:
            failures = self._failing[key] = self._failing.get(key, 0) + 1
        seen = self._throttle.admit(key)
        return Failure(failures, seen.due, seen.untold if seen.due else seen.untold - 1)

    def cleared(self, key: Hashable) -> int:
        """Forget ``key``'s failures; returns how many there were in a row (0: it was not failing)."""
        with self._lock:
            failures = self._failing.pop(key, 0)
        self._throttle.forget(key)
        return failures

    def failures(self, key: Hashable) -> int:
        with self._lock:
            return self._failing.get(key, 0)
