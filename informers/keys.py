"""Object keys: ``namespace/name`` (or ``name`` for cluster-scoped objects), and the deletion tombstone.

Port of client-go tools/cache ``MetaNamespaceKeyFunc``, ``DeletionHandlingMetaNamespaceKeyFunc``,
``SplitMetaNamespaceKey``, ``DeletedFinalStateUnknown`` and ``KeyError`` (here ``ObjectKeyError``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from apis.meta import Obj

__all__ = [
    "KeyFunc",
    "Obj",
    "ObjOrTombstone",
    "ObjectKeyError",
    "DeletedFinalStateUnknown",
    "meta_namespace_key_func",
    "deletion_handling_meta_namespace_key_func",
    "split_meta_namespace_key",
    "meta_namespace_index_func",
]

# A key function takes whatever a store or queue holds (an object, a tombstone, an explicit str key...).
KeyFunc = Callable[[Any], str]


class ObjectKeyError(KeyError):
    """No key could be computed for ``obj``; ``err`` says why (client-go ``KeyError``; also a built-in
    ``KeyError``, so ``except KeyError`` catches it)."""

    def __init__(self, obj: object, err: BaseException | str) -> None:
        super().__init__(obj, err)
        self.obj = obj
        self.err = err

    def __str__(self) -> str:
        return f"couldn't create key for object {_short(self.obj)}: {self.err}"



@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown:
    """Handed to delete handlers when the deletion was inferred from a relist rather than seen on a watch.

    ``obj`` is the last state the cache knew (possibly stale, possibly ``None``).
    """

    key: str
    obj: Obj | None


# What a delete handler and a Deleted delta carry: the last state of the object, or a tombstone.
ObjOrTombstone = Obj | DeletedFinalStateUnknown


def _short(obj: object) -> str:
    text = repr(obj)
    return text if len(text) <= 200 else text[:197] + "..."


def meta_namespace_key_func(obj: object) -> str:
    """``namespace/name``, or ``name`` when the namespace is empty; a ``str`` is taken as an explicit key."""
    if obj.__class__ is dict:
        md = obj.get("metadata")
        if md.__class__ is dict or isinstance(md, dict):
            ns = md.get("namespace")
            if ns:
                return f"{ns}/{md.get('name') or ''}"
            return md.get("name") or ""
    elif isinstance(obj, str):
        return obj
    elif isinstance(obj, dict):  # dict subclasses (e.g. OrderedDict) take the slow path
        md = obj.get("metadata")
        if isinstance(md, dict):
            ns = md.get("namespace")
            return f"{ns}/{md.get('name') or ''}" if ns else (md.get("name") or "")
    raise ObjectKeyError(obj, f"object has no meta: {_short(obj)}")


def deletion_handling_meta_namespace_key_func(obj: object) -> str:
    """Like ``meta_namespace_key_func`` but a ``DeletedFinalStateUnknown`` yields its recorded key."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    return meta_namespace_key_func(obj)


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """``(namespace, name)`` of a key; ``("", name)`` for cluster-scoped keys. Raises ``ValueError`` on bad input."""
    if not isinstance(key, str):
        raise ValueError(f"unexpected key type {type(key).__name__}: expected str")
    parts = key.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise ValueError(f"unexpected key format: {key!r}")


def meta_namespace_index_func(obj: Obj) -> list[str]:
    """``[namespace]`` of an object (``[""]`` for cluster-scoped ones); raises ``ValueError`` without metadata.
    (The namespace index function; defined here, next to the key functions it agrees with.)"""
    try:
        return [obj["metadata"].get("namespace") or ""]
    except (KeyError, TypeError, AttributeError):
        raise ValueError(f"object has no meta: {obj!r:.200}") from None
