"""Bounded polling: a test can wait for a condition but never hang."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    what: str,
    fn: Callable[[], T],
    timeout: float = 20.0,
    interval: float = 0.02,
    check: Callable[[T], object] = bool,
) -> T:
    """Poll ``fn`` until ``check(value)`` holds (default: the value is truthy) and return the value;
    ``AssertionError`` naming ``what`` (and the last value) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if check(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}; last value: {value!r}")
        time.sleep(interval)

