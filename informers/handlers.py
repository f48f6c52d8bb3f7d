"""Event handlers (client-go tools/cache ``ResourceEventHandler`` and friends).

A handler has ``on_add(obj, is_in_initial_list)``, ``on_update(old, new)`` and ``on_delete(obj)``; ``on_delete`` may
receive a ``DeletedFinalStateUnknown`` when the deletion was inferred from a relist. Objects are shared and
read-only.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .keys import Obj, ObjOrTombstone

__all__ = [
    "ResourceEventHandler",
    "EventHandlerLike",
    "ResourceEventHandlerFuncs",
    "ResourceEventHandlerDetailedFuncs",
    "FilteringResourceEventHandler",
    "on_add_caller",
]


@runtime_checkable
class ResourceEventHandler(Protocol):
    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None: ...

    def on_update(self, old_obj: Obj, new_obj: Obj) -> None: ...

    def on_delete(self, obj: ObjOrTombstone) -> None: ...


class EventHandlerLike(Protocol):
    """What ``add_event_handler`` accepts: a ``ResourceEventHandler`` or one whose ``on_add(obj)`` takes no
    initial-list flag (``on_add_caller`` adapts it)."""

    @property
    def on_add(self) -> Callable[..., None]: ...

    @property
    def on_update(self) -> Callable[[Obj, Obj], None]: ...

    @property
    def on_delete(self) -> Callable[[ObjOrTombstone], None]: ...


@dataclass
class _HandlerFuncs:
    """Update and delete from optional functions; subclasses define how ``add_func`` is called."""

    add_func: Callable[..., None] | None = None
    update_func: Callable[[Obj, Obj], None] | None = None
    delete_func: Callable[[ObjOrTombstone], None] | None = None

    def on_update(self, old_obj: Obj, new_obj: Obj) -> None:
        if self.update_func is not None:
            self.update_func(old_obj, new_obj)

    def on_delete(self, obj: ObjOrTombstone) -> None:
        if self.delete_func is not None:
            self.delete_func(obj)


@dataclass
class ResourceEventHandlerFuncs(_HandlerFuncs):
    """Handler from optional functions; ``add_func(obj)`` does not get the initial-list flag."""

    add_func: Callable[[Obj], None] | None = None

    def on_add(self, obj: Obj, is_in_initial_list: bool = False) -> None:
        if self.add_func is not None:
            self.add_func(obj)


@dataclass
class ResourceEventHandlerDetailedFuncs(_HandlerFuncs):
    """Like ``ResourceEventHandlerFuncs`` but ``add_func(obj, is_in_initial_list)``."""

    add_func: Callable[[Obj, bool], None] | None = None

    def on_add(self, obj: Obj, is_in_initial_list: bool = False) -> None:
        if self.add_func is not None:
            self.add_func(obj, is_in_initial_list)


@dataclass
class FilteringResourceEventHandler:
    """Forwards only what passes ``filter_func``; an update is turned into an add or a delete when the object
    enters or leaves the filtered set (``filter_func`` may see a ``DeletedFinalStateUnknown`` on delete)."""

    filter_func: Callable[[ObjOrTombstone], bool]
    handler: EventHandlerLike

    def __post_init__(self) -> None:
        self._add = on_add_caller(self.handler)

    def on_add(self, obj: Obj, is_in_initial_list: bool = False) -> None:
        if self.filter_func(obj):
            self._add(obj, is_in_initial_list)

    def on_update(self, old_obj: Obj, new_obj: Obj) -> None:
        new_ok = self.filter_func(new_obj)
        old_ok = self.filter_func(old_obj)
        if new_ok and old_ok:
            self.handler.on_update(old_obj, new_obj)
        elif new_ok:
            self._add(new_obj, False)
        elif old_ok:
            self.handler.on_delete(old_obj)

    def on_delete(self, obj: ObjOrTombstone) -> None:
        if self.filter_func(obj):
            self.handler.on_delete(obj)


def on_add_caller(handler: EventHandlerLike) -> Callable[[Obj, bool], None]:
    """``handler.on_add`` as a two-argument callable, whether it takes the initial-list flag or not."""
    for attr in ("on_add", "on_update", "on_delete"):
        if not callable(getattr(handler, attr, None)):
            raise TypeError(f"event handler {handler!r} has no {attr}() method")
    on_add: Callable[..., None] = handler.on_add
    try:
        params = inspect.signature(on_add).parameters.values()
    except (TypeError, ValueError):
        return on_add
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params):
        return on_add
    return lambda obj, _initial: on_add(obj)
