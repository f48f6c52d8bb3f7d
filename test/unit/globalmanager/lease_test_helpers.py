"""Shared fakes of the leader-election tests: a hand-driven clock and the Lease they contend for."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from typing import Any

NS, NAME = "sedna", "sedna-gm"


class FakeClock:
    """A LeaderElectionClock that only moves on ``advance``; ``sleep`` waits at most 1 ms for ``stop``."""

    def __init__(self) -> None:
        self.mono = 100.0
        self.wall = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)

    def monotonic(self) -> float:
        return self.mono

    def utcnow(self) -> datetime:
        return self.wall

    def sleep(self, stop: threading.Event, seconds: float) -> bool:
        return stop.wait(0.001)

    def advance(self, seconds: float) -> None:
        self.mono += seconds
        self.wall += timedelta(seconds=seconds)


def lease(cs: Any) -> dict[str, Any]:
    """The spec of the ``NS/NAME`` Lease."""
    return cs.coordination_v1().leases(NS).get(NAME)["spec"]
