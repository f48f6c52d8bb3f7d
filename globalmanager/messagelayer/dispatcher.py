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
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from apis import errors
from apis.http_transport import ApiConnectionError
from globalmanager.runtime.edge import InvalidReport, UpstreamHandler, UpstreamMessage
from reconcile import failure_fields
from workqueue import ItemExponentialFailureRateLimiter
from workqueue.keyed import KeyedFIFO

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
    """How a report ended: ``error`` is ``None`` when applied; ``reason`` labels a refusal (``invalid_report``,
    ``not_entitled``: ``InvalidReport.reason``)."""

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
        self._lock = threading.Lock()
        self._handlers: dict[str, UpstreamHandler] = {}
        self._fifo: KeyedFIFO[ObjectKey, Report] = KeyedFIFO(ItemExponentialFailureRateLimiter(_RETRY_BASE, _RETRY_MAX))

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
        self._fifo.put(report.key, report)

    def pending(self) -> int:
        """Reports queued or being handled."""
        return self._fifo.pending()

    def start(self) -> None:
        self._fifo.start_workers(self._workers, self._process, name="edge-upstream", on_error=self._failed)

    def stop(self, timeout: float = 5.0) -> None:
        self._fifo.stop(timeout)

    def _process(self, key: ObjectKey, report: Report) -> bool:
        outcome = self._apply(key, report)
        if outcome is None:
            return True
        self._on_finished(report, outcome)
        return False

    def _failed(self, key: ObjectKey, report: Report, exc: Exception) -> None:
        log.error("upstream dispatcher failed", object="/".join(key), error=str(exc), exc_info=exc)
        try:
            self._on_finished(report, Outcome(f"internal error: {exc}", "apply_failed"))
        except Exception:
            log.exception("upstream dispatcher failed to finish a report", object="/".join(key))

    def _apply(self, key: ObjectKey, report: Report) -> Outcome | None:
        """Run the handler; ``None`` means: retry this report later."""
        with self._lock:
            handler = self._handlers.get(key[0])
        m = report.message
        try:
            if handler is None:  # only registered kinds get here
                raise InvalidReport(f"no handler for kind {key[0]!r}")
            handler(m)
        except InvalidReport as exc:
            return Outcome(str(exc), exc.reason)
        except Exception as exc:
            if is_transient(exc) and not self._fifo.shutting_down():
                log.warning("applying report failed, retrying", node=m.node, kind=m.kind,
                            object=f"{m.namespace}/{m.name}", retries=self._fifo.num_requeues(key),
                            **failure_fields(exc))
                return None
            log.error("applying report failed, dropping it", node=m.node, kind=m.kind,
                      object=f"{m.namespace}/{m.name}", **failure_fields(exc))
            return Outcome(f"applying the report failed: {exc}", "apply_failed")
        return Outcome()
