"""Fixtures of the LocalController unit tests: a rootfs directory and a real S3-compatible server
(``testkit.s3.S3Server``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from testkit.s3 import S3Server


@pytest.fixture
def rootfs(tmp_path: Path) -> Path:
    """An empty directory standing for the host's ``/`` mounted into the LC."""
    root = tmp_path / "rootfs"
    root.mkdir()
    return root


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """One moto S3 server process for the session; tests keep apart by using their own bucket."""
    with S3Server(log_path=tmp_path_factory.mktemp("s3") / "s3.log") as server:
        yield server


@pytest.fixture
def s3_bucket(s3_server: S3Server) -> str:
    """A new, empty bucket on ``s3_server``."""
    name = f"test-{uuid.uuid4().hex[:16]}"
    s3_server.client().create_bucket(Bucket=name)
    return name
