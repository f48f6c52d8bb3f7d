"""``Store``: a thread-safe object cache keyed by a key function (client-go tools/cache ``cache``/``NewStore``)."""

from __future__ import annotations

import builtins
from collections.abc import Iterable

from .keys import (
    KeyFunc,
    Obj,
    ObjectKeyError,
    ObjOrTombstone,
    deletion_handling_meta_namespace_key_func,
    meta_namespace_key_func,
)
from .thread_safe_store import Indexers, ThreadSafeStore

__all__ = ["Store"]

_MISSING = ThreadSafeStore.MISSING  # type: ignore[attr-defined]


class Store:
    """Objects by key. ``add`` and ``update`` are both upserts; ``delete`` of an absent key is a no-op.

    Objects are stored and returned as given, never copied: treat them as read-only.
    """

    def __init__(self, key_func: KeyFunc = deletion_handling_meta_namespace_key_func, indexers: Indexers | None = None) -> None:
        self.key_func = key_func
        # names hold no "/" (the API server validates them), so these keys determine the namespace
        keys_fix_namespace = key_func in (deletion_handling_meta_namespace_key_func, meta_namespace_key_func)
        self._store = ThreadSafeStore(indexers, keys_fix_namespace)

    def _key(self, obj: object) -> str:
        try:
            return self.key_func(obj)
        except ObjectKeyError:
            raise
        except Exception as e:
            raise ObjectKeyError(obj, e) from e

    def add(self, obj: Obj) -> None:
        self._store.update(self._key(obj), obj)

    def update(self, obj: Obj) -> None:
        self._store.update(self._key(obj), obj)

    def upsert(self, obj: Obj, key: str | None = None) -> tuple[Obj | None, bool]:
        """Insert or replace in one atomic step; returns ``(previous object | None, existed)``."""
        if key is None:
            try:
                key = self.key_func(obj)
            except Exception as e:
                raise (e if isinstance(e, ObjectKeyError) else ObjectKeyError(obj, e)) from e
        old = self._store.update(key, obj)
        return (None, False) if old is _MISSING else (old, True)

    def delete(self, obj: ObjOrTombstone) -> None:
        self._store.delete(self._key(obj))

    def delete_key(self, key: str) -> None:
        self._store.delete(key)

    def list(self) -> builtins.list[Obj]:
        return self._store.list()

    def list_keys(self) -> builtins.list[str]:
        return self._store.list_keys()

    def get(self, obj: Obj) -> tuple[Obj | None, bool]:
        return self._store.get(self._key(obj))

    def get_by_key(self, key: str) -> tuple[Obj | None, bool]:
        return self._store.get(key)

    def replace(self, items: Iterable[Obj], resource_version: str = "") -> None:
        """Make the store hold exactly ``items`` (later duplicates win); ``resource_version`` is informational."""
        key = self._key
        self._store.replace({key(obj): obj for obj in items})

    def resync(self) -> None:
        """Nothing to do for a plain store (kept for the Store interface)."""

    def __len__(self) -> int:
        return len(self._store)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._store.contains(key)
