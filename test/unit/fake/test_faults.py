"""Faults: validated runtime knobs and a deterministic, seeded error sequence."""

from __future__ import annotations

import pytest

from sandbox.faults import Faults


def _sequence(faults: Faults, n: int = 40) -> list[int | None]:
    return [faults.pick_error() for _ in range(n)]


def test_off_by_default() -> None:
    faults = Faults()
    assert not faults.active
    assert _sequence(faults) == [None] * 40 and faults.latency_seconds() == 0.0
    assert faults.stats.errors_429 == faults.stats.errors_500 == faults.stats.delayed_requests == 0


def test_same_seed_same_sequence_and_reseeding_restarts_it() -> None:
    a, b = Faults(error_rate=0.5, seed=7), Faults(error_rate=0.5, seed=7)
    seq = _sequence(a)
    assert seq == _sequence(b)
    assert {429, 500, None} == set(seq)
    assert a.stats.errors_429 == seq.count(429) and a.stats.errors_500 == seq.count(500)
    a.seed = 7
    assert _sequence(a) == seq
    assert _sequence(Faults(error_rate=0.5, seed=8)) != seq


def test_error_rate_one_always_fails() -> None:
    assert None not in _sequence(Faults(error_rate=1.0, seed=1))


def test_knobs_are_settable_at_runtime_and_validated() -> None:
    faults = Faults()
    faults.drop_watch_after = 0.5
    faults.drop_watch_after_events = 3
    faults.gone_on_rewatch = True
    faults.latency_ms = 5
    assert faults.active and faults.latency_seconds() == 0.005 and faults.stats.delayed_requests == 1
    for knob, bad in [
        ("error_rate", 1.5),
        ("error_rate", -0.1),
        ("drop_watch_after", 0),
        ("drop_watch_after_events", 1.5),
        ("gone_on_rewatch", "yes"),
        ("latency_ms", -1),
        ("seed", "abc"),
    ]:
        with pytest.raises(ValueError, match=knob):
            setattr(faults, knob, bad)
    with pytest.raises(AttributeError, match="no knob"):
        faults.error_rat = 0.5  # typo: refused rather than silently ignored
    assert "drop_watch_after=0.5" in repr(faults)
