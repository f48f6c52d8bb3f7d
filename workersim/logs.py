"""Logging of the worker simulator: silent as a library, JSON lines (or key=value) when run as a process.

Inside the package, ``get_logger(__name__)`` is a structlog logger over the standard-library logger of that name;
the package logger carries a ``NullHandler``, so nothing is printed unless the application configures ``logging``.
``configure_process_logging`` is what ``python -m workersim`` calls: one JSON object per line on stderr with
``event``, ``level``, ``timestamp``, ``logger`` and the call's keys.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

__all__ = ["configure_process_logging", "get_logger"]

PACKAGE = "workersim"
logging.getLogger(PACKAGE).addHandler(logging.NullHandler())


_CHAIN: list[Any] = [
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def get_logger(name: str) -> Any:
    """A structlog ``BoundLogger`` over ``logging.getLogger(name)``: the record's message is the event dict, which
    ``structlog.stdlib.ProcessorFormatter`` renders with all its keys."""
    return structlog.wrap_logger(
        logging.getLogger(name),
        processors=[structlog.stdlib.filter_by_level, *_CHAIN, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        wrapper_class=structlog.stdlib.BoundLogger,
    )


def configure_process_logging(level: str = "info", fmt: str = "json", stream: TextIO | None = None) -> None:
    """Render every standard-library record as JSON (``fmt="json"``) or key=value."""
    stream = sys.stderr if stream is None else stream
    renderer: Any = (structlog.processors.JSONRenderer() if fmt == "json"
                     else structlog.dev.ConsoleRenderer(colors=False))
    handler = logging.StreamHandler(stream)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_CHAIN,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            *([structlog.processors.dict_tracebacks] if fmt == "json" else []),
            renderer,
        ],
    ))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    # the informers (structlog's default logger factory) print straight to stdout: route them through logging too
    structlog.configure(
        processors=[structlog.stdlib.filter_by_level, *_CHAIN, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
