"""The model manager (Go Sedna's ``managers/model``): keeps the Models the GM routed to this node for the job
managers (``ctx.manager("model").get(namespace, name)``; ``subscribe`` to hear of every insert). Nothing goes
upstream."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from localcontroller.worker import WorkerMessage

from .base import ManagerContext

__all__ = ["KIND", "ModelManager"]

KIND = "model"


class ModelManager:
    kind = KIND

    def __init__(self, ctx: ManagerContext) -> None:
        self.ctx = ctx
        self._lock = threading.Lock()
        self._models: dict[str, Mapping[str, Any]] = {}
        self._listeners: list[Callable[[str, str], None]] = []

    def insert(self, obj: Mapping[str, Any]) -> None:
        md = obj.get("metadata") or {}
        namespace, name = md.get("namespace") or "", md.get("name") or ""
        with self._lock:
            self._models[f"{namespace}/{name}"] = obj
        for listener in list(self._listeners):
            listener(namespace, name)

    def subscribe(self, listener: Callable[[str, str], None]) -> None:
        """Call ``listener(namespace, name)`` after every insert (it must not block)."""
        self._listeners.append(listener)

    def delete(self, obj: Mapping[str, Any]) -> None:
        md = obj.get("metadata") or {}
        with self._lock:
            self._models.pop(f"{md.get('namespace') or ''}/{md.get('name') or ''}", None)

    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The Model as the GM last sent it (with its ``sedna.io/credential`` annotation), or ``None``."""
        with self._lock:
            return self._models.get(f"{namespace}/{name}")

    def add_worker_message(self, message: WorkerMessage) -> None:
        return None

    def start(self, stop: threading.Event) -> None:
        return None
