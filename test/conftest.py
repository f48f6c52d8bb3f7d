"""Root of the test tree: the fixtures more than one suite uses. (``testkit``, the helpers every suite shares, is
importable as a top-level package through the ``pythonpath`` option in pyproject.toml.)"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

# the sandbox's fixtures (sandbox, sandbox_server, sandbox_namespace, sandbox_factory); an installed package also
# registers them through its pytest11 entry point, under this same name (so not twice)
pytest_plugins = ["sandbox.pytest_plugin"]

if TYPE_CHECKING:
    from testkit.s3 import S3Server


@pytest.fixture(autouse=True)
def _process_logging_restored() -> Iterator[None]:
    """A test that runs a program's ``main`` in-process configures process-wide logging (handlers on the root logger
    writing to that test's captured stderr); undo it, so that no later test logs into a closed stream."""
    from testkit.logs import restored_process_logging

    with restored_process_logging():
        yield


@pytest.fixture
def procs(tmp_path):  # type: ignore[no-untyped-def]
    """Real child processes (``testkit.Processes``), killed at teardown; shared by the integration and e2e suites."""
    from testkit import Processes

    p = Processes(tmp_path)
    yield p
    p.cleanup()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """One moto S3 server process (``testkit.s3.S3Server``) for the session, its log in ``<tmp>/s3*/s3.log``;
    tests keep apart by using their own bucket."""
    from testkit.s3 import S3Server

    with S3Server(log_path=tmp_path_factory.mktemp("s3") / "s3.log") as server:
        yield server


@pytest.fixture
def s3_bucket(s3_server: S3Server) -> str:
    """A new, empty bucket on ``s3_server``."""
    name = f"test-{uuid.uuid4().hex[:16]}"
    s3_server.client().create_bucket(Bucket=name)
    return name
