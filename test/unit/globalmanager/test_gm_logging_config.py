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
from testkit.logs import restored_process_logging

from apis.logs import get_logger
from globalmanager.logging import configure_logging


@pytest.fixture
def restore_logging():
    with restored_process_logging():
        yield


def lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_json_lines_carry_timestamp_level_event_logger_and_bound_keys(restore_logging):
    out = io.StringIO()
    configure_logging("info", "json", out)
    structlog.get_logger("globalmanager.runtime.jobcontroller").bind(controller="ElasticAIJob").info(
        "synced", key="default/mnist")
    logging.getLogger("kubernetes.client.rest").error("boom %s", 42)
    first, second = lines(out)
    assert first["event"] == "synced" and first["level"] == "info" and first["timestamp"].endswith("Z")
    assert first["logger"] == "globalmanager.runtime.jobcontroller"
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


def run_a_reflector_once() -> None:
    """A reflector over the fake clientset: logs "starting reflector" (debug) with its keys, lists, stops."""
    from apis.fake import FakeClientset
    from informers import SharedInformerFactory

    stop = threading.Event()
    factory = SharedInformerFactory(FakeClientset())
    factory.core_v1().pods()
    factory.start(stop)
    assert all(factory.wait_for_cache_sync(stop).values())
    stop.set()
    factory.shutdown(timeout=5)


def test_library_lines_are_json_with_their_keys_at_the_configured_level(restore_logging):
    out = io.StringIO()
    configure_logging("info", "json", out)
    run_a_reflector_once()
    assert [e for e in lines(out) if e.get("logger", "").startswith("informers.")] == []
    configure_logging("debug", "json", out)
    run_a_reflector_once()
    with structlog.contextvars.bound_contextvars(controller="ElasticAIJob", key="default/a"):
        get_logger("informers.listers").info("looked up", index="namespace")
    started = [e for e in lines(out) if e["event"] == "starting reflector"]
    assert started, out.getvalue()
    entry = started[0]
    assert entry["logger"] == "informers.reflector" and entry["level"] == "debug" and entry["timestamp"].endswith("Z")
    assert entry["reflector"] == "v1/pods" and entry["resync_period"] == 0.0
    (looked_up,) = [e for e in lines(out) if e["event"] == "looked up"]  # context bound by the application
    assert looked_up == {**looked_up, "controller": "ElasticAIJob", "key": "default/a", "index": "namespace"}


def fail_with_secrets_in_locals() -> None:
    headers = {"Authorization": "Bearer s3cr3t-t0ken"}  # noqa: F841 - a local that must never be logged
    credential = "AKIAXXXXXXXX"  # noqa: F841
    raise ConnectionError("connection reset by peer")


@pytest.mark.parametrize("fmt", ["json", "console"])
def test_exceptions_are_logged_without_local_variables(restore_logging, fmt):
    out = io.StringIO()
    configure_logging("info", fmt, out)
    for logger in (structlog.get_logger("sedna-gm"), logging.getLogger("kubernetes.client")):
        try:
            fail_with_secrets_in_locals()
        except ConnectionError:
            logger.exception("request failed")
    text = out.getvalue()
    assert text.count("request failed") == 2 and "connection reset by peer" in text
    assert "fail_with_secrets_in_locals" in text  # the traceback is there, only without locals
    assert "s3cr3t" not in text and "AKIA" not in text and '"locals"' not in text


@pytest.mark.parametrize("fmt", ["json", "console"])
def test_credentials_are_redacted_in_every_line(restore_logging, fmt):
    out = io.StringIO()
    configure_logging("info", fmt, out)
    pod = {"metadata": {"name": "p", "annotations": {"sedna.io/credential": '{"SECRET_ACCESS_KEY": "k3y"}'}}}
    structlog.get_logger("sedna-gm").warning("sent", headers={"Authorization": "Bearer s3cr3t-t0ken"}, object=pod)
    get_logger("apis.clientset").warning("request failed", error="401 for headers {'authorization': 'Bearer s3cr3t'}")
    logging.getLogger("urllib3").warning("header Authorization: Bearer s3cr3t-t0ken")
    try:
        raise ValueError(f"bad object {pod}")
    except ValueError:
        structlog.get_logger("sedna-gm").exception("sync failed")
    text = out.getvalue()
    assert "s3cr3t" not in text and "k3y" not in text, text
    assert text.count("[REDACTED]") >= 4 and "request failed" in text and "sync failed" in text
