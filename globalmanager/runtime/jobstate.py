"""All a controller remembers about one job between syncs, in one record per job UID.

A ``JobState`` holds the recreation guard (``prevent_recreation``: the job's workers are being replaced on purpose),
the objects recreated in the last ``ttl`` seconds (``recreated``, a ``RecreatedPods`` TTL set), the creations not yet
seen in the informer cache (``expected``, client-go's ControllerExpectations: a sync must not create workers again
while the ones it created are on their way), and free-form ``markers`` a controller keeps per job (e.g. a finished
worker seen going). ``JobStates`` is keyed by UID, so a job
deleted and created again under the same name starts clean; ``forget`` (called by ``BaseController`` when the job
is deleted or found gone) drops everything about a job in one place. Thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from apis import meta

from .selfheal import RECREATION_TTL, RecreatedPods

__all__ = ["JobState", "JobStates", "PreventRecreationView", "RecreatedPodsView"]

_PER_JOB_RECREATED_MAX = 1024


@dataclass
class JobState:
    uid: str
    key: str
    recreated: RecreatedPods
    prevent_recreation: bool = False
    expected: dict[str, float] = field(default_factory=dict)  # object key → deadline (timer) of the expectation
    markers: dict[str, Any] = field(default_factory=dict)


class JobStates:
    """``JobState`` per job UID, with a ``namespace/name`` → UID map for lookups by key."""

    def __init__(self, ttl: float = RECREATION_TTL, timer: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.timer = timer
        self._lock = threading.Lock()
        self._by_uid: dict[str, JobState] = {}
        self._uid_by_key: dict[str, str] = {}

    def for_job(self, job: Mapping[str, Any]) -> JobState:
        """The record of ``job`` (created on first use; a record of another job of the same name is dropped)."""
        uid, key = meta.uid(job), f"{meta.namespace(job)}/{meta.name(job)}"
        with self._lock:
            state = self._by_uid.get(uid)
            if state is None:
                old = self._uid_by_key.get(key)
                if old is not None and old != uid:
                    self._by_uid.pop(old, None)
                state = JobState(uid, key, RecreatedPods(self.ttl, _PER_JOB_RECREATED_MAX, self.timer))
                self._by_uid[uid] = state
                self._uid_by_key[key] = uid
            return state

    def get(self, uid: str) -> JobState | None:
        with self._lock:
            return self._by_uid.get(uid)

    def by_key(self, key: str) -> JobState | None:
        with self._lock:
            uid = self._uid_by_key.get(key)
            return self._by_uid.get(uid) if uid is not None else None

    def forget(self, key: str, uid: str = "") -> None:
        """Drop the record of job ``key`` (only if it has ``uid``, when given)."""
        with self._lock:
            current = self._uid_by_key.get(key)
            if current is None or (uid and current != uid):
                if uid:
                    self._by_uid.pop(uid, None)
                return
            del self._uid_by_key[key]
            self._by_uid.pop(current, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_uid)

    def states(self) -> list[JobState]:
        with self._lock:
            return list(self._by_uid.values())


class PreventRecreationView:
    """``key in view``: whether job ``namespace/name`` is having its workers replaced on purpose right now."""

    def __init__(self, states: JobStates) -> None:
        self._states = states

    def __contains__(self, key: object) -> bool:
        state = self._states.by_key(key) if isinstance(key, str) else None
        return state is not None and state.prevent_recreation


class RecreatedPodsView:
    """``"namespace/pod" in view``: whether that pod was recreated less than the TTL ago (DESIGN's
    ``recreated_pods``, now kept per job in ``JobState.recreated``)."""

    def __init__(self, states: JobStates) -> None:
        self._states = states

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and any(f"pods:{key}" in state.recreated for state in self._states.states())
