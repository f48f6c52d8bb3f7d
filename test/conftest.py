"""Root of the test tree: makes ``testkit`` (the helpers every suite shares) importable as a top-level package."""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


import pytest  # noqa: E402


@pytest.fixture
def procs(tmp_path):  # type: ignore[no-untyped-def]
    """Real child processes (``testkit.Processes``), killed at teardown; shared by the integration and e2e suites."""
    from testkit import Processes

    p = Processes(tmp_path)
    yield p
    p.cleanup()
