"""Event handlers (client-go tools/cache ``ResourceEventHandler`` and friends).

A handler has ``on_add(obj, is_in_initial_list)``, ``on_update(old, new)`` and ``on_delete(obj)``; ``on_delete`` may
receive a ``DeletedFinalStateUnknown`` when the deletion was inferred from a relist. Objects are shared and
read-only.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "ResourceEventHandlerDetailedFuncs",
    "FilteringResourceEventHandler",
    "on_add_caller",
]


@runtime_checkable
class ResourceEventHandler(Protocol):
    def on_add(self, obj: Any, is_in_initial_list: bool) -> None: ...

    def on_update(self, old_obj: Any, new_obj: Any) -> None: ...

    def on_delete(self, obj: Any) -> None: ...


@dataclass
class _HandlerFuncs:
    """Update and delete from optional functions; subclasses define how ``add_func`` is called."""

    add_func: Callable[..., None] | None = None
    update_func: Callable[[Any, Any], None] | None = None
    delete_func: Callable[[Any], None] | None = None

    def on_update(self, old_obj: Any, new_obj: Any) -> None:
        if self.update_func is not None:
            self.update_func(old_obj, new_obj)

    def on_delete(self, obj: Any) -> None:
        if self.delete_func is not None:
            self.delete_func(obj)


@dataclass
class ResourceEventHandlerFuncs(_HandlerFuncs):
    """Handler from optional functions; ``add_func(obj)`` does not get the initial-list flag."""

    add_func: Callable[[Any], None] | None = None

    def on_add(self, obj: Any, is_in_initial_list: bool = False) -> None:
        if self.add_func is not None:
            self.add_func(obj)


@dataclass
class ResourceEventHandlerDetailedFuncs(_HandlerFuncs):
    """Like ``ResourceEventHandlerFuncs`` but ``add_func(obj, is_in_initial_list)``."""

    add_func: Callable[[Any, bool], None] | None = None

    def on_add(self, obj: Any, is_in_initial_list: bool = False) -> None:
        if self.add_func is not None:
            self.add_func(obj, is_in_initial_list)


@dataclass
class FilteringResourceEventHandler:
    """Forwards only what passes ``filter_func``; an update is turned into an add or a delete when the object
    enters or leaves the filtered set (``filter_func`` may see a ``DeletedFinalStateUnknown`` on delete)."""

    filter_func: Callable[[Any], bool]
    handler: Any

    def __post_init__(self) -> None:
        self._add = on_add_caller(self.handler)

    def on_add(self, obj: Any, is_in_initial_list: bool = False) -> None:
        if self.filter_func(obj):
            self._add(obj, is_in_initial_list)

    def on_update(self, old_obj: Any, new_obj: Any) -> None:
        new_ok = self.filter_func(new_obj)
        old_ok = self.filter_func(old_obj)
        if new_ok and old_ok:
            self.handler.on_update(old_obj, new_obj)
        elif new_ok:
            self._add(new_obj, False)
        elif old_ok:
            self.handler.on_delete(old_obj)

    def on_delete(self, obj: Any) -> None:
        if self.filter_func(obj):
            self.handler.on_delete(obj)


def on_add_caller(handler: Any) -> Callable[[Any, bool], None]:
    """``handler.on_add`` as a two-argument callable, whether it takes the initial-list flag or not."""
    for attr in ("on_add", "on_update", "on_delete"):
        if not callable(getattr(handler, attr, None)):
            raise TypeError(f"event handler {handler!r} has no {attr}() method")
    on_add = handler.on_add
    try:
        params = inspect.signature(on_add).parameters.values()
    except (TypeError, ValueError):
        return on_add
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params):
        return on_add
    return lambda obj, _initial: on_add(obj)
