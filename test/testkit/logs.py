"""Capturing what the library packages (``apis``, ``informers``, ``workqueue``) log, whatever the level configured;
undoing a program's process-wide logging set-up after a test."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import structlog

from apis.logs import ANNOUNCE_LOGGER, LIBRARY_PACKAGES, QUIET_LOGGERS, LogEvent


class _Collect(logging.Handler):
    def __init__(self, into: list[dict[str, Any]]) -> None:
        super().__init__(logging.DEBUG)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, LogEvent):
            self.into.append({**record.msg, "log_level": record.levelname.lower(), "logger": record.name})


@contextmanager
def capture_library_logs() -> Iterator[list[dict[str, Any]]]:
    """Every library log line while the block runs, as event dicts (``event``, the keys, ``log_level``, ``logger``),
    like ``structlog.testing.capture_logs`` does for application loggers."""
    captured: list[dict[str, Any]] = []
    handler = _Collect(captured)
    loggers = [logging.getLogger(name) for name in LIBRARY_PACKAGES]
    saved = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    try:
        yield captured
    finally:
        for logger, level in zip(loggers, saved, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)


@contextmanager
def restored_process_logging() -> Iterator[None]:
    """Undo ``apis.logs.configure_process_logging`` (directly or through a program's ``main``) when the block ends:
    the root logger's handlers and level, the quiet loggers' levels, ``threading.excepthook``, captured warnings and
    structlog's configuration. Inside the block structlog never caches a logger on first use, so no module-level
    logger keeps the block's configuration afterwards (``structlog.testing.capture_logs`` still sees it)."""
    root = logging.getLogger()
    saved_root = ([h for h in root.handlers if not _is_pytests(h)], root.level)
    saved_levels = {name: logging.getLogger(name).level for name in (*QUIET_LOGGERS, ANNOUNCE_LOGGER)}
    saved_hook = threading.excepthook
    configure = structlog.configure

    def configure_without_cache(**kwargs: Any) -> None:
        configure(**{**kwargs, "cache_logger_on_first_use": False})

    structlog.configure = configure_without_cache
    try:
        yield
    finally:
        structlog.configure = configure
        structlog.reset_defaults()
        threading.excepthook = saved_hook
        logging.captureWarnings(False)
        root.handlers[:] = [h for h in root.handlers if _is_pytests(h)] + saved_root[0]  # pytest's: its business
        root.setLevel(saved_root[1])
        for name, level in saved_levels.items():
            logging.getLogger(name).setLevel(level)


def _is_pytests(handler: logging.Handler) -> bool:
    """A handler pytest adds and removes around each test phase (caplog, live logs)."""
    return type(handler).__module__.startswith("_pytest.")
