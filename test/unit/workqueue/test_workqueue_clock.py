"""One clock for the whole library: ``workqueue.clock`` serves the queues and the informers alike."""

from __future__ import annotations

import random
import threading

import informers
import workqueue
from informers.backoff import Backoff
from workqueue.clock import REAL_CLOCK, FakeClock


def test_informers_and_workqueue_share_one_clock_type():
    assert informers.Clock is workqueue.Clock
    assert informers.RealClock is workqueue.RealClock and informers.FakeClock is workqueue.FakeClock
    assert isinstance(FakeClock(), workqueue.Clock) and isinstance(REAL_CLOCK, workqueue.Clock)


def test_fake_clock_sleep_advances_time_and_reports_the_stop():
    clock = FakeClock(10.0)
    stop = threading.Event()
    assert clock.sleep(2.5, stop) is False and clock.now() == 12.5
    stop.set()
    assert clock.sleep(1.0, stop) is True and clock.now() == 13.5


def test_fake_clock_sleep_wakes_a_queue_waiting_for_that_time():
    clock = FakeClock()
    q = workqueue.DelayingQueue(clock=clock)
    q.add_after("later", 5.0)
    clock.sleep(5.0, threading.Event())
    item, shutdown = q.get()
    assert (item, shutdown) == ("later", False)
    q.done(item)
    q.shut_down()


def test_a_reflector_backoff_runs_on_the_fake_clock():
    clock = FakeClock(100.0)
    backoff = Backoff(initial=1.0, cap=4.0, jitter_factor=0, clock=clock, rng=random.Random(0))
    stop = threading.Event()
    for _ in range(4):
        assert backoff.wait(stop) is False
    assert clock.now() == 100.0 + 1 + 2 + 4 + 4


def test_real_clock_sleep_returns_at_once_when_stopped():
    stop = threading.Event()
    stop.set()
    assert REAL_CLOCK.sleep(3600, stop) is True
