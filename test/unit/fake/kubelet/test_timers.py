"""The simulator's timers keep one due time per item (the earliest) and bounded memory."""

from __future__ import annotations

from sandbox.kubelet.timers import Timers


def test_earliest_due_time_wins_and_fires_once() -> None:
    timers = Timers()
    assert timers.schedule("a", 5.0)
    assert not timers.schedule("a", 7.0)
    assert timers.schedule("a", 3.0)
    assert timers.schedule("b", 4.0)
    assert timers.next_due() == 3.0
    assert timers.pop_due(4.5) == ["a", "b"]
    assert timers.pop_due(100.0) == []  # the superseded 5.0 of "a" is stale
    assert timers.next_due() is None and len(timers) == 0


def test_cancel_and_rescheduling_keep_memory_bounded() -> None:
    timers = Timers()
    for i in range(10_000):  # pods that kept rescheduling earlier, then were deleted
        timers.schedule(("pod", i % 10), 1e9 - i)
        if i % 3 == 0:
            timers.cancel(("pod", i % 10))
    assert len(timers) <= 10
    assert timers.heap_size <= 2 * len(timers) + 65
