"""A started ``PodSimulator`` on a fresh tracker per test; its threads are joined at teardown."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apis.fake import ObjectTracker
from apis.fake.kubelet import PodSimulator


@pytest.fixture
def sim() -> Iterator[PodSimulator]:
    simulator = PodSimulator(ObjectTracker(), tick=0.01).start()
    yield simulator
    simulator.stop()
    assert all(not t.is_alive() for t in simulator._threads)
