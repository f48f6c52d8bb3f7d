"""``LogThrottle``: a repeated event logged at most once per interval per key (a source address, a node, a work
item), the occurrences held back counted and told by the next line, so that a flood of refusals writes a few lines
and no occurrence goes untold. A counter metric next to it still counts every occurrence.

    throttle = LogThrottle(interval=60.0, max_keys=1024, overflow="(other sources)")
    seen = throttle.admit(remote_host)
    if seen.due:
        log.warning("refused a connection", source=seen.key, untold=seen.untold, ...)
    ...
    for key, untold in throttle.flush():  # now and then: what was held back of keys gone quiet
        log.warning("refused connections not logged", source=key, untold=untold)

Guarantees: the first occurrence of a key is due at once, later ones at most once per ``interval`` after the last
due one; ``untold`` is the number of occurrences of that key since its last due line (``flush`` tells them once the
interval has passed, when no new occurrence did). Bounded: at most ``max_keys`` keys are tracked; an occurrence of
a new key beyond that counts under ``overflow`` (its line says which key it was). Thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["DEFAULT_LOG_INTERVAL", "LogThrottle", "Seen"]

DEFAULT_LOG_INTERVAL = 60.0

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Seen(Generic[K]):
    """One occurrence: log it now when ``due``, saying that ``untold`` earlier ones were not logged; ``key`` is the
    key it counts under (``overflow`` when the table was full)."""

    key: K
    due: bool
    untold: int


@dataclass
class _Entry:
    logged_at: float
    untold: int = 0


class LogThrottle(Generic[K]):
    def __init__(self, interval: float = DEFAULT_LOG_INTERVAL, *, max_keys: int | None = 1024,
                 overflow: K | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        """``max_keys=None``: no bound (for keys the caller ``forget``s); otherwise ``overflow`` is required."""
        if max_keys is not None and overflow is None:
            raise ValueError("a bounded LogThrottle needs an overflow key")
        self.interval = interval
        self.max_keys = max_keys
        self.overflow = overflow
        self.clock = clock
        self._lock = threading.Lock()
        self._entries: dict[K, _Entry] = {}

    def admit(self, key: K) -> Seen[K]:
        """Count one occurrence of ``key`` and say whether to log it now."""
        now = self.clock()
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                if self.max_keys is not None and len(self._entries) >= self.max_keys:
                    self._sweep(now)
                if self.max_keys is None or len(self._entries) < self.max_keys or key == self.overflow:
                    self._entries[key] = _Entry(now)
                    return Seen(key, True, 0)
                key = self.overflow  # type: ignore[assignment]  # set: checked in __init__
                entry = self._entries.get(key)
                if entry is None:  # the table is full of other keys: the overflow key gets a place beyond it
                    self._entries[key] = _Entry(now)
                    return Seen(key, True, 0)
            if now - entry.logged_at >= self.interval:
                untold, entry.untold, entry.logged_at = entry.untold, 0, now
                return Seen(key, True, untold)
            entry.untold += 1
            return Seen(key, False, entry.untold)

    def forget(self, key: K) -> None:
        """Drop ``key``: its next occurrence is due at once (what it held back is not told)."""
        with self._lock:
            self._entries.pop(key, None)

    def flush(self) -> list[tuple[K, int]]:
        """The keys whose interval has passed with occurrences not yet told, and how many; they count as told now.
        Keys quiet for a whole interval are forgotten."""
        now = self.clock()
        with self._lock:
            told = [(key, e.untold) for key, e in self._entries.items()
                    if e.untold and now - e.logged_at >= self.interval]
            for key, _ in told:
                entry = self._entries[key]
                entry.untold, entry.logged_at = 0, now
            self._sweep(now)
            return told

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def _sweep(self, now: float) -> None:
        """Forget keys with nothing untold whose interval has passed; call with ``_lock`` held."""
        for key in [k for k, e in self._entries.items() if not e.untold and now - e.logged_at >= self.interval]:
            del self._entries[key]
