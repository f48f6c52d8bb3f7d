"""What the GM keeps per edge node: the outgoing queue (latest message per object), what the node holds, and the
ids of the reports it sent.

Guarantees:
* Per object only the latest message waits; messages of one object are delivered in the order they were queued
  (a newer message replaces an undelivered older one), never two at once.
* A failed write puts the message back (unless a newer one arrived meanwhile) and re-queues it with rate limiting.
* Bounded: at most one waiting message per object routed to or held by the node. A ``delete`` of an object the node
  never received cancels the waiting ``insert`` instead of queueing, so a node that never connects holds at most
  one message per object currently routed to it. The remembered report ids are capped at ``max_seen_ids``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from apis.edge import DELETE
from workqueue import ItemExponentialFailureRateLimiter, RateLimitingQueue

__all__ = ["DEFAULT_MAX_SEEN_IDS", "Node", "ObjectKey", "Outgoing", "Wake"]

ObjectKey = tuple[str, str, str]
"""``(kind, namespace, name)``, kind lower-cased."""

DEFAULT_MAX_SEEN_IDS = 4096

# a failed write is retried after 50 ms, doubling up to 10 s (the node's next connection)
_RETRY_BASE = 0.05
_RETRY_MAX = 10.0


@dataclass(frozen=True)
class Outgoing:
    key: ObjectKey
    operation: str
    text: str  # the encoded frame


@dataclass(frozen=True)
class Wake:
    """Queued when a session ends so that its writer, blocked in ``get``, returns."""

    session_id: int


class Node:
    """Outgoing queue and bookkeeping of one node. ``session`` is the node's current connection (or ``None``)."""

    def __init__(self, name: str, on_pending: Callable[[str, int], None], max_seen_ids: int = DEFAULT_MAX_SEEN_IDS):
        self.name = name
        self.lock = threading.Lock()
        self.queue = RateLimitingQueue(ItemExponentialFailureRateLimiter(_RETRY_BASE, _RETRY_MAX))
        self.session: Any = None
        self._on_pending = on_pending
        self._pending: dict[ObjectKey, Outgoing] = {}
        self._inflight: dict[ObjectKey, Outgoing] = {}
        self._routed: set[ObjectKey] = set()  # latest queued operation is insert/update
        self._held: set[ObjectKey] = set()  # delivered insert/update, no delete delivered since
        self._seen: OrderedDict[str, bool] = OrderedDict()  # report id → applied
        self._max_seen = max_seen_ids

    # -- downstream -----------------------------------------------------------------------------------------------
    def put(self, msg: Outgoing) -> None:
        """Queue ``msg``, replacing an undelivered message of the same object."""
        with self.lock:
            if msg.operation == DELETE:
                self._routed.discard(msg.key)
                if msg.key not in self._held and msg.key not in self._inflight:
                    if self._pending.pop(msg.key, None) is not None:
                        self._on_pending(self.name, len(self._pending))
                    return
            else:
                self._routed.add(msg.key)
            self._pending[msg.key] = msg
            self._on_pending(self.name, len(self._pending))
        self.queue.add(msg.key)

    def assume_held(self, key: ObjectKey) -> None:
        """Treat ``key`` as held by the node (a later delete is sent, not just cancelled): for objects the node may
        hold from an earlier connection, which this GM did not deliver."""
        with self.lock:
            self._held.add(key)

    def take(self, key: ObjectKey) -> Outgoing | None:
        """The writer takes the waiting message of ``key`` (``None`` if there is none any more)."""
        with self.lock:
            msg = self._pending.pop(key, None)
            if msg is not None:
                self._inflight[key] = msg
                self._on_pending(self.name, len(self._pending))
            return msg

    def delivered(self, msg: Outgoing) -> None:
        with self.lock:
            self._inflight.pop(msg.key, None)
            if msg.operation == DELETE:
                self._held.discard(msg.key)
            else:
                self._held.add(msg.key)
        self.queue.forget(msg.key)

    def failed(self, msg: Outgoing) -> None:
        """Put ``msg`` back (a newer message of the object wins) and re-queue it with rate limiting."""
        with self.lock:
            self._inflight.pop(msg.key, None)
            if msg.key not in self._pending:
                self._pending[msg.key] = msg
                self._on_pending(self.name, len(self._pending))
        self.queue.add_rate_limited(msg.key)

    def is_routed(self, key: ObjectKey) -> bool:
        """Whether the latest message queued for ``key`` was an insert/update (the node may report on it)."""
        with self.lock:
            return key in self._routed

    def pending(self) -> int:
        with self.lock:
            return len(self._pending)

    def idle(self) -> bool:
        """Nothing queued, routed or held, no connection: the GM may forget this node."""
        with self.lock:
            return self.session is None and not (self._pending or self._inflight or self._routed or self._held)

    # -- upstream report ids ---------------------------------------------------------------------------------------
    def first_sight(self, report_id: str) -> bool | None:
        """Record ``report_id``: ``None`` when new (apply it), else whether it was applied already."""
        with self.lock:
            applied = self._seen.get(report_id)
            if applied is None:
                self._seen[report_id] = False
                while len(self._seen) > self._max_seen:
                    self._seen.popitem(last=False)
            return applied

    def applied(self, report_id: str) -> None:
        with self.lock:
            if report_id in self._seen:
                self._seen[report_id] = True
