"""``Reconciler``: an object whose ``sync(key)`` a ``Controller`` runs (a plain function does too)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Protocol, TypeVar, runtime_checkable

from reconcile.result import Result

__all__ = ["KeyT", "Reconciler", "SyncFunc"]

KeyT = TypeVar("KeyT", bound=Hashable)
KeyT_contra = TypeVar("KeyT_contra", bound=Hashable, contravariant=True)

SyncFunc = Callable[[KeyT], "Result | None"]


@runtime_checkable
class Reconciler(Protocol[KeyT_contra]):
    def sync(self, key: KeyT_contra) -> Result | None:
        """Bring the object ``key`` (usually ``namespace/name``; any hashable key works) to its desired state. Return ``None``/``Result()`` when
        done, a ``Result`` to be synced again, raise ``RetryableError``/``TerminalError`` (or anything else: a
        rate-limited retry) when it failed. Never called for one key by two workers at once."""
        ...
