"""A key → object map guarded by one lock, with incrementally maintained indices.

Port of client-go tools/cache ``threadSafeMap`` + ``storeIndex``. Objects are stored as given (never copied):
treat everything returned as read-only.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

from apis.meta import Obj

from .keys import meta_namespace_index_func

__all__ = ["IndexFunc", "Indexers", "IndexFuncError", "ThreadSafeStore"]

IndexFunc = Callable[[Obj], Sequence[str]]
Indexers = Mapping[str, IndexFunc]

_MISSING: Any = object()
_NO_VALUES: Sequence[str] = []  # the index values of an absent object (never modified)


class IndexFuncError(RuntimeError):
    """An index function failed for an object; names the key and the index (client-go panics here)."""

    def __init__(self, key: str, index_name: str, err: BaseException) -> None:
        super().__init__(f"unable to calculate an index entry for key {key!r} on index {index_name!r}: {err}")
        self.key = key
        self.index_name = index_name
        self.err = err


def _normalise(values: object, name: str, key: str) -> Sequence[str]:
    """An index function's answer as a list or tuple of values: None means no values, a set or other iterable is
    listed, a lone str (almost always a forgotten ``[...]``) is an error naming the key and the index."""
    if values is None:
        return ()
    if isinstance(values, str):
        raise IndexFuncError(key, name, TypeError(f"index function returned the str {values!r}, expected a list "
                                                  "of str"))
    try:
        return list(cast("Iterable[str]", values))
    except TypeError as e:
        raise IndexFuncError(key, name, TypeError(f"index function returned {type(values).__name__}, expected a "
                                                  "list of str")) from e


def _index_values(name: str, fn: IndexFunc, key: str, obj: Obj) -> Sequence[str]:
    try:
        values = fn(obj)
    except Exception as e:
        raise IndexFuncError(key, name, e) from e
    if values.__class__ is list or values.__class__ is tuple:  # fast path
        return values
    return _normalise(values, name, key)


class ThreadSafeStore:
    """The storage behind ``Store`` and ``Indexer``: every method is atomic."""

    __slots__ = ("_lock", "_items", "_indexers", "_indices", "_keys_fix_namespace", "_replace_indexers")

    def __init__(self, indexers: Indexers | None = None, keys_fix_namespace: bool = False) -> None:
        """``keys_fix_namespace``: keys are ``namespace/name`` keys, so an object stored again under the same key
        has the same namespace and its ``meta_namespace_index_func`` entry need not be recomputed."""
        self._lock = threading.Lock()
        self._keys_fix_namespace = keys_fix_namespace
        self._items: dict[str, Obj] = {}
        self._indexers: dict[str, IndexFunc] = dict(indexers or {})
        # index name -> indexed value -> set of keys
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}
        self._replace_indexers = self._indexers_for_replacements()

    def _indexers_for_replacements(self) -> tuple[tuple[str, IndexFunc], ...]:
        """The (name, function) pairs to recompute when an object replaces one stored under the same key."""
        return tuple((name, fn) for name, fn in self._indexers.items()
                     if not (self._keys_fix_namespace and fn is meta_namespace_index_func))

    # -- Store -----------------------------------------------------------------------------------------------------
    def add(self, key: str, obj: Obj) -> None:
        self.update(key, obj)

    def update(self, key: str, obj: Obj) -> Any:
        """Insert or replace; returns the previous object or ``ThreadSafeStore.MISSING``.

        Index values are computed before anything changes, so a failing index function leaves the store intact.
        """
        with self._lock:
            items = self._items
            old = items.get(key, _MISSING)
            if not (self._replace_indexers if old is not _MISSING else self._indexers):
                items[key] = obj  # no index to change: the common watch update (namespace index, namespace keys)
                return old
            changes = None
            for name, fn in self._indexers.items() if old is _MISSING else self._replace_indexers:
                try:
                    news = fn(obj)
                    olds = fn(old) if old is not _MISSING else _NO_VALUES
                except Exception as e:
                    raise IndexFuncError(key, name, e) from e
                if news.__class__ is not list:
                    news = _normalise(news, name, key)
                if olds.__class__ is not list:
                    olds = _normalise(olds, name, key)
                if len(news) == 1 and len(olds) == 1 and news[0] == olds[0]:
                    continue  # fast path: the common case of an unchanged single value
                if changes is None:
                    changes = []
                changes.append((name, olds, news))
            items[key] = obj
            if changes is not None:
                self._apply_changes(key, changes)
            return old

    def _apply_changes(self, key: str, changes: Sequence[tuple[str, Sequence[str] | None, Sequence[str] | None]]) -> None:
        indices = self._indices
        for name, olds, news in changes:
            index = indices[name]
            for v in olds or ():
                keys = index.get(v)
                if keys is not None:
                    keys.discard(key)
                    if not keys:  # never keep empty sets around (kubernetes#84959)
                        del index[v]
            for v in news or ():
                keys = index.get(v)
                if keys is None:
                    index[v] = {key}
                else:
                    keys.add(key)

    def delete(self, key: str) -> Any:
        """Remove ``key`` (no-op when absent); returns the removed object or ``MISSING``."""
        with self._lock:
            old = self._items.get(key, _MISSING)
            if old is _MISSING:
                return old
            changes = [(name, _index_values(name, fn, key, old), None) for name, fn in self._indexers.items()]
            del self._items[key]
            if changes:
                self._apply_changes(key, changes)
            return old

    def get(self, key: str) -> tuple[Obj | None, bool]:
        with self._lock:
            obj = self._items.get(key, _MISSING)
        return (None, False) if obj is _MISSING else (obj, True)

    def contains(self, key: str) -> bool:
        return key in self._items

    def list(self) -> builtins.list[Obj]:
        with self._lock:
            return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def replace(self, items: Mapping[str, Obj]) -> None:
        """Swap in ``items`` wholesale and rebuild every index from scratch."""
        new_items = dict(items)
        indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}
        with self._lock:
            for key, obj in new_items.items():
                for name, fn in self._indexers.items():
                    index = indices[name]
                    for v in _index_values(name, fn, key, obj):
                        keys = index.get(v)
                        if keys is None:
                            index[v] = {key}
                        else:
                            keys.add(key)
            self._items = new_items
            self._indices = indices

    # -- Indexer ---------------------------------------------------------------------------------------------------
    def _index_func(self, name: str) -> IndexFunc:
        fn = self._indexers.get(name)
        if fn is None:
            raise ValueError(f"index with name {name!r} does not exist")
        return fn

    def index(self, name: str, obj: Obj) -> builtins.list[Obj]:
        """Objects sharing any of ``obj``'s values on index ``name``."""
        with self._lock:
            fn = self._index_func(name)
            values = _normalise(fn(obj), name, "<queried object>")
            index = self._indices[name]
            if len(values) == 1:
                keys: Iterable[str] = index.get(values[0], ())
            else:
                merged: set[str] = set()
                for v in values:
                    merged.update(index.get(v, ()))
                keys = merged
            items = self._items
            return [items[k] for k in keys]

    def index_keys(self, name: str, value: str) -> builtins.list[str]:
        with self._lock:
            self._index_func(name)
            return sorted(self._indices[name].get(value, ()))

    def by_index(self, name: str, value: str) -> builtins.list[Obj]:
        with self._lock:
            self._index_func(name)
            items = self._items
            return [items[k] for k in self._indices[name].get(value, ())]

    def list_index_func_values(self, name: str) -> builtins.list[str]:
        with self._lock:
            return list(self._indices.get(name, ()))

    def get_indexers(self) -> dict[str, IndexFunc]:
        with self._lock:
            return dict(self._indexers)

    def add_indexers(self, new_indexers: Indexers) -> None:
        """Register more index functions; existing objects are indexed under them at once (client-go ≥ 1.30)."""
        with self._lock:
            conflict = sorted(set(new_indexers) & set(self._indexers))
            if conflict:
                raise ValueError(f"indexer conflict: {conflict}")
            built: dict[str, dict[str, set[str]]] = {}
            for name, fn in new_indexers.items():
                index: dict[str, set[str]] = {}
                for key, obj in self._items.items():
                    for v in _index_values(name, fn, key, obj):
                        index.setdefault(v, set()).add(key)
                built[name] = index
            self._indexers.update(new_indexers)
            self._replace_indexers = self._indexers_for_replacements()
            self._indices.update(built)


ThreadSafeStore.MISSING = _MISSING  # type: ignore[attr-defined]
