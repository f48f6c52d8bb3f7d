"""The task dispatcher: units × epochs done exactly once, taken back from dead workers, bounded retries."""

from __future__ import annotations

from collections import Counter

import pytest

from examples.elasticdl_master.data import Shard
from examples.elasticdl_master.tasks import FINISHED, WAIT, Task, TaskDispatcher, TaskError

UNITS = [Shard("/d/a.txt", 0, 4), Shard("/d/a.txt", 4, 8), Shard("/d/a.txt", 8, 10), Shard("/d/b.txt", 0, 3)]


def dispatcher(num_epochs: int = 1, retries: int = 3, workers: tuple[int, ...] = (0, 1), **kw) -> TaskDispatcher:
    d = TaskDispatcher(UNITS, num_epochs, retries, **kw)
    for w in workers:
        d.register_worker(w)
    return d


def test_every_unit_of_every_epoch_is_done_exactly_once_with_workers_dying_on_the_way():
    d = dispatcher(num_epochs=3, workers=(0, 1, 2))
    done: list[tuple[int, int]] = []
    next_worker = 3
    for round_ in range(200):
        if d.finished():
            break
        for w in sorted(d._held_by):
            task = d.get(w)
            if task in (WAIT, FINISHED):
                continue
            assert isinstance(task, Task)
            if round_ % 5 == 4 and w % 2 == 0:  # the worker dies holding its task
                d.retire_worker(w, failed=True)
                d.register_worker(next_worker)
                next_worker += 1
                continue
            d.report(w, task.task_id, success=True)
            done.append((task.epoch, task.unit))
    assert d.finished() and d.succeeded()
    assert Counter(done) == {(e, u): 1 for e in range(3) for u in range(len(UNITS))}
    status = d.status()
    assert status["done_per_epoch"] == {"0": 4, "1": 4, "2": 4}
    assert status["tasks_done"] == status["tasks_total"] == 12
    assert status["duplicate_completions"] == 0 and d._settled == {}


def test_the_next_epoch_starts_only_when_the_waiting_list_is_empty():
    d = dispatcher(num_epochs=2, workers=(0,))
    first = [d.get(0) for _ in range(4)]
    assert {t.epoch for t in first} == {0} and d.status()["epochs_started"] == 1
    fifth = d.get(0)  # epoch 0 is all handed out: epoch 1 starts although epoch 0 is not done
    assert fifth.epoch == 1 and d.status()["epochs_started"] == 2
    assert [t.shard for t in first] == UNITS


def test_wait_while_other_workers_hold_the_last_tasks_then_finished():
    d = TaskDispatcher(UNITS[:1], 1)
    d.register_worker(0)
    d.register_worker(1)
    task = d.get(0)
    assert d.get(1) == WAIT
    d.report(0, task.task_id, True)
    assert d.get(1) == FINISHED and d.finished() and d.succeeded()


def test_requests_from_unknown_workers_and_for_tasks_not_held_are_refused():
    d = dispatcher()
    with pytest.raises(TaskError, match="worker 7 is not a live worker"):
        d.get(7)
    task = d.get(0)
    with pytest.raises(TaskError, match=f"task {task.task_id} is held by worker 0, not by worker 1"):
        d.report(1, task.task_id, True)
    d.report(0, task.task_id, True)
    with pytest.raises(TaskError, match="not in progress"):
        d.report(0, task.task_id, True)  # a second report of the same task
    with pytest.raises(TaskError, match="not in progress"):
        d.report(0, 999, True)
    assert d.status()["tasks_done"] == 1


def test_retiring_a_worker_takes_its_tasks_back_and_refuses_its_late_reports():
    d = dispatcher(workers=(0, 1))
    a, b = d.get(0), d.get(0)
    assert d.retire_worker(0, failed=False) == sorted([a.task_id, b.task_id])
    with pytest.raises(TaskError):
        d.report(0, a.task_id, True)
    with pytest.raises(TaskError):
        d.get(0)
    handed = [d.get(1) for _ in range(4)]
    assert sorted(t.unit for t in handed) == [0, 1, 2, 3]
    assert d._failures == {}  # taken back on purpose: no failed attempt


def test_failed_tasks_are_retried_then_abandoned_after_max_task_retries():
    d = dispatcher(retries=3, workers=(0,))
    d2 = TaskDispatcher(UNITS[:1], 1, max_task_retries=3)
    d2.register_worker(0)
    for attempt in range(1, 4):
        task = d2.get(0)
        assert isinstance(task, Task) and task.unit == 0
        d2.report(0, task.task_id, False, f"bad record (attempt {attempt})")
    assert d2.get(0) == FINISHED
    assert d2.finished() and not d2.succeeded()
    assert d2.status()["tasks_abandoned"] == 1 and d2.status()["tasks_done"] == 0
    # a worker death counts as a failed attempt too
    task = d.get(0)
    d.retire_worker(0, failed=True)
    assert d._failures[(task.epoch, task.unit)] == 1


def test_unbounded_epochs_keep_memory_bounded():
    d = TaskDispatcher(UNITS, 0)
    d.register_worker(0)
    for _ in range(40 * len(UNITS)):
        task = d.get(0)
        d.report(0, task.task_id, True)
    assert not d.finished() and d.status()["tasks_total"] is None
    assert len(d._settled) <= 2 and len(d._todo) <= len(UNITS)


def test_on_change_is_called_after_reports_and_retirements():
    calls = []
    d = dispatcher(on_change=lambda: calls.append(1))
    task = d.get(0)
    d.report(0, task.task_id, True)
    d.retire_worker(1, failed=False)
    assert len(calls) == 2
