"""``apis.logthrottle.LogThrottle``: at most one line per key per interval, every occurrence counted, bounded keys."""

from __future__ import annotations

import pytest

from apis.logthrottle import LogThrottle


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_first_occurrence_is_due_then_one_per_interval_with_the_untold_count():
    clock = Clock()
    throttle: LogThrottle[str] = LogThrottle(60.0, overflow="others", clock=clock)
    first = throttle.admit("10.0.0.1")
    assert (first.key, first.due, first.untold) == ("10.0.0.1", True, 0)
    held = [throttle.admit("10.0.0.1") for _ in range(1919)]
    assert not any(s.due for s in held) and held[-1].untold == 1919
    assert throttle.admit("10.0.0.2").due  # another source is told at once
    clock.now += 59.9
    assert not throttle.admit("10.0.0.1").due
    clock.now += 0.1
    again = throttle.admit("10.0.0.1")
    assert (again.due, again.untold) == (True, 1920)


def test_flush_tells_what_a_quiet_key_held_back_once_and_then_forgets_it():
    clock = Clock()
    throttle: LogThrottle[str] = LogThrottle(60.0, overflow="others", clock=clock)
    for _ in range(5):
        throttle.admit("a")
    throttle.admit("b")
    assert throttle.flush() == []  # the interval has not passed
    clock.now += 60
    assert throttle.flush() == [("a", 4)]  # b held nothing back
    assert throttle.flush() == []  # told once
    clock.now += 60
    throttle.flush()
    assert len(throttle) == 0  # both quiet for a whole interval: forgotten
    assert throttle.admit("a").due


def test_keys_beyond_the_bound_count_under_the_overflow_key():
    clock = Clock()
    throttle: LogThrottle[str] = LogThrottle(60.0, max_keys=3, overflow="others", clock=clock)
    assert all(throttle.admit(f"s{i}").due for i in range(3))
    spilled = [throttle.admit(f"t{i}") for i in range(100)]  # e.g. a flood from many addresses
    assert [(s.key, s.due) for s in spilled[:2]] == [("others", True), ("others", False)]
    assert spilled[-1].untold == 99 and len(throttle) == 4
    clock.now += 60
    assert throttle.flush() == [("others", 99)]
    clock.now += 60
    throttle.flush()
    assert throttle.admit("new").key == "new"  # room again once the old keys went quiet


def test_a_bounded_throttle_needs_an_overflow_key_and_forget_resets_a_key():
    with pytest.raises(ValueError, match="overflow"):
        LogThrottle(1.0, max_keys=10)
    throttle: LogThrottle[str] = LogThrottle(60.0, max_keys=None, clock=Clock())
    throttle.admit("k")
    assert not throttle.admit("k").due
    throttle.forget("k")
    assert throttle.admit("k").due
