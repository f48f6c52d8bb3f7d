"""``Reconciler``: an object whose ``sync(key)`` a ``Controller`` runs (a plain function does too)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from reconcile.result import Result

__all__ = ["Reconciler", "SyncFunc"]

SyncFunc = Callable[[str], "Result | None"]


@runtime_checkable
class Reconciler(Protocol):
    def sync(self, key: str) -> Result | None:
        """Bring the object ``key`` (``namespace/name``) to its desired state. Return ``None``/``Result()`` when
        done, a ``Result`` to be synced again, raise ``RetryableError``/``TerminalError`` (or anything else: a
        rate-limited retry) when it failed. Never called for one key by two workers at once."""
        ...
