"""Capturing what the library packages (``apis``, ``informers``, ``workqueue``) log, whatever the level configured."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from apis.logs import LIBRARY_PACKAGES, LogEvent


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
