"""structlog setup for sedna-gm: JSON lines in production, key=value console output on a TTY or on request.

Standard-library loggers (urllib3, kubernetes, our own modules using ``logging``) go through the same processors, so
every line has the same shape.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

__all__ = ["configure_logging"]

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def configure_logging(level: str = "info", fmt: str = "", stream: TextIO | None = None) -> None:
    """Configure structlog and the stdlib root logger.

    ``fmt`` is ``json``, ``console`` or ``""`` (console when ``stream`` is a TTY, else JSON).
    """
    stream = sys.stderr if stream is None else stream
    numeric = _LEVELS.get(level.lower(), logging.INFO)
    if not fmt:
        fmt = "console" if getattr(stream, "isatty", lambda: False)() else "json"
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]
    if fmt == "json":
        renderer: Any = structlog.processors.JSONRenderer()
        shared_tail: list[Any] = [structlog.processors.dict_tracebacks]
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=False)
        shared_tail = []
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *shared,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *shared_tail, renderer],
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(numeric)
    # chatty libraries stay at warning unless we debug
    for noisy in ("urllib3", "kubernetes"):
        logging.getLogger(noisy).setLevel(numeric if numeric <= logging.DEBUG else logging.WARNING)
