"""GM → LC: applies the GM's messages to the database and the managers.

Guarantees: the messages of one object are applied one at a time and in the order they arrived; different objects
run on a few worker threads (never one thread per message, unlike Go Sedna's LC). ``insert`` and ``update`` both
store the object and call the manager's ``insert`` (Go's LC rejected ``update``); ``delete`` calls ``delete`` and
forgets the object. After a manager's ``insert`` (here and in ``resume``) ``arrivals.arrived`` hands it the worker
reports kept for that object; before its ``delete``, ``arrivals.departed`` (``delivery.WorkerReports``), which drops
them on a delete for good (``metadata.deletionTimestamp``). A ``delete`` that only takes off this node an object it
never held, while reports are kept for it, is first applied as an ``insert`` so that those reports reach the GM. A
``resync`` deletes, in the same per-object order, what the LC holds of the listed kinds beyond the listed objects. A
bad message (undecodable content, unknown kind or operation) is logged and dropped; a manager that raises is logged
with the object and does not stop anything else."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from apis.edge import DELETE, INSERT, UPDATE, Frame, FrameError
from workqueue.keyed import KeyedFIFO

from .managers import Manager
from .store import Store

__all__ = ["Arrivals", "Change", "Downstream"]

log = structlog.get_logger("sedna-lc.downstream")


@dataclass(frozen=True)
class Change:
    operation: str  # INSERT or DELETE
    kind: str
    namespace: str
    name: str
    obj: Mapping[str, Any]


class Arrivals(Protocol):
    """Told when an object reaches its manager and before it leaves it (the worker reports kept for it)."""

    def arrived(self, kind: str, namespace: str, name: str) -> None: ...

    def waiting(self, kind: str, namespace: str, name: str) -> bool: ...

    def departed(self, kind: str, namespace: str, name: str, gone: bool = False) -> None: ...


class Downstream:
    def __init__(self, store: Store, managers: Mapping[str, Manager], workers: int = 2,
                 arrivals: Arrivals | None = None) -> None:
        self.store = store
        self.managers = managers
        self.arrivals = arrivals
        self._workers = workers
        self._fifo: KeyedFIFO[tuple[str, str, str], Change] = KeyedFIFO()

    def resume(self) -> int:
        """Hand every stored object to its manager (at start, before the GM is reachable); returns how many."""
        count = 0
        for kind, namespace, name, obj in self.store.resources():
            manager = self.managers.get(kind)
            if manager is None:
                continue
            try:
                manager.insert(obj)
                count += 1
            except Exception:
                log.exception("manager failed to resume an object", kind=kind, object=f"{namespace}/{name}")
                continue
            self._arrived(kind, namespace, name)
        return count

    def handle(self, frame: Frame) -> None:
        """Queue one downstream frame (called in the order frames arrive)."""
        h = frame.header
        kind = h.resource_kind.lower()
        where = {"kind": kind, "object": f"{h.namespace}/{h.resource_name}", "operation": h.operation}
        if h.operation not in (INSERT, UPDATE, DELETE):
            log.error("dropped a message with an unknown operation", **where)
            return
        if kind not in self.managers:
            log.error("dropped a message of a kind no manager handles", **where)
            return
        try:
            obj = frame.json()
        except FrameError as exc:
            log.error("dropped a message whose content is not JSON", error=str(exc), **where)
            return
        if h.operation == DELETE and not isinstance(obj, dict):
            obj = {"metadata": {"namespace": h.namespace, "name": h.resource_name}}
        if not isinstance(obj, dict):
            log.error("dropped a message whose content is not an object", **where)
            return
        operation = DELETE if h.operation == DELETE else INSERT
        self.submit(Change(operation, kind, h.namespace, h.resource_name, obj))

    def resync(self, body: object) -> int:
        """Delete what the LC holds of ``body["kinds"]`` that is not in ``body["objects"]``; returns how many."""
        if not isinstance(body, dict) or not isinstance(body.get("kinds"), list):
            log.error("dropped a resync message of the wrong shape")
            return 0
        wanted = {(o.get("kind"), o.get("namespace"), o.get("name"))
                  for o in body.get("objects") or [] if isinstance(o, dict)}
        dropped = 0
        for kind in body["kinds"]:
            if not isinstance(kind, str) or kind not in self.managers:
                continue
            for _, namespace, name, obj in self.store.resources(kind):
                if (kind, namespace, name) not in wanted:
                    self.submit(Change(DELETE, kind, namespace, name, obj))
                    dropped += 1
        if dropped:
            log.info("resync: dropping objects the GM no longer sends this node", count=dropped)
        return dropped

    def submit(self, change: Change) -> None:
        self._fifo.put((change.kind, change.namespace, change.name), change)

    def pending(self) -> int:
        return self._fifo.pending()

    def start(self) -> None:
        self._fifo.start_workers(self._workers, self._process, name="downstream")

    def stop(self, timeout: float = 5.0) -> None:
        self._fifo.stop(timeout)

    def _process(self, key: object, change: Change) -> bool:
        self.apply(change)
        return False  # never retried: a manager that fails has logged why

    def apply(self, change: Change) -> None:
        manager = self.managers[change.kind]
        where = {"kind": change.kind, "object": f"{change.namespace}/{change.name}"}
        try:
            if change.operation == INSERT:
                self.store.put_resource(change.kind, change.namespace, change.name, change.obj)
                manager.insert(change.obj)
                log.debug("applied insert", **where)
                self._arrived(change.kind, change.namespace, change.name)
            else:
                gone = bool((change.obj.get("metadata") or {}).get("deletionTimestamp"))
                if self.arrivals is not None:
                    if not gone and self.arrivals.waiting(change.kind, change.namespace, change.name):
                        # taken off this node before it arrived (Go's GM lost or skipped the insert; the stage it
                        # waited for is over): the job is held for a moment so that the reports kept for it reach
                        # the GM against this copy, as they would have had the insert come
                        log.info("the job was taken off this node before it arrived: relaying the worker reports "
                                 "kept for it first", **where)
                        self.apply(Change(INSERT, change.kind, change.namespace, change.name, change.obj))
                    self.arrivals.departed(change.kind, change.namespace, change.name, gone)
                manager.delete(change.obj)
                self.store.delete_resource(change.kind, change.namespace, change.name)
                log.info("deleted object", **where)
        except Exception:
            log.exception("applying a message from the GM failed", operation=change.operation, **where)

    def _arrived(self, kind: str, namespace: str, name: str) -> None:
        if self.arrivals is None:
            return
        try:
            self.arrivals.arrived(kind, namespace, name)
        except Exception:
            log.exception("delivering the worker reports kept for an object failed; they stay kept", kind=kind,
                          object=f"{namespace}/{name}")
