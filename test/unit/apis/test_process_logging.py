"""``apis.logs.configure_process_logging``, the one logging set-up of every program: the same lines whoever calls it
(sedna-gm's and sedna-lc's thin wrappers, the sandbox, the worker simulator, the ElasticDL master), level names in
any case, the format chosen by the stream, fixed fields, uncaught thread exceptions logged by the component.
(test/unit/globalmanager/test_gm_logging_config.py covers the rest through sedna-gm's wrapper.)"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable, Iterator
from functools import partial

import pytest
import structlog
from testkit import json_log_lines
from testkit.logs import restored_process_logging

from apis.logs import configure_process_logging, get_logger
from globalmanager.logging import configure_logging as configure_gm
from localcontroller.logging import configure_logging as configure_lc


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    with restored_process_logging():
        yield


PROGRAMS: dict[str, Callable[..., None]] = {
    "sedna-gm": configure_gm,
    "sedna-lc": partial(configure_lc, "edge-1"),
    "sandbox": partial(configure_process_logging, component="sandbox-apiserver"),
    "workersim": partial(configure_process_logging, component="workersim"),
    "elasticdl_master": partial(configure_process_logging, component="elasticdl_master"),
}


def fail_with_a_secret_local() -> None:
    token = "Bearer s3cr3t-t0ken"  # noqa: F841 - a local that must never be logged
    raise ConnectionError("connection reset by peer")


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_every_program_renders_the_same_json_lines(program: str) -> None:
    out = io.StringIO()
    PROGRAMS[program]("info", "json", out)
    structlog.get_logger("app").info("synced", key="default/a")
    get_logger("informers.reflector").warning("failed to list", reflector="v1/pods", error="etcd is down")
    get_logger("sandbox.simulator").debug("below the level")
    pod = {"metadata": {"annotations": {"sedna.io/credential": '{"SECRET_ACCESS_KEY": "k3y"}'}}}
    try:
        fail_with_a_secret_local()
    except ConnectionError:
        structlog.get_logger("app").exception("request failed", object=pod)
    text = out.getvalue()
    app, library, failed = json_log_lines(text)
    assert (app["event"], app["key"], app["level"], app["logger"]) == ("synced", "default/a", "info", "app")
    assert app["timestamp"].endswith("Z")
    assert (library["event"], library["reflector"], library["level"]) == ("failed to list", "v1/pods", "warning")
    assert library["logger"] == "informers.reflector"
    assert "fail_with_a_secret_local" in json.dumps(failed["exception"])
    assert "s3cr3t" not in text and "k3y" not in text and '"locals"' not in text


@pytest.mark.parametrize(("level", "shown"), [
    ("DEBUG", ["debug", "info", "warning", "error", "critical"]),
    ("warning", ["warning", "error", "critical"]),
    ("CRITICAL", ["critical"]),
    ("verbose", ["info", "warning", "error", "critical"]),  # not a level name: info
])
def test_level_names_in_any_case(level: str, shown: list[str]) -> None:
    out = io.StringIO()
    configure_process_logging(level, "json", out)
    log = structlog.get_logger("app")
    for name in ("debug", "info", "warning", "error", "critical"):
        getattr(log, name)(name)
    assert [e["event"] for e in json_log_lines(out.getvalue())] == shown


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("stream", "json_lines"), [(Terminal(), False), (io.StringIO(), True)])
def test_no_format_means_console_on_a_terminal_and_json_elsewhere(stream: io.StringIO, json_lines: bool) -> None:
    configure_process_logging("info", "", stream)
    structlog.get_logger("app").info("hello", key="ns/name")
    text = stream.getvalue()
    assert text.lstrip().startswith("{") is json_lines
    assert "hello" in text and ("key=ns/name" in text or '"key": "ns/name"' in text)


def test_fixed_fields_are_added_unless_the_line_sets_them() -> None:
    out = io.StringIO()
    configure_process_logging("info", "json", out, fields={"node": "edge-1", "zone": "a"})
    structlog.get_logger("app").info("own node", node="edge-2")
    get_logger("workqueue.queue").info("library line")
    own, library = json_log_lines(out.getvalue())
    assert (own["node"], own["zone"]) == ("edge-2", "a")
    assert (library["node"], library["zone"]) == ("edge-1", "a")


def test_an_uncaught_thread_exception_is_logged_by_the_component(capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    configure_process_logging("info", "json", out, component="workersim")

    def boom() -> None:
        raise RuntimeError("worker exploded")

    thread = threading.Thread(target=boom, name="player-1")
    thread.start()
    thread.join(5)
    assert capsys.readouterr().err == ""
    (entry,) = json_log_lines(out.getvalue())
    assert (entry["logger"], entry["thread"], entry["level"]) == ("workersim", "player-1", "error")
    assert "worker exploded" in json.dumps(entry["exception"])
