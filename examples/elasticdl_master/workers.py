"""The worker manager: keeps the number of live worker pods at the threshold.

The threshold is a number of *slots*; each slot holds at most one live worker, and its index is the key of a
``RateLimitingQueue`` whose ``ItemExponentialFailureRateLimiter`` paces the slot's relaunches. ``sync(slot)``
reconciles one slot from the worker table (which the pod events keep current):

* an empty slot below the threshold gets a new worker (new id) at once, or once its backoff is over;
* a worker that failed, exited before the job's data was consumed, was deleted by someone else, is unschedulable
  (``PodScheduled=False``/``Unschedulable``) or has made no progress for ``progress_timeout`` seconds while running
  is retired: the task dispatcher takes its tasks back, its pod is deleted, and the slot is relaunched after
  ``base_delay * 2**n`` (capped at ``max_delay``), ``n`` counting the slot's relaunches since its last worker made
  progress;
* a slot whose pods *failed* more than ``relaunch_limit`` times in a row without progress is given up (ElasticDL's
  ``--relaunch_on_worker_failure``; a negative limit never gives up);
* a slot at or above the threshold (it was lowered, or the job is finishing) has its worker deleted; the worker's
  tasks go back to the queue without counting a failure;
* ``drain()`` (the data is consumed) stops all launches but leaves live workers alone, so they can hear "finished"
  and exit; ``finish()`` then deletes every worker left.

Slots are synced by the reconcile runner (``reconcile.Controller``, ``self.loop``): a slot is never synced by two
threads at once; a sync that fails (an API error) is retried after the slot's rate-limited delay. All slot state is guarded by one lock, held
for the whole of a sync, so the worker API's progress reports and threshold changes see a consistent view.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from apis import errors, meta
from apis.client import ClientsetBase
from reconcile import Controller, Result
from workqueue import ItemExponentialFailureRateLimiter
from workqueue.clock import REAL_CLOCK, Clock

from .pods import WorkerPodTemplate, build_worker_pod
from .state import DELETED, FAILED, PENDING, RUNNING, SUCCEEDED, WorkerState, WorkerTable, worker_id_of
from .tasks import TaskDispatcher

__all__ = ["Slot", "WorkerManager"]

log = structlog.get_logger("elasticdl_master.workers")


@dataclass
class Slot:
    index: int
    worker: int | None = None
    not_before: float = 0.0  # no relaunch before this clock time (the backoff)
    failures: int = 0  # pods that failed in a row without progress
    progressed: bool = False  # the current worker has made progress
    given_up: bool = False


class WorkerManager:
    def __init__(
        self,
        clientset: ClientsetBase,
        template: WorkerPodTemplate,
        table: WorkerTable,
        dispatcher: TaskDispatcher,
        threshold: int,
        *,
        progress_timeout: float = 0.0,
        relaunch_limit: int = 1,
        base_delay: float = 1.0,
        max_delay: float = 300.0,
        clock: Clock | None = None,
    ) -> None:
        self.clientset = clientset
        self.template = template
        self.table = table
        self.dispatcher = dispatcher
        self.progress_timeout = progress_timeout
        self.relaunch_limit = relaunch_limit
        self.clock = clock or REAL_CLOCK
        self._log = log.bind(job=template.job_name)
        self.loop: Controller[int] = Controller(
            "elasticdl-workers", self._sync_slot, rate_limiter=ItemExponentialFailureRateLimiter(base_delay, max_delay),
            clock=self.clock, log=self._log)
        self.queue = self.loop.queue
        self.owner: Mapping[str, Any] | None = None  # the master pod, when there is one
        self._lock = threading.Lock()
        self._threshold = threshold
        self._draining = False
        self._finishing = False
        self._slots: dict[int, Slot] = {}
        self._slot_of: dict[int, int] = {}  # worker id -> slot index
        self._next_id = 0

    # -- inputs -----------------------------------------------------------------------------------------------------
    @property
    def threshold(self) -> int:
        with self._lock:
            return self._threshold

    def set_threshold(self, threshold: int) -> int:
        """Keep ``threshold`` workers from now on; returns the previous threshold."""
        with self._lock:
            previous, self._threshold = self._threshold, threshold
            for slot in self._slots.values():
                slot.given_up = False  # a new threshold gives every slot a new chance
        self._log.info("worker threshold changed", threshold=threshold, previous=previous)
        self._enqueue_slots(max(previous, threshold))
        return previous

    def drain(self) -> None:
        """The job's data is consumed: launch no worker any more; live workers stay until they exit."""
        with self._lock:
            self._draining = True
            count = max([self._threshold, *(index + 1 for index in self._slots)])
        self._enqueue_slots(count)

    def finish(self) -> None:
        """Every worker goes."""
        with self._lock:
            self._draining = self._finishing = True
            count = max([self._threshold, *(index + 1 for index in self._slots)])
        self._enqueue_slots(count)

    def on_worker_event(self, worker_id: int) -> None:
        """The event listener saw the worker's pod change: sync its slot; forget a gone pod that has no slot."""
        with self._lock:
            index = self._slot_of.get(worker_id)
        if index is not None:
            self.queue.add(index)
            return
        state = self.table.get(worker_id)
        if state is not None and state.phase == DELETED:
            self.table.remove(worker_id)

    def on_progress(self, worker_id: int, records: int | None = None) -> None:
        """The worker made progress (asked for a task, reported one, reported progress): its stuck-worker deadline
        moves, and its slot's backoff and failure count start over."""
        self.table.touch(worker_id, records)
        with self._lock:
            index = self._slot_of.get(worker_id)
            slot = self._slots.get(index) if index is not None else None
            if slot is None or slot.progressed:
                return
            slot.progressed = True
            slot.failures = 0
            self.queue.forget(index)

    def adopt(self, pods: Iterable[Mapping[str, Any]]) -> None:
        """Take over the job's worker pods found at start (a restarted master): live ones fill the slots in id order,
        the rest are deleted; new ids continue after the highest one found."""
        live: list[WorkerState] = []
        stale: list[WorkerState] = []
        for pod in pods:
            state = self.table.observe(pod)
            if state is None:
                continue
            self._next_id = max(self._next_id, state.worker_id + 1)
            (live if state.live else stale).append(state)
        live.sort(key=lambda s: s.worker_id)
        with self._lock:
            for state in live[: self._threshold]:
                index = len(self._slots)
                self._slots[index] = Slot(index, worker=state.worker_id)
                self._slot_of[state.worker_id] = index
                self.dispatcher.register_worker(state.worker_id)
        for state in live[self._threshold:] + stale:
            self._delete_pod(state, "left over from an earlier master")
        if live or stale:
            self._log.info("adopted worker pods", adopted=[s.pod_name for s in live[: self._threshold]],
                           deleted=[s.pod_name for s in live[self._threshold:] + stale])
        self._enqueue_slots(self.threshold)

    # -- queue processing -------------------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """Process slots until ``stop`` is set (then drain and return)."""
        self.loop.run(stop)

    def process_next(self) -> bool:
        """Sync the next slot (blocking); False once the queue is shut down."""
        return self.loop.process_next_work_item()

    def _sync_slot(self, index: int) -> Result:
        self.sync(index)
        return Result(forget=False)  # the slot's relaunch count lives in the rate limiter: only progress forgets it

    def sync(self, index: int) -> None:
        with self._lock:
            wanted = 0 if self._draining else self._threshold
            slot = self._slots.get(index)
            if slot is None:
                if index >= wanted:
                    return
                slot = self._slots[index] = Slot(index)
            state = self.table.get(slot.worker) if slot.worker is not None else None
            if slot.worker is not None and state is None:  # cannot happen: records of slotted workers stay
                self._detach(slot)
            elif state is not None and index >= wanted:
                if self._draining and not self._finishing and state.live:
                    return  # let it hear "finished" and exit
                self._retire(slot, state, failed=False, reason="finished" if self._draining else "scale-down")
            elif state is not None:
                trouble, pod_failed = self._trouble(state)
                if not trouble:
                    self._watch_progress(slot, state)
                    return
                self._retire(slot, state, failed=True, reason=trouble)
                self._relaunch_later(slot, state, trouble, pod_failed)
                return
            if index >= wanted:
                del self._slots[index]
                self.queue.forget(index)
                return
            if slot.given_up:
                return
            wait = slot.not_before - self.clock.now()
            if wait > 0:
                self.queue.add_after(index, wait)
                return
            self._launch(slot)

    # -- state ------------------------------------------------------------------------------------------------------
    def live_workers(self) -> int:
        """Workers in a slot that are pending or running."""
        with self._lock:
            held = list(self._slot_of)
        return sum(1 for w in held if (state := self.table.get(w)) is not None and state.live)

    def all_given_up(self) -> bool:
        """Every wanted slot has been given up (the job cannot make progress)."""
        with self._lock:
            wanted = [self._slots.get(i) for i in range(self._threshold)]
            return bool(wanted) and all(s is not None and s.given_up for s in wanted)

    def slots(self) -> list[dict[str, Any]]:
        with self._lock:
            return [{"slot": s.index, "worker_id": s.worker, "failures": s.failures, "given_up": s.given_up,
                     "relaunches": self.queue.num_requeues(s.index)} for _, s in sorted(self._slots.items())]

    # -- helpers (lock held) ----------------------------------------------------------------------------------------
    def _trouble(self, state: WorkerState) -> tuple[str, bool]:
        """Why the worker must be replaced ("" when it is fine), and whether its pod failed."""
        if state.phase == DELETED:
            return "its pod was deleted", False
        if state.deleting:
            return "its pod is being deleted", False
        if state.phase == FAILED:
            return f"it failed (exit code {state.exit_code}, {state.reason or 'no reason given'})", True
        if state.phase == SUCCEEDED:
            return "it exited before the job's data was consumed", False
        if state.phase == PENDING and state.unschedulable:
            return f"it cannot be scheduled: {state.unschedulable}", False
        if state.phase == RUNNING and self.progress_timeout > 0:
            idle = self.clock.now() - max(state.running_since or 0.0, state.last_progress or 0.0)
            if idle >= self.progress_timeout:
                return f"it made no progress for {idle:.0f}s", False
        return "", False

    def _watch_progress(self, slot: Slot, state: WorkerState) -> None:
        """Look at a running worker again when it would have made no progress for too long."""
        if state.phase == RUNNING and self.progress_timeout > 0:
            since = max(state.running_since or 0.0, state.last_progress or 0.0)
            self.queue.add_after(slot.index, since + self.progress_timeout - self.clock.now())

    def _retire(self, slot: Slot, state: WorkerState, failed: bool, reason: str) -> None:
        """Take the worker's tasks back, delete its pod, free the slot."""
        self.dispatcher.retire_worker(state.worker_id, failed=failed)
        self._log.info("retiring worker", worker=state.pod_name, worker_id=state.worker_id, slot=slot.index,
                       reason=reason, phase=state.phase)
        if state.phase != DELETED:
            self._delete_pod(state, reason)
        if state.phase == DELETED:
            self.table.remove(state.worker_id)
        self._detach(slot)

    def _detach(self, slot: Slot) -> None:
        if slot.worker is not None:
            self._slot_of.pop(slot.worker, None)
        slot.worker = None
        slot.progressed = False

    def _relaunch_later(self, slot: Slot, state: WorkerState, trouble: str, pod_failed: bool) -> None:
        if pod_failed:
            slot.failures += 1  # on_progress resets it: it counts failures in a row without progress
        if pod_failed and 0 <= self.relaunch_limit < slot.failures:
            slot.given_up = True
            self._log.error("worker slot given up: its workers failed too often without progress", slot=slot.index,
                            worker=state.pod_name, failures=slot.failures, limit=self.relaunch_limit)
            return
        delay = self.queue.rate_limiter.when(slot.index)
        slot.not_before = self.clock.now() + delay
        self.queue.add_after(slot.index, delay)
        self._log.info("relaunching worker after backoff", slot=slot.index, worker=state.pod_name, reason=trouble,
                       delay_seconds=round(delay, 3), relaunches=self.queue.num_requeues(slot.index))

    def _launch(self, slot: Slot) -> None:
        worker_id = self._next_id
        self._next_id += 1
        pod = build_worker_pod(self.template, worker_id, slot.index, self._threshold, self.owner)
        name = meta.name(pod)
        # known before the pod exists: the worker may ask for a task before its first event reaches us
        self.dispatcher.register_worker(worker_id)
        self.table.register(worker_id, name)
        slot.worker = worker_id
        self._slot_of[worker_id] = slot.index
        try:
            self.clientset.core_v1().pods(self.template.namespace).create(pod)
        except errors.ApiError:
            self.dispatcher.retire_worker(worker_id, failed=False)
            self.table.remove(worker_id)
            self._detach(slot)
            raise
        self._log.info("created worker pod", worker=name, worker_id=worker_id, slot=slot.index)

    def _delete_pod(self, state: WorkerState, reason: str) -> None:
        try:
            self.clientset.core_v1().pods(self.template.namespace).delete(state.pod_name, grace_period_seconds=0)
        except errors.NotFoundError:
            return
        self._log.info("deleted worker pod", worker=state.pod_name, worker_id=state.worker_id, reason=reason)

    def _enqueue_slots(self, count: int) -> None:
        for index in range(count):
            self.queue.add(index)

    # -- cleanup ----------------------------------------------------------------------------------------------------
    def sweep(self, pods: Iterable[Mapping[str, Any]]) -> int:
        """Delete the job's worker pods that no slot holds and that are not being deleted yet; returns how many
        pods of the job are still there."""
        remaining = 0
        for pod in pods:
            remaining += 1
            worker_id = worker_id_of(pod)
            with self._lock:
                slotted = worker_id in self._slot_of
            if worker_id is not None and not slotted and meta.deletion_timestamp(pod) is None:
                state = self.table.observe(pod)
                if state is not None:
                    self._delete_pod(state, "not held by any slot")
        return remaining
