"""The controller registry: name → factory(ctx) → controller (with ``run(stop)``), like Sedna's ``registry.go``.

``ControllerContext`` carries what factories need. The ``controllers`` config entry selects a subset by name.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client import CollectorRegistry

from apis.client import ClientsetBase

__all__ = ["Controller", "ControllerContext", "ControllerFactory", "register", "registered", "unregister", "factories", "select"]


class Controller(Protocol):
    name: str
    synced: threading.Event

    def run(self, stop: threading.Event) -> None: ...


@dataclass
class ControllerContext:
    clientset: ClientsetBase
    informer_factory: Any
    recorder: Any
    registry: CollectorRegistry | None = None
    workers: dict[str, int] | None = None
    default_workers: int = 2
    drain_timeout: float = 10.0
    config: Any = None
    # the GM ↔ LC link (globalmanager.runtime.edge.EdgeLink); None when sedna-gm runs without one
    edge: Any = None
    # the Model controller jobs route Models with; use controllers.model.model_router(ctx), which creates it
    model_router: Any = None

    def workers_for(self, name: str) -> int:
        return (self.workers or {}).get(name, self.default_workers)


ControllerFactory = Callable[[ControllerContext], Controller]

_lock = threading.Lock()
_factories: dict[str, ControllerFactory] = {}


def register(name: str, factory: ControllerFactory) -> None:
    """Register (or replace) the factory of controller ``name``."""
    with _lock:
        _factories[name] = factory


def unregister(name: str) -> None:
    """Forget controller ``name`` (a no-op when it is not registered); for tests and plug-ins."""
    with _lock:
        _factories.pop(name, None)


def registered() -> list[str]:
    _load_builtin()
    with _lock:
        return sorted(_factories)


def factories() -> dict[str, ControllerFactory]:
    _load_builtin()
    with _lock:
        return dict(_factories)


def select(enabled: list[str] | None) -> dict[str, ControllerFactory]:
    """The factories named in ``enabled`` (all when ``None``); unknown names raise ``KeyError`` naming them."""
    all_factories = factories()
    if enabled is None:
        return all_factories
    unknown = [n for n in enabled if n not in all_factories]
    if unknown:
        raise KeyError(f"unknown controllers: {', '.join(unknown)}; known: {', '.join(sorted(all_factories))}")
    return {n: all_factories[n] for n in enabled}


_builtin_loaded = False


def _load_builtin() -> None:
    global _builtin_loaded
    if _builtin_loaded:
        return
    _builtin_loaded = True
    from . import builtin  # noqa: F401 - registers the built-in controllers
