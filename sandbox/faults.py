"""Fault injection for the sandbox API server: dropped watches, 410 on re-watch, 429/500 answers, latency, and
one-shot 409 conflicts on the next write of a named object.

Every knob is a plain attribute that tests may flip while the server runs (each assignment is validated). Random
choices come from one seeded ``random.Random``, consulted once per eligible request in arrival order, so a
sequential client sees the same sequence of injected errors for the same seed.

Scope (so that clients can always start and probe the server):
- ``error_rate`` applies to resource requests only (CRUD, list, watch), never to ``/version``, ``/healthz``,
  ``/livez``, ``/readyz``, discovery (``/api``, ``/apis``, ``/api/v1``, ``/apis/<group>[/<version>]``) or ``/openapi``.
- ``latency_ms`` applies to every request except the health probes.
- the watch knobs apply to watch streams only.
- ``conflict_next_write`` arms a 409 for the next PUT or PATCH of one object (or of one of its subresources), as
  kube-apiserver answers a write based on a resourceVersion another writer has replaced meanwhile.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["Faults", "FaultStats"]


@dataclass
class FaultStats:
    """How often each fault was injected (what tests assert on, instead of timings)."""

    errors_429: int = 0
    errors_500: int = 0
    delayed_requests: int = 0
    dropped_watches: int = 0
    gone_rewatches: int = 0
    conflicts: int = 0


class Faults:
    """Runtime-settable fault knobs; all off by default.

    - ``drop_watch_after``: seconds after which the server ends every watch stream (cleanly, like a timeout).
    - ``drop_watch_after_events``: number of events after which the server ends a watch stream.
    - ``error_rate``: fraction (0..1) of resource requests answered 429 (with ``Retry-After: 1``) or 500.
    - ``gone_on_rewatch``: a watch asking for a resourceVersion other than "" or "0" gets one 410 ``ERROR`` event.
    - ``latency_ms``: delay added before every request is handled.
    - ``seed``: seed of the random generator (setting it re-seeds).
    """

    _KNOBS = ("drop_watch_after", "drop_watch_after_events", "error_rate", "gone_on_rewatch", "latency_ms", "seed")

    # Internal state, set once in __init__ through object.__setattr__ (plain assignment only accepts the knobs).
    _lock: threading.Lock
    _rng: random.Random
    stats: FaultStats
    _conflicts: set[tuple[str, str, str, str | None]]

    def __init__(
        self,
        drop_watch_after: float | None = None,
        drop_watch_after_events: int | None = None,
        error_rate: float = 0.0,
        gone_on_rewatch: bool = False,
        latency_ms: float = 0.0,
        seed: int | None = None,
    ) -> None:
        object.__setattr__(self, "_lock", threading.Lock())
        object.__setattr__(self, "_rng", random.Random(seed))
        object.__setattr__(self, "stats", FaultStats())
        object.__setattr__(self, "_conflicts", set())
        self.drop_watch_after = drop_watch_after
        self.drop_watch_after_events = drop_watch_after_events
        self.error_rate = error_rate
        self.gone_on_rewatch = gone_on_rewatch
        self.latency_ms = latency_ms
        self.seed = seed

    def __setattr__(self, name: str, value: object) -> None:
        if name not in self._KNOBS:
            raise AttributeError(f"Faults has no knob {name!r} (knobs: {', '.join(self._KNOBS)})")
        validated = _validated(name, value)
        object.__setattr__(self, name, validated)
        if name == "seed":
            with self._lock:
                self._rng.seed(validated)

    def __repr__(self) -> str:
        knobs = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._KNOBS)
        return f"Faults({knobs})"

    @property
    def active(self) -> bool:
        return bool(
            self.drop_watch_after is not None
            or self.drop_watch_after_events is not None
            or self.error_rate
            or self.gone_on_rewatch
            or self.latency_ms
        )

    def pick_error(self) -> int | None:
        """429, 500 or None for one eligible request, drawn from the seeded generator."""
        rate = self.error_rate
        if not rate:
            return None
        with self._lock:
            if self._rng.random() >= rate:
                return None
            code = 429 if self._rng.random() < 0.5 else 500
            if code == 429:
                self.stats.errors_429 += 1
            else:
                self.stats.errors_500 += 1
        return code

    def conflict_next_write(self, resource: str, namespace: str, name: str, subresource: str | None = None) -> None:
        """Answer the next PUT or PATCH of ``resource`` (plural, e.g. ``datasets``) ``namespace/name`` — of its
        ``subresource`` (e.g. ``status``) when given — with 409 ``Conflict``, once."""
        with self._lock:
            self._conflicts.add((resource, namespace, name, subresource))

    def conflict_pending(self, resource: str, namespace: str, name: str, subresource: str | None = None) -> bool:
        """Whether a conflict armed by ``conflict_next_write`` still waits for its write."""
        with self._lock:
            return (resource, namespace, name, subresource) in self._conflicts

    def take_conflict(self, method: str, resource: str, namespace: str, name: str, subresource: str | None) -> bool:
        """True (once, counted) when this write must be answered with the armed conflict."""
        if method not in ("PUT", "PATCH"):
            return False
        with self._lock:
            if not self._conflicts:
                return False
            try:
                self._conflicts.remove((resource, namespace, name, subresource))
            except KeyError:
                return False
            self.stats.conflicts += 1
        return True

    def latency_seconds(self) -> float:
        """The delay to apply to one request (counted when non-zero)."""
        ms = self.latency_ms
        if not ms:
            return 0.0
        with self._lock:
            self.stats.delayed_requests += 1
        return ms / 1000.0

    def count(self, stat: str) -> None:
        """Record one injected fault of kind ``stat`` (a FaultStats field)."""
        with self._lock:
            setattr(self.stats, stat, getattr(self.stats, stat) + 1)


def _validated(name: str, value: object) -> Any:
    if name == "drop_watch_after":
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValueError(f"Faults.drop_watch_after must be a positive number of seconds or None, got {value!r}")
        return float(value)
    if name == "drop_watch_after_events":
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"Faults.drop_watch_after_events must be a positive integer or None, got {value!r}")
        return value
    if name == "error_rate":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise ValueError(f"Faults.error_rate must be a fraction between 0 and 1, got {value!r}")
        return float(value)
    if name == "gone_on_rewatch":
        if not isinstance(value, bool):
            raise ValueError(f"Faults.gone_on_rewatch must be True or False, got {value!r}")
        return value
    if name == "latency_ms":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError(f"Faults.latency_ms must be a non-negative number of milliseconds, got {value!r}")
        return float(value)
    if name == "seed":
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"Faults.seed must be an integer or None, got {value!r}")
        return value
    raise AttributeError(name)  # pragma: no cover - guarded by __setattr__

