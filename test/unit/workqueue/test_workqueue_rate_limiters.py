"""Port of client-go util/workqueue/default_rate_limiters_test.go plus token-bucket debt checks."""

from __future__ import annotations

import threading
from collections.abc import Hashable

import pytest

from workqueue import (
    BucketRateLimiter,
    FakeClock,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
    default_item_based_rate_limiter,
)
from workqueue.rate_limiters import INF_DURATION

MS = 0.001


def test_item_exponential_failure_rate_limiter() -> None:
    limiter = ItemExponentialFailureRateLimiter(1 * MS, 1.0)
    assert [limiter.when("one") for _ in range(5)] == [1 * MS, 2 * MS, 4 * MS, 8 * MS, 16 * MS]
    assert limiter.num_requeues("one") == 5
    assert limiter.when("two") == 1 * MS
    assert limiter.when("two") == 2 * MS
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 1 * MS


def test_item_exponential_failure_rate_limiter_overflow() -> None:
    limiter = ItemExponentialFailureRateLimiter(1 * MS, 1000.0)
    for _ in range(5):
        limiter.when("one")
    assert limiter.when("one") == 32 * MS
    for _ in range(1000):
        limiter.when("overflow1")
    assert limiter.when("overflow1") == 1000.0

    limiter = ItemExponentialFailureRateLimiter(60.0, 1000 * 3600.0)
    for _ in range(2):
        limiter.when("two")
    assert limiter.when("two") == 4 * 60.0
    for _ in range(1000):
        limiter.when("overflow2")
    assert limiter.when("overflow2") == 1000 * 3600.0


def test_item_exponential_caps_at_max() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    delays = [limiter.when("k") for _ in range(20)]
    assert delays[17] == pytest.approx(655.36)
    assert delays[18] == delays[19] == 1000.0


def test_item_fast_slow_rate_limiter() -> None:
    limiter = ItemFastSlowRateLimiter(5 * MS, 10.0, 3)
    assert [limiter.when("one") for _ in range(5)] == [5 * MS, 5 * MS, 5 * MS, 10.0, 10.0]
    assert limiter.num_requeues("one") == 5
    assert [limiter.when("two") for _ in range(2)] == [5 * MS, 5 * MS]
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 5 * MS


def test_max_of_rate_limiter() -> None:
    limiter = MaxOfRateLimiter(
        ItemFastSlowRateLimiter(5 * MS, 3.0, 3),
        ItemExponentialFailureRateLimiter(1 * MS, 1.0),
    )
    assert [limiter.when("one") for _ in range(5)] == [5 * MS, 5 * MS, 5 * MS, 3.0, 3.0]
    assert limiter.num_requeues("one") == 5
    assert [limiter.when("two") for _ in range(2)] == [5 * MS, 5 * MS]
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 5 * MS


class StepRateLimiter:
    def __init__(self, base_delay: float, max_delay: float, threshold: int) -> None:
        self.base_delay, self.max_delay, self.threshold = base_delay, max_delay, threshold
        self.count = 0

    def when(self, item: Hashable) -> float:
        self.count += 1
        return self.base_delay if self.count <= self.threshold else self.max_delay

    def num_requeues(self, item: Hashable) -> int:
        return 0

    def forget(self, item: Hashable) -> None:
        pass


def test_with_max_wait_rate_limiter() -> None:
    limiter = WithMaxWaitRateLimiter(StepRateLimiter(5 * MS, 1000.0, 100), 500.0)
    assert all(limiter.when(i) == 5 * MS for i in range(100))
    assert all(limiter.when(i) == 500.0 for i in range(100, 200))


def test_bucket_rate_limiter_debt() -> None:
    clock = FakeClock(50.0)
    limiter = BucketRateLimiter(10, 100, clock=clock)
    assert [limiter.when(i) for i in range(100)] == [0.0] * 100
    assert limiter.when("x") == pytest.approx(0.1)
    assert limiter.when("y") == pytest.approx(0.2)
    assert limiter.when("z") == pytest.approx(0.3)
    assert limiter.num_requeues("x") == 0
    limiter.forget("x")


def test_bucket_rate_limiter_refills() -> None:
    clock = FakeClock(0.0)
    limiter = BucketRateLimiter(10, 2, clock=clock)
    assert [limiter.when(i) for i in range(3)] == [0.0, 0.0, pytest.approx(0.1)]
    clock.step(0.1)  # pays the debt back exactly
    assert limiter.when("a") == pytest.approx(0.1)
    clock.step(10)  # refills to the burst, never more
    assert [limiter.when(i) for i in range(3)] == [0.0, 0.0, pytest.approx(0.1)]


def test_bucket_rate_limiter_edge_limits() -> None:
    assert BucketRateLimiter(float("inf"), 0).when("a") == 0.0
    zero = BucketRateLimiter(0, 1)
    assert zero.when("a") == 0.0
    assert zero.when("a") == INF_DURATION
    assert BucketRateLimiter(10, 0).when("a") == INF_DURATION


def test_default_controller_rate_limiter() -> None:
    limiter = default_controller_rate_limiter()
    assert isinstance(limiter, RateLimiter)
    assert [limiter.when("k") for _ in range(3)] == [0.005, 0.01, 0.02]
    assert limiter.num_requeues("k") == 3
    limiter.forget("k")
    assert limiter.num_requeues("k") == 0


def test_default_item_based_rate_limiter() -> None:
    limiter = default_item_based_rate_limiter()
    assert [limiter.when("k") for _ in range(3)] == [0.001, 0.002, 0.004]


def test_rate_limiters_are_thread_safe() -> None:
    limiter = ItemExponentialFailureRateLimiter(MS, 1.0)
    bucket = BucketRateLimiter(10, 1000, clock=FakeClock())

    def hammer() -> None:
        for _ in range(500):
            limiter.when("k")
            bucket.when("k")

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert limiter.num_requeues("k") == 2000
    # 2000 reservations on a full bucket of 1000 at 10 qps: the next one waits 1001 tokens
    assert bucket.when("k") == pytest.approx(100.1)
