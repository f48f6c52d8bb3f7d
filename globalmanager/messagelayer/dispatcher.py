"""The upstream dispatcher: reports from LCs → the handler registered for their kind (Go's ``UpstreamController``).

Guarantees:
* Handlers are looked up by lower-cased kind; a kind has at most one handler.
* Reports about one object are handled one at a time, in arrival order; reports about different objects run on a
  small pool of worker threads (never one thread per report).
* A handler raising ``InvalidReport`` refuses the report. A transient failure (conflict, 429, 5xx, connection error)
  retries the same report with rate limiting (5 ms doubling to 30 s) before later reports of that object; any other
  error drops it with a log line. ``on_finished(report, error)`` is called once per report (``error`` is ``None``
  when applied) — except for a report retried when the dispatcher stops, for which it is never called.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from apis import errors
from apis.http_transport import ApiConnectionError
from globalmanager.runtime.edge import InvalidReport, UpstreamHandler, UpstreamMessage
from workqueue import ItemExponentialFailureRateLimiter, RateLimitingQueue

from .node import ObjectKey

__all__ = ["Report", "UpstreamDispatcher", "is_transient"]

log = structlog.get_logger("sedna-gm.edge")

_RETRY_BASE = 0.005
_RETRY_MAX = 30.0


@dataclass(frozen=True)
class Report:
    message: UpstreamMessage
    id: str = ""  # extension ``ack``: "" when the LC did not negotiate acks

    @property
    def key(self) -> ObjectKey:
        m = self.message
        return m.kind, m.namespace, m.name


@dataclass(frozen=True)
class Outcome:
    """How a report ended: ``error`` is ``None`` when applied; ``reason`` labels a refusal (``invalid_report``)."""

    error: str | None = None
    reason: str = ""


def is_transient(exc: BaseException) -> bool:
    """Whether writing may succeed if retried: conflicts, throttling, server errors, connection problems."""
    if isinstance(exc, (ApiConnectionError, TimeoutError, ConnectionError)):
        return True
    if isinstance(exc, errors.ApiError):
        return errors.is_conflict(exc) or errors.is_too_many_requests(exc) or exc.status >= 500
    return False


class UpstreamDispatcher:
    def __init__(self, on_finished: Callable[[Report, Outcome], None], workers: int = 4) -> None:
        self._on_finished = on_finished
        self._workers = workers
        self._handlers: dict[str, UpstreamHandler] = {}
        self._lock = threading.Lock()
        self._reports: dict[ObjectKey, deque[Report]] = {}
        self._count = 0
        self._queue = RateLimitingQueue(ItemExponentialFailureRateLimiter(_RETRY_BASE, _RETRY_MAX))
        self._threads: list[threading.Thread] = []

    def add_handler(self, kind: str, handler: UpstreamHandler) -> None:
        key = kind.lower()
        with self._lock:
            if key in self._handlers:
                raise ValueError(f"an upstream handler for kind {key!r} is already registered")
            self._handlers[key] = handler

    def has_handler(self, kind: str) -> bool:
        with self._lock:
            return kind.lower() in self._handlers

    def submit(self, report: Report) -> None:
        """Queue ``report`` behind earlier reports of the same object."""
        key = report.key
        with self._lock:
            self._reports.setdefault(key, deque()).append(report)
            self._count += 1
        self._queue.add(key)

    def pending(self) -> int:
        """Reports queued or being handled."""
        with self._lock:
            return self._count

    def start(self) -> None:
        for i in range(self._workers):
            t = threading.Thread(target=self._work, name=f"edge-upstream-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self, timeout: float = 5.0) -> None:
        self._queue.shut_down()
        for t in self._threads:
            t.join(timeout)

    def _work(self) -> None:
        while True:
            key, shutdown = self._queue.get()
            if shutdown:
                return
            try:
                self._handle_head(key)
            except Exception:  # never lose the worker
                log.exception("upstream dispatcher failed", object="/".join(key))
            finally:
                self._queue.done(key)

    def _handle_head(self, key: ObjectKey) -> None:
        with self._lock:
            reports = self._reports.get(key)
            if not reports:
                return
            report = reports[0]
            handler = self._handlers.get(key[0])
        m = report.message
        outcome = Outcome()
        try:
            if handler is None:  # registered kinds only reach here; defensive
                raise InvalidReport(f"no handler for kind {key[0]!r}")
            handler(m)
        except InvalidReport as exc:
            outcome = Outcome(str(exc), "invalid_report")
        except Exception as exc:
            if is_transient(exc) and not self._queue.shutting_down():
                log.warning("applying report failed, retrying", node=m.node, kind=m.kind,
                            object=f"{m.namespace}/{m.name}", error=str(exc), retries=self._queue.num_requeues(key))
                self._queue.add_rate_limited(key)
                return
            log.error("applying report failed, dropping it", node=m.node, kind=m.kind,
                      object=f"{m.namespace}/{m.name}", error=str(exc), exc_info=not isinstance(exc, errors.ApiError))
            outcome = Outcome(f"applying the report failed: {exc}", "apply_failed")
        with self._lock:
            reports.popleft()
            self._count -= 1
            more = bool(reports)
            if not more:
                del self._reports[key]
        self._queue.forget(key)
        if more:
            self._queue.add(key)  # re-queued when done() is called for it
        self._on_finished(report, outcome)
