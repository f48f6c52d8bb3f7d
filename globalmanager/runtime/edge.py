"""What a controller sees of the edge link (GM ↔ LC): send an object to a node, receive the nodes' reports.

Controllers depend only on this module; ``globalmanager.messagelayer`` implements ``EdgeLink`` over websockets,
and ``RecordingEdgeLink`` stands in for it in unit tests. Mirrors Go Sedna's ``DownstreamSendFunc`` /
``UpstreamHandlerAddFunc`` pair (``pkg/globalmanager/runtime/types.go``) with typed values.

Guarantees an ``EdgeLink`` gives:
* ``send_to_edge`` never blocks on the network and never raises for an offline or unknown node: per node only the
  latest message per object is kept until it is delivered.
* An upstream handler is called for one report at a time per object, never for a report whose node was never sent
  that object, and only for operation ``status``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "DELETE",
    "INSERT",
    "OPERATIONS_DOWN",
    "STATUS",
    "UPDATE",
    "EdgeLink",
    "RecordingEdgeLink",
    "SentMessage",
    "UpstreamHandler",
    "UpstreamMessage",
]

INSERT = "insert"
UPDATE = "update"
DELETE = "delete"
STATUS = "status"
OPERATIONS_DOWN = (INSERT, UPDATE, DELETE)


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


class EdgeLink(Protocol):
    def send_to_edge(self, node: str, operation: str, obj: Mapping[str, Any]) -> None:
        """Queue ``operation`` (insert/update/delete) of ``obj`` (a whole API object with ``kind``) for ``node``."""
        ...

    def add_upstream_handler(self, kind: str, handler: UpstreamHandler) -> None:
        """Route reports about objects of ``kind`` (any case) to ``handler``; a kind has at most one handler."""
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

    def report(self, node: str, namespace: str, kind: str, name: str, content: Mapping[str, Any]) -> None:
        """Deliver a ``status`` report as the message layer would."""
        self.handlers[kind.lower()](UpstreamMessage(node, namespace, kind.lower(), name, STATUS, content))

    def sent_to(self, node: str) -> list[SentMessage]:
        with self._lock:
            return [m for m in self.sent if m.node == node]
