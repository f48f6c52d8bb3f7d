"""Self-healing helpers: ``RecreatedPods``, the keys of objects recreated in the last ``ttl`` seconds (a
``cachetools.TTLCache``, DESIGN's ``recreated_pods``, one per controller in ``jobstate.JobStates``) so that an object
deleted again right away is not recreated in a loop, and ``object_for_recreation``, the copy of a deleted object to
create again."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from cachetools import TTLCache

from apis import meta

__all__ = ["RECREATION_TTL", "RecreatedPods", "object_for_recreation"]

RECREATION_TTL = 5.0


class RecreatedPods:
    """Thread-safe TTL set of pod keys (``namespace/name``; other resources' keys carry a ``resource:`` prefix),
    bounded by ``maxsize``; each entry may name the UID of the job it belongs to (``forget_owner`` drops a job's
    entries). ``timer`` is injectable for tests."""

    def __init__(self, ttl: float = RECREATION_TTL, maxsize: int = 10_000, timer: Callable[[], float] = time.monotonic):
        self.ttl = ttl
        self._timer = timer
        # key → (expiry time, owner job UID)
        self._cache: TTLCache[str, tuple[float, str]] = TTLCache(maxsize=maxsize, ttl=ttl, timer=timer)
        self._lock = threading.Lock()

    def try_mark(self, key: str, owner: str = "") -> bool:
        """Mark ``key`` as recreated (for the job with UID ``owner``); False when it already was within the TTL."""
        with self._lock:
            if key in self._cache:
                return False
            self._cache[key] = (self._timer() + self.ttl, owner)
            return True

    def remaining(self, key: str) -> float:
        """Seconds until ``key`` may be recreated again (0 when it may be now)."""
        with self._lock:
            entry = self._cache.get(key)
        return 0.0 if entry is None else max(0.0, entry[0] - self._timer())

    def forget_owner(self, owner: str) -> None:
        """Drop the entries of the job with UID ``owner`` (the job is gone)."""
        if not owner:
            return
        with self._lock:
            self._cache.expire()
            for key in [k for k, (_, uid) in self._cache.items() if uid == owner]:
                self._cache.pop(key, None)

    def unmark(self, key: str) -> None:
        with self._lock:
            self._cache.pop(key, None)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._cache

    def __len__(self) -> int:
        with self._lock:
            self._cache.expire()
            return len(self._cache)


_SERVER_SET_FIELDS = ("resourceVersion", "uid", "creationTimestamp", "deletionTimestamp",
                      "deletionGracePeriodSeconds", "managedFields", "generation", "selfLink")


def object_for_recreation(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a deleted object to create again: same name, labels, owner and spec; no server-set metadata and no
    status (Sedna clears resourceVersion, UID, status, deletion timestamp and grace period)."""
    new = meta.deep_copy(obj)
    md = new.setdefault("metadata", {})
    for name in _SERVER_SET_FIELDS:
        md.pop(name, None)
    new.pop("status", None)
    return new
