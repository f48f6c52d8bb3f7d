"""structlog setup for sedna-lc: one JSON object per line (or key=value on a TTY / on request), each with ``node``.

Records of standard-library loggers (websockets, sqlite3 users...) are rendered the same way; chatty libraries stay
at ``warning`` unless the level is ``debug``.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

__all__ = ["configure_logging"]


def configure_logging(node: str, level: str = "info", fmt: str = "", stream: TextIO | None = None) -> None:
    stream = sys.stderr if stream is None else stream
    numeric = getattr(logging, level.upper(), logging.INFO)
    if not fmt:
        fmt = "console" if stream.isatty() else "json"

    def add_node(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
        event.setdefault("node", node)
        return event

    pre_chain: list[Any] = [
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        add_node,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: Any = (structlog.processors.JSONRenderer() if fmt == "json"
                     else structlog.dev.ConsoleRenderer(colors=False))
    tail: list[Any] = [structlog.processors.dict_tracebacks] if fmt == "json" else []
    structlog.configure(
        processors=[structlog.stdlib.filter_by_level, *pre_chain, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=pre_chain,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *tail, renderer],
    ))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    logging.getLogger("websockets").setLevel(numeric if numeric <= logging.DEBUG else max(numeric, logging.WARNING))
