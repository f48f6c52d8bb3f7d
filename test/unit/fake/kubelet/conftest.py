"""A started ``PodSimulator`` on a fresh tracker per test (``sim``, or ``make_sim`` for another tick, tracker or a
change before it starts); its threads are joined at teardown."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from apis.fake import ObjectTracker
from sandbox.simulator import PodSimulator


@pytest.fixture
def make_sim() -> Iterator[Callable[..., PodSimulator]]:
    """``make_sim(tick=0.01, tracker=None, before_start=None)``: a started simulator (on a new tracker unless one is
    given; ``before_start(simulator)`` runs first); each is stopped at teardown and its threads checked joined."""
    started: list[PodSimulator] = []

    def make(tick: float = 0.01, tracker: ObjectTracker | None = None,
             before_start: Callable[[PodSimulator], None] | None = None) -> PodSimulator:
        simulator = PodSimulator(tracker if tracker is not None else ObjectTracker(), tick=tick)
        if before_start is not None:
            before_start(simulator)
        started.append(simulator.start())
        return simulator

    yield make
    for simulator in started:
        simulator.stop()
        assert all(not t.is_alive() for t in simulator._threads)


@pytest.fixture
def sim(make_sim: Callable[..., PodSimulator]) -> PodSimulator:
    return make_sim()
