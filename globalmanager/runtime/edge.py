"""What a controller sees of the edge link (GM ↔ LC): send an object to a node, receive the nodes' reports.

Controllers depend only on this module; ``globalmanager.messagelayer`` implements ``EdgeLink`` over websockets,
and ``RecordingEdgeLink`` stands in for it in unit tests. Mirrors Go Sedna's ``DownstreamSendFunc`` /
``UpstreamHandlerAddFunc`` pair (``pkg/globalmanager/runtime/types.go``) with typed values.

Guarantees an ``EdgeLink`` gives:
* ``send_to_edge`` never blocks on the network and never raises for an offline or unknown node: per node only the
  latest message per object is kept until it is delivered.
* An upstream handler is called for one report at a time per object, never for a report whose node was never sent
  that object, and only for operation ``status``. A handler that raises ``InvalidReport`` refuses the report (it is
  counted as a rejected frame and never retried); other exceptions are retried with rate limiting.
* On every (re)connection of a node, each state source registered for a kind is asked for the objects of that kind
  the node should hold; they are (re)sent as ``insert``, so a node never depends on a replay of old messages. A
  ``resync`` tells the node to drop what it holds of a kind beyond that list only when the kind's source answered in
  full: a source that raises (``IncompleteState`` for a partial answer) leaves the node's objects of that kind alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from apis.edge import DELETE, INSERT, STATUS, UPDATE
from apis.edge import DOWNSTREAM_OPERATIONS as OPERATIONS_DOWN

__all__ = [
    "DELETE",
    "INSERT",
    "OPERATIONS_DOWN",
    "STATUS",
    "UPDATE",
    "EdgeLink",
    "IncompleteState",
    "InvalidReport",
    "NotEntitled",
    "RecordingEdgeLink",
    "SentMessage",
    "StateSource",
    "UpstreamHandler",
    "UpstreamMessage",
]


@dataclass(frozen=True)
class UpstreamMessage:
    """One report from an LC, decoded: ``kind`` is lower-cased (``dataset``), ``content`` the JSON report."""

    node: str
    namespace: str
    kind: str
    name: str
    operation: str
    content: Mapping[str, Any]


UpstreamHandler = Callable[[UpstreamMessage], None]

StateSource = Callable[[str], Iterable[Mapping[str, Any]]]
"""``source(node)`` → the objects (of one kind, as they are to be sent) that ``node`` should hold now."""


class IncompleteState(Exception):
    """Raised by a state source that could prepare only ``objects`` of what the node should hold (e.g. a Secret could
    not be read now): those are sent, and the node keeps what it holds of the kind."""

    def __init__(self, objects: Iterable[Mapping[str, Any]], reason: str) -> None:
        super().__init__(reason)
        self.objects = list(objects)


class InvalidReport(ValueError):
    """Raised by an upstream handler for a report it refuses (bad content): never retried, counted as rejected
    (``sedna_gm_edge_rejected_frames_total{reason}``, the class's ``reason``)."""

    reason = "invalid_report"


class NotEntitled(InvalidReport):
    """Raised by an upstream handler for a report the relaying node is not entitled to (it is not the job's resident
    node, and no worker the report speaks for runs there: Kubernetes' NodeRestriction, for the edge)."""

    reason = "not_entitled"


class EdgeLink(Protocol):
    def send_to_edge(self, node: str, operation: str, obj: Mapping[str, Any]) -> None:
        """Queue ``operation`` (insert/update/delete) of ``obj`` (a whole API object with ``kind``) for ``node``."""
        ...

    def add_upstream_handler(self, kind: str, handler: UpstreamHandler) -> None:
        """Route reports about objects of ``kind`` (any case) to ``handler``; a kind has at most one handler."""
        ...

    def add_state_source(self, kind: str, source: StateSource) -> None:
        """Register what nodes should hold of ``kind``; asked on every (re)connection of a node. One per kind."""
        ...


@dataclass(frozen=True)
class SentMessage:
    node: str
    operation: str
    obj: Mapping[str, Any]


@dataclass
class RecordingEdgeLink:
    """An ``EdgeLink`` for unit tests: remembers what was sent, delivers reports synchronously via ``report``."""

    sent: list[SentMessage] = field(default_factory=list)
    handlers: dict[str, UpstreamHandler] = field(default_factory=dict)
    sources: dict[str, StateSource] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def send_to_edge(self, node: str, operation: str, obj: Mapping[str, Any]) -> None:
        if operation not in OPERATIONS_DOWN:
            raise ValueError(f"unknown downstream operation {operation!r}; expected one of {OPERATIONS_DOWN}")
        with self._lock:
            self.sent.append(SentMessage(node, operation, obj))

    def add_upstream_handler(self, kind: str, handler: UpstreamHandler) -> None:
        key = kind.lower()
        if key in self.handlers:
            raise ValueError(f"an upstream handler for kind {key!r} is already registered")
        self.handlers[key] = handler

    def add_state_source(self, kind: str, source: StateSource) -> None:
        key = kind.lower()
        if key in self.sources:
            raise ValueError(f"a state source for kind {key!r} is already registered")
        self.sources[key] = source

    def state_for(self, node: str) -> list[Mapping[str, Any]]:
        """What a (re)connecting ``node`` would be sent, from every registered source."""
        sent: list[Mapping[str, Any]] = []
        for source in self.sources.values():
            try:
                sent.extend(source(node))
            except IncompleteState as partial:
                sent.extend(partial.objects)
        return sent

    def report(self, node: str, namespace: str, kind: str, name: str, content: Mapping[str, Any]) -> None:
        """Deliver a ``status`` report as the message layer would."""
        self.handlers[kind.lower()](UpstreamMessage(node, namespace, kind.lower(), name, STATUS, content))
