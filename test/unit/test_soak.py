"""The pure parts of ``hack.soak``: the RSS slope (least squares, MB per 10 minutes) and the summary it reports after
the warm-up (no soak runs here)."""

from __future__ import annotations

from typing import Any

from hack.soak import slope_per_10_min, summary


def sample(t: float, rss: dict[str, float], round_: int = 1) -> dict[str, Any]:
    return {"t": t, "processes": {n: {"rss_mb": v, "open_files": 10, "threads": 5} for n, v in rss.items()},
            "job": {"bytes": 4000, "round": round_, "conditions": 4, "pruned_conditions": 0},
            "stored": {"pods": 3, "events": 50}, "load": [2.0, 2.0, 2.0], "dataset_samples": 10}


def test_the_slope_is_mb_per_10_minutes_by_least_squares():
    assert slope_per_10_min([(0, 100.0), (60, 101.0), (120, 102.0)]) == 10.0
    assert slope_per_10_min([(0, 50.0), (600, 50.0), (1200, 50.0)]) == 0.0
    assert slope_per_10_min([(0, 50.0)]) is None and slope_per_10_min([(5, 1.0), (5, 2.0)]) is None


def test_the_summary_counts_only_what_follows_the_warm_up():
    samples = [sample(0, {"gm": 40.0}), sample(60, {"gm": 60.0}),  # warming up: filling its caches
               sample(120, {"gm": 60.0, "lc": 30.0}), sample(720, {"gm": 60.5, "lc": 30.0}, round_=41)]
    got = summary(samples, warmup=120)
    assert got["processes"]["gm"]["rss_slope_mb_per_10_min"] == 0.5
    assert got["processes"]["gm"]["rss_mb_after_warmup"] == [60.0, 60.5]
    assert got["processes"]["lc"]["rss_slope_mb_per_10_min"] == 0.0
    assert got["rounds_done"] == 40 and got["job_at_end"]["bytes"] == 4000 and got["minutes"] == 12.0
