"""Self-healing bookkeeping kept per controller instance and per job (never controller-wide state about one job).

* ``RecreatedPods``: names of pods recreated in the last ``ttl`` seconds (a ``cachetools.TTLCache``), so a pod deleted
  again right away is not recreated in a loop.
* ``PreventRecreation``: the job keys whose pods are being replaced on purpose (spec update); their deleted pods are
  not recreated.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from cachetools import TTLCache

__all__ = ["RecreatedPods", "PreventRecreation", "RECREATION_TTL"]

RECREATION_TTL = 5.0


class RecreatedPods:
    """Thread-safe TTL set of pod keys (``namespace/name``); ``timer`` is injectable for tests."""

    def __init__(self, ttl: float = RECREATION_TTL, maxsize: int = 10_000, timer: Callable[[], float] = time.monotonic):
        self.ttl = ttl
        self._timer = timer
        self._cache: TTLCache[str, float] = TTLCache(maxsize=maxsize, ttl=ttl, timer=timer)  # key → expiry time
        self._lock = threading.Lock()

    def try_mark(self, key: str) -> bool:
        """Mark ``key`` as recreated; False when it already was within the TTL."""
        with self._lock:
            if key in self._cache:
                return False
            self._cache[key] = self._timer() + self.ttl
            return True

    def remaining(self, key: str) -> float:
        """Seconds until ``key`` may be recreated again (0 when it may be now)."""
        with self._lock:
            expiry = self._cache.get(key)
        return 0.0 if expiry is None else max(0.0, expiry - self._timer())

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


class PreventRecreation:
    """Job keys whose pods must not be recreated right now."""

    def __init__(self) -> None:
        self._keys: set[str] = set()
        self._lock = threading.Lock()

    def add(self, job_key: str) -> None:
        with self._lock:
            self._keys.add(job_key)

    def discard(self, job_key: str) -> None:
        with self._lock:
            self._keys.discard(job_key)

    def __contains__(self, job_key: object) -> bool:
        with self._lock:
            return job_key in self._keys

    @contextmanager
    def hold(self, job_key: str) -> Iterator[None]:
        self.add(job_key)
        try:
            yield
        finally:
            self.discard(job_key)
