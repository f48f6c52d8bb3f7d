"""A fresh tracker per test. (``fake_tracker_helpers`` is importable through pyproject.toml's ``pythonpath``.)"""

from __future__ import annotations

import pytest

from apis.fake import ObjectTracker


@pytest.fixture
def tracker() -> ObjectTracker:
    return ObjectTracker()
