"""Worker reports → managers, and the promise behind the worker API's 200: a report answered 200 is durable.

* A report about a job this node holds goes to its manager (which relays it to the outbox) — unless the outbox is
  over its bound (``OutboxLimits``), then ``ReportRefused`` (503 with ``Retry-After``; Sedna's SDK retries 5 times,
  3 s apart).
* A report about a job this node does not hold yet (the worker reported before the GM sent the job: the GM is slow,
  down, or this LC is reconnecting) is kept in the database (``lc_pending``), bounded by ``PendingLimits`` (count,
  bytes, age), and handed to the manager in arrival order once the job arrives (``arrived``, called by
  ``Downstream`` after the manager's ``insert``, and for every stored object at start). Past the count or byte bound:
  ``ReportRefused``. A kept report older than ``max_age`` is dropped with a log line.
* ``ownerKind`` is the manager's kind; Sedna's SDK sends ``default`` for FederatedLearning, so a ``default`` report
  goes to the one job of its name this node holds (kept, when there is none yet). Any other unknown kind is answered
  200 and dropped, as Go's LC does.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import orjson
import structlog

from .managers import Manager
from .managers.relay import SDK_DEFAULT_JOB_NAME
from .server import DELIVERED, KEPT, UNHANDLED, ReportRefused
from .store import PendingEntry, Store
from .worker import WorkerMessage

__all__ = ["OutboxLimits", "PendingLimits", "WorkerReports"]

log = structlog.get_logger("sedna-lc.delivery")

SDK_DEFAULT_KIND = "default"  # sedna.common.constant.K8sResourceKind.DEFAULT


@dataclass(frozen=True)
class PendingLimits:
    """Bounds of the reports kept for jobs this node does not hold yet."""

    max_reports: int = 1000
    max_bytes: int = 64 * 1024 * 1024
    max_age: float = 3600.0  # seconds
    retry_after: int = 5  # seconds, the Retry-After of a 503


@dataclass(frozen=True)
class OutboxLimits:
    """Bounds of the outbox (reports not yet acked by the GM) past which a worker report is answered 503."""

    max_reports: int = 10000
    max_bytes: int = 128 * 1024 * 1024
    retry_after: int = 5


class WorkerReports:
    def __init__(self, store: Store, managers: Mapping[str, Manager], pending: PendingLimits | None = None,
                 outbox: OutboxLimits | None = None, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.managers = managers
        self.pending = pending or PendingLimits()
        self.outbox = outbox or OutboxLimits()
        self._clock = clock
        self._lock = threading.Lock()
        self._held: set[tuple[str, str, str]] = set()  # (kind, namespace, name) whose manager has the object

    # -- the worker API's delivery --------------------------------------------------------------------------------
    def deliver(self, message: WorkerMessage) -> str:
        """``DELIVERED``, ``KEPT`` or ``UNHANDLED``; raises ``ReportRefused`` when the report cannot be kept now."""
        with self._lock:
            kind = self._held_kind(message)
            if kind is not None:
                self._check_outbox()
                self.managers[kind].add_worker_message(dataclasses.replace(message, owner_kind=kind))
                return DELIVERED
            if message.owner_kind not in self.managers and message.owner_kind != SDK_DEFAULT_KIND:
                return UNHANDLED
            self._keep(message)
            return KEPT

    # -- the GM's objects -----------------------------------------------------------------------------------------
    def arrived(self, kind: str, namespace: str, name: str) -> None:
        """``kind namespace/name`` is now in its manager: hand it the reports kept for it, in arrival order."""
        with self._lock:
            self._held.add((kind, namespace, name))
            self._expire()
            for entry in self._kept_for(kind, namespace, name):
                self._hand_over(kind, entry)

    def waiting(self, kind: str, namespace: str, name: str) -> bool:
        """Whether reports are kept for ``kind namespace/name`` and its manager does not hold it."""
        with self._lock:
            return (kind, namespace, name) not in self._held and bool(self._kept_for(kind, namespace, name))

    def expire(self) -> None:
        """Drop (with a log line) the kept reports older than ``max_age``; also done on every keep and arrival."""
        with self._lock:
            self._expire()

    def departed(self, kind: str, namespace: str, name: str, gone: bool = False) -> None:
        """``kind namespace/name`` is being taken off this node: reports about it are kept again from now on. With
        ``gone`` (deleted for good) the reports kept for it are dropped: a job re-created under its name is another
        job and must never receive them."""
        with self._lock:
            self._held.discard((kind, namespace, name))
            if not gone:
                return
            dropped = self._kept_for(kind, namespace, name)
            if dropped:
                self.store.remove_pending([e.seq for e in dropped])
                log.info("dropped the worker reports kept for a job deleted for good", kind=kind,
                         object=f"{namespace}/{name}", reports=len(dropped))

    # -- internals (lock held) ------------------------------------------------------------------------------------
    def _held_kind(self, message: WorkerMessage) -> str | None:
        if message.owner_kind in self.managers:
            held = (message.owner_kind, message.namespace, message.owner_name) in self._held
            return message.owner_kind if held else None
        kinds = [k for k, ns, n in self._held if (ns, n) == (message.namespace, message.owner_name)]
        if len(kinds) == 1:
            log.debug("worker report routed by its owner's name", worker=message.name, owner_kind=message.owner_kind,
                      kind=kinds[0], object=f"{message.namespace}/{message.owner_name}")
            return kinds[0]
        return None

    def _kept_for(self, kind: str, namespace: str, name: str) -> list[PendingEntry]:
        return [e for e in self.store.pending_for(namespace, name)
                if e.owner_kind == kind or e.owner_kind not in self.managers]

    def _check_outbox(self) -> None:
        count, size = self.store.outbox_usage()
        if count >= self.outbox.max_reports or size >= self.outbox.max_bytes:
            raise ReportRefused(f"the outbox to the GM is full ({count} reports, {size} bytes; bounds "
                                f"{self.outbox.max_reports} reports, {self.outbox.max_bytes} bytes): the GM is not "
                                "taking reports", self.outbox.retry_after)

    def _keep(self, message: WorkerMessage) -> None:
        self._expire()
        body = orjson.dumps(dataclasses.asdict(message))
        count, size = self.store.pending_usage()
        limits = self.pending
        if count >= limits.max_reports or size + len(body) > limits.max_bytes:
            raise ReportRefused(f"{count} reports ({size} bytes) are kept for jobs this node does not hold yet; "
                                f"bounds {limits.max_reports} reports, {limits.max_bytes} bytes",
                                limits.retry_after)
        self.store.add_pending(message.owner_kind, message.namespace, message.owner_name, self._clock(), body)
        hint = ({"hint": f"ownerName {SDK_DEFAULT_JOB_NAME!r} is the Sedna SDK's JOB_NAME default: the worker may "
                         "have no JOB_NAME"} if message.owner_name == SDK_DEFAULT_JOB_NAME else {})
        log.info("kept a worker report for a job this node does not hold yet; delivered when it arrives",
                 worker=message.name, owner_kind=message.owner_kind,
                 object=f"{message.namespace}/{message.owner_name}", phase=message.kind, status=message.status, **hint)

    def _hand_over(self, kind: str, entry: PendingEntry) -> None:
        where = {"kind": kind, "object": f"{entry.namespace}/{entry.name}"}
        try:
            message = WorkerMessage(**orjson.loads(entry.message))
            with self.store.handing_over(entry.seq):  # its relay to the outbox takes it out of lc_pending
                self.managers[kind].add_worker_message(dataclasses.replace(message, owner_kind=kind))
        except Exception:
            log.exception("a kept worker report could not be delivered; dropped", **where)
            return
        finally:
            self.store.remove_pending([entry.seq])  # when the manager relayed nothing (or failed)
        log.info("delivered a kept worker report to its job", worker=message.name, phase=message.kind,
                 status=message.status, waited_seconds=round(self._clock() - entry.received, 3), **where)

    def _expire(self) -> None:
        now = self._clock()
        for entry in self.store.expire_pending(now - self.pending.max_age):
            log.warning("dropped a kept worker report: its job did not arrive in time", owner_kind=entry.owner_kind,
                        object=f"{entry.namespace}/{entry.name}", age_seconds=round(now - entry.received, 3),
                        max_age_seconds=self.pending.max_age)
