"""All a controller remembers about one job between syncs, in one record per job UID.

A ``JobState`` holds the creations not yet seen in the informer cache (``expected``, client-go's
ControllerExpectations, by object and worker slot: a sync must not create a worker again while the one it created is
on its way), the worker slots that had a worker before (``slots_created``: a new worker there is a re-creation), and
the typed facts a kind keeps about a job between syncs (a finished worker or master seen going, when a stage pod was
first seen ended). ``JobStates`` is keyed by UID, so a job deleted and created again under the same name starts
clean.

``JobStates`` also holds the two self-healing structures of DESIGN, as the real containers the code uses:
``recreated_pods`` (a ``RecreatedPods`` TTL set of the pods and worker slots (re)created in the last ``ttl``
seconds, each entry tagged with its job's UID) and ``prevent_recreation`` (the set of ``namespace/name`` keys of the
jobs whose workers are being replaced on purpose). ``forget`` (``KindContext.forget_job``, called by
``JobController`` when the job is deleted or its sync finds it gone) drops everything about a job in one place, those
entries included. Thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from apis import meta

from .selfheal import RECREATION_TTL, RecreatedPods

__all__ = ["ExpectedCreation", "JobState", "JobStates", "SLOTS_CREATED_MAX"]

SLOTS_CREATED_MAX = 256  # worker slots remembered per job (oldest forgotten first)
_RECREATED_MAX = 10_000


@dataclass(frozen=True)
class ExpectedCreation:
    """An object created for a job that the informer cache has not shown yet."""

    resource: str
    namespace: str
    name: str
    deadline: float  # timer value after which the expectation lapses (client-go's ExpectationsTimeout)
    slot: str  # the recreation key of the worker slot it fills ("" when created outside ``ensure_worker``)


@dataclass
class JobState:
    uid: str
    key: str
    expected: dict[str, ExpectedCreation] = field(default_factory=dict)  # object recreation key → expectation
    slots_created: dict[str, None] = field(default_factory=dict)  # ordered set of slot keys that had a worker
    finished_workers: dict[int, set[str]] = field(default_factory=dict)  # generation → workers whose pod finished
    finished_master: Mapping[str, Any] | None = None  # the finished master pod the delete handler saw go
    ended_stage_pod: tuple[str, float] | None = None  # (pod UID, timer value) when a stage pod was first seen ended
    status_written_rv: str = ""  # the resourceVersion of the job's last status written by this controller

    def note_slot_created(self, slot_key: str) -> None:
        """Remember that ``slot_key`` had a worker (bounded: the oldest slots are forgotten first)."""
        self.slots_created.pop(slot_key, None)
        self.slots_created[slot_key] = None
        while len(self.slots_created) > SLOTS_CREATED_MAX:
            del self.slots_created[next(iter(self.slots_created))]


class JobStates:
    """``JobState`` per job UID, with a ``namespace/name`` → UID map for lookups by key, and the controller's
    ``recreated_pods`` and ``prevent_recreation`` (module doc)."""

    def __init__(self, ttl: float = RECREATION_TTL, timer: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.timer = timer
        self.recreated_pods = RecreatedPods(ttl, _RECREATED_MAX, timer)
        self.prevent_recreation: set[str] = set()  # job keys; set.add/discard/in are atomic
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
                    self._drop(key, old)
                state = JobState(uid, key)
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
        """Drop the record of job ``key`` (only if it has ``uid``, when given) and its self-healing entries."""
        with self._lock:
            current = self._uid_by_key.get(key)
            if current is None or (uid and current != uid):
                if uid:
                    self._by_uid.pop(uid, None)
                    self.recreated_pods.forget_owner(uid)
                if current is None:
                    self.prevent_recreation.discard(key)
                return
            self._drop(key, current)
            del self._uid_by_key[key]

    def _drop(self, key: str, uid: str) -> None:
        self._by_uid.pop(uid, None)
        self.recreated_pods.forget_owner(uid)
        self.prevent_recreation.discard(key)

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_uid)

    def states(self) -> list[JobState]:
        with self._lock:
            return list(self._by_uid.values())
