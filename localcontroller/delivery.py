"""Worker reports → managers, and the promise behind the worker API's 200: a report answered 200 is durable.

* A report about a job this node holds goes to its manager (which relays it to the outbox) — unless the outbox is
  over its bound (``OutboxLimits``), then ``ReportRefused`` (503 with ``Retry-After``; Sedna's SDK retries 5 times,
  3 s apart).
* A report about a job this node does not hold yet (the worker reported before the GM sent the job: the GM is slow,
  down, or this LC is reconnecting) is kept in the database (``lc_pending``), within the bounds of ``keptreports``
  (per job, per source, node-wide, age: reports for jobs that do not exist never refuse or push out another client's
  report), and handed to the manager in arrival order once the job arrives (``arrived``, called by ``Downstream``
  after the manager's ``insert``, and for every stored object at start). Reports dropped by those bounds are counted
  (``sedna_lc_kept_worker_reports_dropped_total{reason}``) and logged once per drop with their number.
* ``ownerKind`` is the manager's kind; Sedna's SDK sends ``default`` for FederatedLearning, so a ``default`` report
  goes to the one job of its name this node holds (kept, when there is none yet). Any other unknown kind is answered
  200 and dropped, as Go's LC does.
* ``ownerName`` ``sedna`` is the SDK's ``JOB_NAME`` default: a worker without ``JOB_NAME`` (every joint inference
  worker under Go's GM, which sets only ``SERVICE_NAME``) reports for it. Such a report is attributed to the one job of
  its ``ownerKind`` this node holds in its namespace, when there is exactly one (now, or when that job arrives), with
  a log line saying so; otherwise it is kept as any report for a job the node does not hold.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import orjson
import structlog

from .keptreports import NewReport, PendingLimits, expired, make_room
from .managers import Manager
from .managers.relay import SDK_DEFAULT_JOB_NAME
from .server import DELIVERED, KEPT, UNHANDLED, ReportRefused
from .store import KeptReport, PendingEntry, Store
from .worker import WorkerMessage

__all__ = ["OutboxLimits", "PendingLimits", "WorkerReports"]

log = structlog.get_logger("sedna-lc.delivery")

SDK_DEFAULT_KIND = "default"  # sedna.common.constant.K8sResourceKind.DEFAULT
REMEMBERED = 4096  # jobs taken off this node, and attributions already logged at info, remembered at most

Owner = tuple[str, str, str]  # (kind, namespace, name)


@dataclass(frozen=True)
class OutboxLimits:
    """Bounds of the outbox (reports not yet acked by the GM) past which a worker report is answered 503."""

    max_reports: int = 10000
    max_bytes: int = 128 * 1024 * 1024
    retry_after: int = 5


class WorkerReports:
    def __init__(self, store: Store, managers: Mapping[str, Manager], pending: PendingLimits | None = None,
                 outbox: OutboxLimits | None = None, clock: Callable[[], float] = time.time,
                 dropped: Callable[[str, int], None] = lambda reason, count: None) -> None:
        """``dropped(reason, count)`` counts kept reports dropped by a bound (``expired``, ``evicted``) or with their
        job (``deleted``)."""
        self.store = store
        self.managers = managers
        self.pending = pending or PendingLimits()
        self.outbox = outbox or OutboxLimits()
        self._clock = clock
        self._dropped = dropped
        self._lock = threading.Lock()
        self._held: set[Owner] = set()  # whose manager has the object
        # taken off this node (not for good): its owner is "sent"; after a restart, the owners of reports kept as sent
        self._departed: OrderedDict[Owner, None] = OrderedDict.fromkeys(k.owner for k in store.kept_reports() if k.sent)
        self._connected_since: float | None = None
        self._attributions_logged: OrderedDict[tuple[str, str, str], None] = OrderedDict()

    # -- the worker API's delivery --------------------------------------------------------------------------------
    def deliver(self, message: WorkerMessage, client: str = "") -> str:
        """``DELIVERED``, ``KEPT`` or ``UNHANDLED``; raises ``ReportRefused`` when the report cannot be kept now.
        ``client`` is the address it came from."""
        with self._lock:
            kind = self._held_kind(message)
            job = self._attributable(message) if kind is None else None
            if job is not None:
                message, kind = dataclasses.replace(message, owner_name=job), message.owner_kind
            if kind is not None:
                self._check_outbox()
                self.managers[kind].add_worker_message(dataclasses.replace(message, owner_kind=kind))
                if job is not None:
                    self._log_attribution(message, job)
                return DELIVERED
            if message.owner_kind not in self.managers and message.owner_kind != SDK_DEFAULT_KIND:
                return UNHANDLED
            self._keep(message, client)
            return KEPT

    def gm_connection(self, up: bool) -> None:
        """The link to the GM went up or down (an unsent job's reports age only while it is up)."""
        with self._lock:
            self._connected_since = self._clock() if up else None

    # -- the GM's objects -----------------------------------------------------------------------------------------
    def arrived(self, kind: str, namespace: str, name: str) -> None:
        """``kind namespace/name`` is now in its manager: hand it the reports kept for it, in arrival order (and the
        SDK-default ones it is now the one job for)."""
        with self._lock:
            self._held.add((kind, namespace, name))
            self._departed.pop((kind, namespace, name), None)
            self._expire()
            for entry in self._kept_for(kind, namespace, name):
                self._hand_over(kind, entry)
            if self._jobs_of(kind, namespace) == [name]:
                for entry in self._kept_for(kind, namespace, SDK_DEFAULT_JOB_NAME):
                    if entry.owner_kind == kind and (kind, namespace, SDK_DEFAULT_JOB_NAME) not in self._held:
                        self._hand_over(kind, entry, attributed_to=name)

    def waiting(self, kind: str, namespace: str, name: str) -> bool:
        """Whether reports are kept for ``kind namespace/name`` and its manager does not hold it."""
        with self._lock:
            return (kind, namespace, name) not in self._held and bool(self._kept_for(kind, namespace, name))

    def expire(self) -> None:
        """Drop (with a log line) the kept reports past their age; also done on every keep and arrival."""
        with self._lock:
            self._expire()

    def departed(self, kind: str, namespace: str, name: str, gone: bool = False) -> None:
        """``kind namespace/name`` is being taken off this node: reports about it are kept again from now on. With
        ``gone`` (deleted for good) the reports kept for it are dropped: a job re-created under its name is another
        job and must never receive them."""
        with self._lock:
            self._held.discard((kind, namespace, name))
            if not gone:
                _remember(self._departed, (kind, namespace, name))
                return
            self._departed.pop((kind, namespace, name), None)
            dropped = self._kept_for(kind, namespace, name)
            if dropped:
                self.store.remove_pending([e.seq for e in dropped])
                self._dropped("deleted", len(dropped))
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

    def _jobs_of(self, kind: str, namespace: str) -> list[str]:
        return [n for k, ns, n in self._held if (k, ns) == (kind, namespace)]

    def _attributable(self, message: WorkerMessage) -> str | None:
        """The job a report for the SDK's default owner comes from: the one job of its kind this node holds in its
        namespace (``None`` when there is none or more than one)."""
        if message.owner_name != SDK_DEFAULT_JOB_NAME or message.owner_kind not in self.managers:
            return None
        jobs = self._jobs_of(message.owner_kind, message.namespace)
        return jobs[0] if len(jobs) == 1 else None

    def _log_attribution(self, message: WorkerMessage, job: str) -> None:
        """At info the first time a worker's reports go to a job (each report at debug after that)."""
        key = (message.namespace, message.name, job)
        first = key not in self._attributions_logged
        _remember(self._attributions_logged, key)
        (log.info if first else log.debug)(
            f"worker report for ownerName {SDK_DEFAULT_JOB_NAME!r} (the Sedna SDK's JOB_NAME default: the worker has "
            "no JOB_NAME, as under Go's GM) attributed to the one job of its kind this node holds in its namespace",
            worker=message.name, owner_kind=message.owner_kind, object=f"{message.namespace}/{job}",
            phase=message.kind, status=message.status)

    def _kept_for(self, kind: str, namespace: str, name: str) -> list[PendingEntry]:
        return [e for e in self.store.pending_for(namespace, name)
                if e.owner_kind == kind or e.owner_kind not in self.managers]

    def _sent(self, message: WorkerMessage) -> bool:
        """Whether the GM has sent this node the report's job before (it holds it no more)."""
        if message.owner_kind in self.managers:
            return (message.owner_kind, message.namespace, message.owner_name) in self._departed
        return any((ns, n) == (message.namespace, message.owner_name) for _, ns, n in self._departed)

    def _check_outbox(self) -> None:
        count, size = self.store.outbox_usage()
        if count >= self.outbox.max_reports or size >= self.outbox.max_bytes:
            raise ReportRefused(f"the outbox to the GM is full ({count} reports, {size} bytes; bounds "
                                f"{self.outbox.max_reports} reports, {self.outbox.max_bytes} bytes): the GM is not "
                                "taking reports", self.outbox.retry_after)

    def _keep(self, message: WorkerMessage, client: str) -> None:
        kept = self._expire()
        body = orjson.dumps(dataclasses.asdict(message))
        new = NewReport((message.owner_kind, message.namespace, message.owner_name), client, message.name, len(body),
                        self._sent(message))
        room = make_room(kept, new, self.pending)
        if room:
            self._drop(room, "evicted", "dropped the worker reports kept for jobs the GM has not sent this node, to "
                       "keep a report of another client", for_object=f"{message.namespace}/{message.owner_name}",
                       for_client=client)
        self.store.add_pending(message.owner_kind, message.namespace, message.owner_name, self._clock(), body,
                               worker=message.name, client=client, sent=new.sent)
        hint = ({"hint": f"ownerName {SDK_DEFAULT_JOB_NAME!r} is the Sedna SDK's JOB_NAME default: the worker may "
                         "have no JOB_NAME"} if message.owner_name == SDK_DEFAULT_JOB_NAME else {})
        log.info("kept a worker report for a job this node does not hold yet; delivered when it arrives",
                 worker=message.name, owner_kind=message.owner_kind, client=client,
                 object=f"{message.namespace}/{message.owner_name}", phase=message.kind, status=message.status, **hint)

    def _hand_over(self, kind: str, entry: PendingEntry, attributed_to: str = "") -> None:
        name = attributed_to or entry.name
        where = {"kind": kind, "object": f"{entry.namespace}/{name}"}
        try:
            message = WorkerMessage(**orjson.loads(entry.message))
            with self.store.handing_over(entry.seq):  # its relay to the outbox takes it out of lc_pending
                self.managers[kind].add_worker_message(dataclasses.replace(message, owner_kind=kind, owner_name=name))
        except Exception:
            log.exception("a kept worker report could not be delivered; dropped", **where)
            return
        finally:
            self.store.remove_pending([entry.seq])  # when the manager relayed nothing (or failed)
        if attributed_to:
            self._log_attribution(message, attributed_to)
        log.info("delivered a kept worker report to its job", worker=message.name, phase=message.kind,
                 status=message.status, waited_seconds=round(self._clock() - entry.received, 3), **where)

    def _expire(self) -> list[KeptReport]:
        """Drop the kept reports past their age; returns the ones left."""
        kept = self.store.kept_reports()
        old = expired(kept, self._clock(), self._connected_since, self.pending)
        if not old:
            return kept
        self._drop(old, "expired", "dropped worker reports kept for jobs that did not arrive in time",
                   max_age_seconds=self.pending.max_age, unsent_max_age_seconds=self.pending.unsent_max_age,
                   oldest_seconds=round(self._clock() - min(r.received for r in old), 3))
        gone = {r.seq for r in old}
        return [r for r in kept if r.seq not in gone]

    def _drop(self, reports: list[KeptReport], reason: str, event: str, **fields: object) -> None:
        self.store.remove_pending([r.seq for r in reports])
        self._dropped(reason, len(reports))
        log.warning(event, reports=len(reports), jobs=len({r.owner for r in reports}),
                    unsent=sum(not r.sent for r in reports), examples=_examples(reports), **fields)


def _examples(reports: Iterable[KeptReport], limit: int = 5) -> list[str]:
    """A few of the reports' jobs (``kind namespace/name``), for a log line about many."""
    return [f"{k} {ns}/{n}" for k, ns, n in list(dict.fromkeys(r.owner for r in reports))[:limit]]


def _remember(seen: OrderedDict[tuple[str, str, str], None], key: tuple[str, str, str]) -> None:
    seen[key] = None
    seen.move_to_end(key)
    while len(seen) > REMEMBERED:
        seen.popitem(last=False)
