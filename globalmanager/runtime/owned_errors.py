"""Errors of the owned-object helpers (a module of their own: ``owned`` needs informers, the builders do not)."""

from __future__ import annotations

__all__ = ["NotOwnedError"]


class NotOwnedError(Exception):
    """An object with the name a worker needs exists and is not controlled by the job."""
