"""structlog setup: JSON lines with timestamp/level/event/logger, console on request, stdlib loggers and Python
warnings routed through it, and ``--log-level`` respected by every logger."""

from __future__ import annotations

import io
import json
import logging
import threading
import warnings

import pytest
import structlog

from globalmanager.logging import configure_logging


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    saved = (list(root.handlers), root.level, {n: logging.getLogger(n).level for n in ("urllib3", "kubernetes")})
    saved_hook = threading.excepthook
    yield
    threading.excepthook = saved_hook
    logging.captureWarnings(False)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in saved[0]:
        root.addHandler(handler)
    root.setLevel(saved[1])
    for name, level in saved[2].items():
        logging.getLogger(name).setLevel(level)
    structlog.reset_defaults()


def lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_json_lines_carry_timestamp_level_event_logger_and_bound_keys(restore_logging):
    out = io.StringIO()
    configure_logging("info", "json", out)
    structlog.get_logger("globalmanager.runtime.controller").bind(controller="ElasticAIJob").info(
        "synced", key="default/mnist")
    logging.getLogger("kubernetes.client.rest").error("boom %s", 42)
    first, second = lines(out)
    assert first["event"] == "synced" and first["level"] == "info" and first["timestamp"].endswith("Z")
    assert first["logger"] == "globalmanager.runtime.controller"
    assert (first["controller"], first["key"]) == ("ElasticAIJob", "default/mnist")
    assert second == {**second, "event": "boom 42", "level": "error", "logger": "kubernetes.client.rest"}


def test_console_renderer_on_request(restore_logging):
    out = io.StringIO()
    configure_logging("info", "console", out)
    structlog.get_logger("sedna-gm").info("hello", key="ns/name")
    text = out.getvalue()
    assert "hello" in text and "key=ns/name" in text and not text.lstrip().startswith("{")


@pytest.mark.parametrize("library", ["urllib3.connectionpool", "kubernetes.client"])
def test_log_level_error_silences_library_warnings_too(restore_logging, library):
    out = io.StringIO()
    configure_logging("error", "json", out)
    logging.getLogger(library).warning("retrying")
    structlog.get_logger("sedna-gm").warning("ours")
    logging.getLogger(library).error("library failure")
    assert [e["event"] for e in lines(out)] == ["library failure"]


def test_library_debug_is_shown_only_at_debug(restore_logging):
    out = io.StringIO()
    configure_logging("info", "json", out)
    logging.getLogger("urllib3.connectionpool").info("chatty")
    assert lines(out) == []
    configure_logging("debug", "json", out)
    logging.getLogger("urllib3.connectionpool").debug("starting connection")
    assert [e["event"] for e in lines(out)] == ["starting connection"]


def test_python_warnings_become_json_log_lines(restore_logging, capsys):
    out = io.StringIO()
    configure_logging("info", "json", out)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("Unverified HTTPS request", stacklevel=1)
    assert capsys.readouterr().err == ""
    (entry,) = lines(out)
    assert entry["level"] == "warning" and "Unverified HTTPS request" in entry["event"]


def test_positional_arguments_are_formatted(restore_logging):
    out = io.StringIO()
    configure_logging("info", "json", out)
    structlog.get_logger("sedna-gm").info("synced %d objects", 3)
    (entry,) = lines(out)
    assert entry["event"] == "synced 3 objects" and "positional_args" not in entry


def test_an_uncaught_exception_in_a_thread_is_a_json_line(restore_logging, capsys):
    out = io.StringIO()
    configure_logging("info", "json", out)

    def boom() -> None:
        raise RuntimeError("worker exploded")

    t = threading.Thread(target=boom, name="worker-1")
    t.start()
    t.join(5)
    assert capsys.readouterr().err == ""
    (entry,) = lines(out)
    assert entry["level"] == "error" and entry["thread"] == "worker-1"
    assert "worker exploded" in json.dumps(entry["exception"])
