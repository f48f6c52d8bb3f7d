"""Fixtures of the LocalController unit tests: a rootfs directory (the S3 server and its buckets, ``s3_server`` and
``s3_bucket``, come from ``test/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def rootfs(tmp_path: Path) -> Path:
    """An empty directory standing for the host's ``/`` mounted into the LC."""
    root = tmp_path / "rootfs"
    root.mkdir()
    return root
