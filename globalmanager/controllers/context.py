"""What a controller is to sedna-gm and what its factory gets (``ControllerContext``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from prometheus_client import CollectorRegistry

from apis.client import ClientsetBase
from apis.record import EventRecorder
from informers import SharedInformerFactory

if TYPE_CHECKING:
    from globalmanager.config import GMConfig
    from globalmanager.runtime.edge import EdgeLink

    from .model.controller import ModelController

__all__ = ["Controller", "ControllerContext", "ControllerFactory"]


class Controller(Protocol):
    name: str
    synced: threading.Event

    def run(self, stop: threading.Event) -> None: ...


@dataclass
class ControllerContext:
    clientset: ClientsetBase
    informer_factory: SharedInformerFactory
    recorder: EventRecorder
    registry: CollectorRegistry | None = None
    workers: dict[str, int] | None = None
    default_workers: int = 2
    drain_timeout: float = 10.0
    config: GMConfig | None = None
    # the GM ↔ LC link; None when sedna-gm runs without one
    edge: EdgeLink | None = None
    # the Model controller jobs route Models with; use controllers.model.model_router(ctx), which creates it
    model_router: ModelController | None = None

    def workers_for(self, name: str) -> int:
        return (self.workers or {}).get(name, self.default_workers)

    def max_workers_for(self, name: str) -> int:
        """What a backlog may grow controller ``name``'s workers to (``GMConfig.max_workers_for``; without a config,
        its worker count: fixed)."""
        return self.config.max_workers_for(name) if self.config is not None else self.workers_for(name)


ControllerFactory = Callable[[ControllerContext], Controller]
