"""The work queue manager (ElasticDL's task manager): hands units of work to workers and takes them back.

Guarantees:

* Only registered (live) workers get tasks, one task id per hand-out. A task is waiting, held by exactly one worker,
  done, or abandoned; only its holder can report it. So every unit of every epoch is done exactly once, unless it is
  abandoned.
* Epoch ``e`` is the units in order; the next epoch is queued when the waiting list runs empty (as ElasticDL does), so
  at most two epochs are in flight. ``num_epochs <= 0`` repeats the data until stopped.
* A failed task, or one taken back from a worker that died, goes to the back of the waiting list; a unit that has
  failed ``max_task_retries`` times is abandoned (and the job will not succeed). A worker removed on purpose
  (scale-down, the end of the job) gives its tasks back without a failure.
* Thread-safe; memory is bounded by the units of the epochs in flight.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from .data import Shard

__all__ = ["FINISHED", "WAIT", "Task", "TaskDispatcher", "TaskError"]

log = structlog.get_logger("elasticdl_master.tasks")

WAIT = "wait"  # every remaining task is held by another worker: ask again later
FINISHED = "finished"  # every unit of every epoch is done or abandoned


class TaskError(ValueError):
    """A request the dispatcher refuses: an unknown worker, a task the worker does not hold."""


@dataclass(frozen=True)
class Task:
    task_id: int
    epoch: int
    unit: int
    shard: Shard

    def to_dict(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "type": "training", "epoch": self.epoch, "unit": self.unit,
                "file": self.shard.file, "start": self.shard.start, "end": self.shard.end}


@dataclass(frozen=True)
class _Held:
    worker: int
    epoch: int
    unit: int


class TaskDispatcher:
    def __init__(self, shards: Sequence[Shard], num_epochs: int, max_task_retries: int = 3, job: str = "",
                 on_change: Callable[[], None] | None = None) -> None:
        """``on_change`` is called (outside the lock) after every report and every retired worker."""
        if not shards:
            raise ValueError("no units of work")
        if max_task_retries < 1:
            raise ValueError(f"max_task_retries must be at least 1, got {max_task_retries}")
        self._lock = threading.Lock()
        self._shards = list(shards)
        self._num_epochs = num_epochs
        self._max_task_retries = max_task_retries
        self._log = log.bind(job=job) if job else log
        self._on_change = on_change or (lambda: None)
        self._ids = itertools.count(1)
        self._todo: deque[tuple[int, int]] = deque()
        self._doing: dict[int, _Held] = {}
        self._held_by: dict[int, set[int]] = {}  # registered worker -> task ids it holds
        self._failures: dict[tuple[int, int], int] = {}
        self._settled: dict[int, set[int]] = {}  # epochs still open -> units done or abandoned
        self._done_per_epoch: dict[int, int] = {}
        self._abandoned = 0
        self._duplicates = 0
        self._epochs_started = 0
        self._start_epoch()

    @property
    def units_per_epoch(self) -> int:
        return len(self._shards)

    # -- workers ----------------------------------------------------------------------------------------------------
    def register_worker(self, worker: int) -> None:
        """Let ``worker`` ask for tasks (no-op if it may already)."""
        with self._lock:
            self._held_by.setdefault(worker, set())

    def is_registered(self, worker: int) -> bool:
        with self._lock:
            return worker in self._held_by

    def retire_worker(self, worker: int, failed: bool) -> list[int]:
        """``worker`` gets no more tasks; what it holds is re-queued (a failed attempt when ``failed``).
        Returns the task ids taken back."""
        with self._lock:
            task_ids = sorted(self._held_by.pop(worker, ()))
            for task_id in task_ids:
                held = self._doing.pop(task_id)
                if failed:
                    self._fail(task_id, held, f"worker {worker} died")
                else:
                    self._todo.append((held.epoch, held.unit))
        if task_ids:
            self._log.info("took tasks back from a worker", worker_id=worker, task_ids=task_ids, failed=failed)
        self._on_change()
        return task_ids

    # -- tasks ------------------------------------------------------------------------------------------------------
    def get(self, worker: int) -> Task | str:
        """The next task for ``worker``, or ``WAIT`` / ``FINISHED``."""
        with self._lock:
            if worker not in self._held_by:
                raise TaskError(f"worker {worker} is not a live worker of this job")
            if not self._todo and self._more_epochs():
                self._start_epoch()
            if not self._todo:
                return WAIT if self._doing else FINISHED
            epoch, unit = self._todo.popleft()
            task_id = next(self._ids)
            self._doing[task_id] = _Held(worker, epoch, unit)
            self._held_by[worker].add(task_id)
            return Task(task_id, epoch, unit, self._shards[unit])

    def holds(self, worker: int, task_id: int) -> bool:
        with self._lock:
            held = self._doing.get(task_id)
            return held is not None and held.worker == worker

    def report(self, worker: int, task_id: int, success: bool, message: str = "") -> None:
        """``worker`` finished ``task_id`` (or failed it); ``TaskError`` unless the worker holds that task."""
        with self._lock:
            held = self._doing.get(task_id)
            if held is None:
                raise TaskError(f"task {task_id} is not in progress (done, taken back, or never handed out)")
            if held.worker != worker:
                raise TaskError(f"task {task_id} is held by worker {held.worker}, not by worker {worker}")
            del self._doing[task_id]
            self._held_by[worker].discard(task_id)
            if success:
                self._complete(held)
            else:
                self._fail(task_id, held, message)
        self._on_change()

    # -- state ------------------------------------------------------------------------------------------------------
    def finished(self) -> bool:
        """Every unit of every epoch is done or abandoned."""
        with self._lock:
            return not self._todo and not self._doing and not self._more_epochs()

    def succeeded(self) -> bool:
        with self._lock:
            return not self._todo and not self._doing and not self._more_epochs() and not self._abandoned

    def status(self) -> dict[str, Any]:
        with self._lock:
            done = sum(self._done_per_epoch.values())
            return {
                "num_epochs": self._num_epochs,
                "units_per_epoch": len(self._shards),
                "epochs_started": self._epochs_started,
                "tasks_total": len(self._shards) * self._num_epochs if self._num_epochs > 0 else None,
                "tasks_waiting": len(self._todo),
                "tasks_in_progress": len(self._doing),
                "tasks_done": done,
                "tasks_abandoned": self._abandoned,
                "done_per_epoch": {str(e): n for e, n in sorted(self._done_per_epoch.items())},
                "duplicate_completions": self._duplicates,
                "finished": not self._todo and not self._doing and not self._more_epochs(),
            }

    # -- internals (lock held) --------------------------------------------------------------------------------------
    def _more_epochs(self) -> bool:
        return self._num_epochs <= 0 or self._epochs_started < self._num_epochs

    def _start_epoch(self) -> None:
        epoch = self._epochs_started
        self._epochs_started += 1
        self._todo.extend((epoch, unit) for unit in range(len(self._shards)))
        self._settled[epoch] = set()
        self._done_per_epoch[epoch] = 0
        self._log.info("epoch started", epoch=epoch, units=len(self._shards))

    def _complete(self, held: _Held) -> None:
        settled = self._settled.get(held.epoch)
        if settled is None or held.unit in settled:  # cannot happen: a unit is held by one worker at a time
            self._duplicates += 1
            self._log.error("unit done twice", epoch=held.epoch, unit=held.unit)
            return
        self._failures.pop((held.epoch, held.unit), None)
        self._done_per_epoch[held.epoch] += 1
        self._settle(held.epoch, held.unit)

    def _settle(self, epoch: int, unit: int) -> None:
        settled = self._settled[epoch]
        settled.add(unit)
        if len(settled) == len(self._shards):
            del self._settled[epoch]  # closed: a later completion of one of its units is a duplicate
            self._log.info("epoch complete", epoch=epoch, done=self._done_per_epoch[epoch],
                           abandoned=len(self._shards) - self._done_per_epoch[epoch])

    def _fail(self, task_id: int, held: _Held, message: str) -> None:
        key = (held.epoch, held.unit)
        failures = self._failures.get(key, 0) + 1
        shard = self._shards[held.unit]
        where = {"task_id": task_id, "worker_id": held.worker, "epoch": held.epoch, "file": shard.file,
                 "start": shard.start, "end": shard.end, "failures": failures, "reason": message}
        if failures >= self._max_task_retries:
            self._failures.pop(key, None)
            self._abandoned += 1
            self._log.error("task failed too often; abandoned", **where)
            self._settle(held.epoch, held.unit)
            return
        self._failures[key] = failures
        self._todo.append(key)
        self._log.warning("task failed; queued again", **where)
