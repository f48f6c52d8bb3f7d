"""What Go Sedna's joint-inference and federated-learning managers share: hold the objects the GM sent, relay the
workers' reports upstream.

A ``RelayManager`` keeps the objects of its kind the GM sent this node (the LC persists them and hands them back at
start, see ``base``); it never reports on its own. A worker report (``ownerKind`` = the manager's kind) about an
object it holds goes upstream at once, durably (``ctx.report``), with Go's header ``{namespace, resourceKind: kind,
resourceName: ownerName, operation: status}`` and Go's ``UpstreamMessage`` content ``{"phase": <kind>, "status":
<status>, "output": {"models": <results>, "ownerInfo": <ownerInfo>}}`` (``models`` only where the Go manager sets
them, ``relays_results``; empty ones are ``null``, as Go marshals nil).
A report about an object this node does not hold is dropped and logged with the reason (Go's LC relayed it and the
GM refused it; Go's incremental-learning manager drops it silently). Reports are relayed in the order they arrive.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import structlog

from localcontroller.worker import WorkerMessage

from .base import ManagerContext

__all__ = ["RelayManager"]

SDK_DEFAULT_JOB_NAME = "sedna"  # the SDK's JOB_NAME default, reported by a worker that lacks JOB_NAME


class RelayManager:
    """Subclasses set ``kind`` and ``relays_results``. Safe from any thread."""

    kind: str = ""
    relays_results: bool = True

    def __init__(self, ctx: ManagerContext) -> None:
        self.ctx = ctx
        self._log = structlog.get_logger(f"sedna-lc.{self.kind}").bind(kind=self.kind)
        self._lock = threading.Lock()  # also keeps the relayed reports in arrival order
        self._objects: dict[tuple[str, str], Mapping[str, Any]] = {}

    # -- Manager ----------------------------------------------------------------------------------------------------
    def insert(self, obj: Mapping[str, Any]) -> None:
        key = _key(obj)
        with self._lock:
            known = key in self._objects
            self._objects[key] = obj
        if not known:
            self._log.info("holding object", object="/".join(key))

    def delete(self, obj: Mapping[str, Any]) -> None:
        key = _key(obj)
        with self._lock:
            held = self._objects.pop(key, None) is not None
        if held:
            self._log.info("dropped object", object="/".join(key))

    def start(self, stop: threading.Event) -> None:
        return None

    def add_worker_message(self, message: WorkerMessage) -> None:
        key = (message.namespace, message.owner_name)
        where = {"object": "/".join(key), "worker": message.name, "phase": message.kind, "status": message.status}
        with self._lock:
            if key not in self._objects:
                self._log.warning("worker report dropped", reason=self._unknown_reason(message), **where)
                return
            self.ctx.report(message.namespace, self.kind, message.owner_name, self.content(message))
        self._log.debug("worker report relayed", **where)

    # -- for other managers and tests -------------------------------------------------------------------------------
    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The object as the GM last sent it, or ``None``."""
        with self._lock:
            return self._objects.get((namespace, name))

    def content(self, message: WorkerMessage) -> dict[str, Any]:
        """The upstream report for ``message``, as Go's LC marshals its ``UpstreamMessage``."""
        models = (message.results or None) if self.relays_results else None
        return {"phase": message.kind, "status": message.status,
                "output": {"models": models, "ownerInfo": message.owner_info or None}}

    def _unknown_reason(self, message: WorkerMessage) -> str:
        reason = f"this node holds no {self.kind} {message.namespace}/{message.owner_name}"
        if message.owner_name == SDK_DEFAULT_JOB_NAME:
            reason += " (ownerName 'sedna' is the Sedna SDK's JOB_NAME default: the worker has no JOB_NAME)"
        return reason


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    md = obj.get("metadata") or {}
    return str(md.get("namespace") or ""), str(md.get("name") or "")
