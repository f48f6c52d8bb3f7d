"""Object helpers for tests that write while a controller writes too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apis import errors


def update_with_retry(client: Any, name: str, change: Callable[[dict[str, Any]], None], attempts: int = 20) -> dict[str, Any]:
    """Get ``name``, apply ``change`` to it and ``update`` it, again on a 409 (a controller wrote its status meanwhile)."""
    for attempt in range(attempts):
        obj = client.get(name)
        change(obj)
        try:
            return client.update(obj)
        except errors.ConflictError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def gone(client: Any, name: str) -> bool:
    """Whether ``name`` is absent (``client.get`` answers 404)."""
    try:
        client.get(name)
        return False
    except errors.NotFoundError:
        return True
