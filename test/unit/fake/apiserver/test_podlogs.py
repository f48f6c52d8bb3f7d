"""``pods/log`` from a directory (``sandbox.apiserver.podlogs``): selection, bounds and checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from apis.errors import BadRequestError, InvalidError
from sandbox.apiserver import podlogs
from sandbox.apiserver.podlogs import LogRequest, log_file, log_request, read_log

RUNNING = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]},
           "status": {"phase": "Running", "containerStatuses": [{"name": "c", "state": {"running": {}}}]}}


def test_tail_lines_then_limit_bytes(tmp_path: Path) -> None:
    path = tmp_path / "p.log"
    path.write_bytes(b"a\nbb\nccc\n")
    assert read_log(path, LogRequest(None, None, False)) == (b"a\nbb\nccc\n", 9)
    assert read_log(path, LogRequest(2, None, False))[0] == b"bb\nccc\n"
    assert read_log(path, LogRequest(0, None, False))[0] == b""
    assert read_log(path, LogRequest(2, 4, False))[0] == b"bb\nc"
    assert read_log(tmp_path / "absent.log", LogRequest(None, None, False)) == (b"", 0)


def test_a_long_file_is_read_from_its_last_whole_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(podlogs, "MAX_LOG_BYTES", 10)
    path = tmp_path / "p.log"
    path.write_bytes(b"0123456789\nabc\ndef\n")
    assert read_log(path, LogRequest(None, None, False))[0] == b"abc\ndef\n"


@pytest.mark.parametrize(("query", "error"), [
    ({"tailLines": ["-1"]}, InvalidError), ({"limitBytes": ["0"]}, InvalidError),
    ({"tailLines": ["x"]}, BadRequestError), ({"container": ["nope"]}, BadRequestError),
])
def test_bad_options_are_refused(query: dict, error: type) -> None:
    with pytest.raises(error):
        log_request(RUNNING, query)


def test_a_pod_whose_containers_did_not_start_has_no_log_yet() -> None:
    pending = {**RUNNING, "status": {"phase": "Pending", "containerStatuses": [
        {"name": "c", "state": {"waiting": {"reason": "ContainerCreating"}}}]}}
    with pytest.raises(BadRequestError, match='container "c" in pod "p" is waiting to start: ContainerCreating'):
        log_request(pending, {})
    assert log_request(RUNNING, {"follow": ["true"], "tailLines": ["3"]}) == LogRequest(3, None, True)


def test_the_file_of_a_pod_is_namespace_slash_pod_dot_log(tmp_path: Path) -> None:
    assert log_file(tmp_path, "default", "w-1") == tmp_path / "default" / "w-1.log"
    with pytest.raises(BadRequestError):
        log_file(tmp_path, "..", "x")
