"""Makes ``fake_tracker_helpers`` importable and provides a fresh tracker per test."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from apis.fake import ObjectTracker  # noqa: E402


@pytest.fixture
def tracker() -> ObjectTracker:
    return ObjectTracker()
