"""What an LC manager is and what it gets (Go Sedna's ``FeatureManager``), and the registry managers join.

A manager handles one kind (``kind``, lower-cased as on the wire). The LC stores every object the GM sends before it
calls ``insert``/``delete`` (so a manager never persists the object itself), calls them for one object at a time and
in the order the GM sent them, and calls ``insert`` again at start for every stored object, before connecting to the
GM. ``update`` from the GM arrives as ``insert``. Worker reports whose ``ownerKind`` is the manager's kind go to
``add_worker_message``. A manager reports upstream with ``ctx.report(...)``: the report is kept in the database until
the GM has it.

To add a manager (joint inference, federated, incremental, lifelong learning...): a module in
``localcontroller/managers/`` with a class satisfying ``Manager`` and one ``KIND: Factory`` line in
``managers/registry.py``'s ``MANAGERS``. Other managers are found with ``ctx.manager("dataset")``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from localcontroller.config import LCConfig
from localcontroller.store import Store
from localcontroller.worker import WorkerMessage

__all__ = ["Manager", "ManagerContext", "ManagerFactory", "Reporter"]


class Reporter(Protocol):
    """``report(namespace, kind, name, content, state=None)``: send a ``status`` report upstream (durably); with
    ``state=(key, value)`` that manager state is stored in the same transaction as the report."""

    def __call__(self, namespace: str, kind: str, name: str, content: Mapping[str, Any], *,
                 state: tuple[str, Any] | None = None) -> None: ...


class Manager(Protocol):
    @property
    def kind(self) -> str:
        """The kind this manager handles, lower-cased as on the wire."""

    def start(self, stop: threading.Event) -> None:
        """Start background work (non-blocking); stop it when ``stop`` is set."""

    def insert(self, obj: Mapping[str, Any]) -> None: ...

    def delete(self, obj: Mapping[str, Any]) -> None: ...

    def add_worker_message(self, message: WorkerMessage) -> None: ...


@dataclass
class ManagerContext:
    config: LCConfig
    store: Store
    report: Reporter
    managers: dict[str, Manager] = field(default_factory=dict)

    def manager(self, kind: str) -> Manager:
        """Another manager, by kind (``KeyError`` when it is not registered)."""
        return self.managers[kind.lower()]


ManagerFactory = Callable[[ManagerContext], Manager]
