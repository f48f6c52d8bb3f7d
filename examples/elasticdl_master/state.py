"""The global view of the job's workers: one small state record per worker, fed by pod events and the worker API.

A worker is ``pending`` → ``running`` → ``succeeded`` | ``failed``, and ``deleted`` once its pod is gone; a state
never moves backwards (a late event cannot revive a finished worker). Beside the phase the record keeps what the
scheduler said (``unschedulable``), whether the pod is being deleted, how it ended (exit code, reason) and when the
worker last made progress. Thread-safe; records are removed by their owner (the worker manager) once the pod is gone.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from apis import meta
from workqueue.clock import REAL_CLOCK, Clock

from .pods import REPLICA_INDEX_LABEL

__all__ = [
    "DELETED", "FAILED", "PENDING", "RUNNING", "SUCCEEDED",
    "WorkerState", "WorkerTable", "worker_id_of",
]

PENDING = "pending"
RUNNING = "running"
SUCCEEDED = "succeeded"
FAILED = "failed"
DELETED = "deleted"

_ORDER = {PENDING: 0, RUNNING: 1, SUCCEEDED: 2, FAILED: 2, DELETED: 3}
_PHASES = {"Pending": PENDING, "Running": RUNNING, "Succeeded": SUCCEEDED, "Failed": FAILED}


def worker_id_of(pod: Mapping[str, Any]) -> int | None:
    """The worker id in the pod's ``elasticdl-replica-index`` label; None when missing or not a number."""
    value = meta.labels(pod).get(REPLICA_INDEX_LABEL, "")
    return int(value) if value.isdigit() else None


@dataclass
class WorkerState:
    worker_id: int
    pod_name: str
    phase: str = PENDING
    unschedulable: str = ""  # the scheduler's message while PodScheduled=False/Unschedulable
    deleting: bool = False  # the pod has a deletionTimestamp
    exit_code: int | None = None
    reason: str = ""  # why the pod ended (container reason, pod reason or message)
    node: str = ""
    seen_at: float = 0.0  # clock time of the first record
    running_since: float | None = None
    last_progress: float | None = None
    records: int = 0  # what the worker last reported having processed of its current task

    @property
    def live(self) -> bool:
        """Pending or running and not being deleted."""
        return self.phase in (PENDING, RUNNING) and not self.deleting

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ended(pod: Mapping[str, Any]) -> tuple[int | None, str]:
    status = pod.get("status") or {}
    for cs in status.get("containerStatuses") or []:
        term = (cs.get("state") or {}).get("terminated")
        if term:
            return term.get("exitCode"), term.get("reason") or ""
    return None, status.get("reason") or status.get("message") or ""


def _unschedulable(pod: Mapping[str, Any]) -> str:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False" and cond.get("reason") == "Unschedulable":
            return cond.get("message") or "Unschedulable"
    return ""


class WorkerTable:
    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock or REAL_CLOCK
        self._lock = threading.Lock()
        self._workers: dict[int, WorkerState] = {}

    def register(self, worker_id: int, pod_name: str) -> WorkerState:
        """A worker whose pod is being created (so it is known before its first event)."""
        with self._lock:
            state = self._workers.get(worker_id)
            if state is None:
                state = self._workers[worker_id] = WorkerState(worker_id, pod_name, seen_at=self._clock.now())
            return state

    def observe(self, pod: Mapping[str, Any]) -> WorkerState | None:
        """Fold a pod (from an add or update event) into its worker's record; None for a pod without a worker id."""
        worker_id = worker_id_of(pod)
        if worker_id is None:
            return None
        status = pod.get("status") or {}
        phase = _PHASES.get(status.get("phase") or "Pending")
        now = self._clock.now()
        with self._lock:
            state = self._workers.get(worker_id)
            if state is None:
                state = self._workers[worker_id] = WorkerState(worker_id, meta.name(pod), seen_at=now)
            if phase is not None and _ORDER[phase] >= _ORDER[state.phase]:  # "Unknown" keeps what we knew
                state.phase = phase
            if state.phase == RUNNING and state.running_since is None:
                state.running_since = now
            state.unschedulable = _unschedulable(pod) if state.phase == PENDING else ""
            state.deleting = meta.deletion_timestamp(pod) is not None
            state.node = (pod.get("spec") or {}).get("nodeName") or state.node
            if state.phase in (SUCCEEDED, FAILED):
                state.exit_code, state.reason = _ended(pod)
            return state

    def mark_deleted(self, worker_id: int) -> WorkerState | None:
        with self._lock:
            state = self._workers.get(worker_id)
            if state is not None:
                state.phase = DELETED
                state.deleting = False
            return state

    def touch(self, worker_id: int, records: int | None = None) -> None:
        """The worker made progress now."""
        with self._lock:
            state = self._workers.get(worker_id)
            if state is not None:
                state.last_progress = self._clock.now()
                if records is not None:
                    state.records = records

    def get(self, worker_id: int) -> WorkerState | None:
        """A copy of the worker's record."""
        with self._lock:
            state = self._workers.get(worker_id)
            return None if state is None else WorkerState(**asdict(state))

    def remove(self, worker_id: int) -> None:
        with self._lock:
            self._workers.pop(worker_id, None)

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return [state.to_dict() for _, state in sorted(self._workers.items())]

    def counts(self) -> dict[str, int]:
        """Workers per phase (``unschedulable`` counted apart from ``pending``)."""
        out = {PENDING: 0, "unschedulable": 0, RUNNING: 0, SUCCEEDED: 0, FAILED: 0, DELETED: 0}
        with self._lock:
            for state in self._workers.values():
                out["unschedulable" if state.unschedulable else state.phase] += 1
        return out
