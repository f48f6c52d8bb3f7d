"""sedna-lc's logging: ``apis.logs.configure_process_logging`` (JSON lines, or key=value on a TTY or on request,
secrets redacted, tracebacks without locals), every line carrying the LC's ``node``."""

from __future__ import annotations

from typing import TextIO

from apis.logs import configure_process_logging

__all__ = ["configure_logging"]


def configure_logging(node: str, level: str = "info", fmt: str = "", stream: TextIO | None = None) -> None:
    """``--log-level`` and ``--log-format json|console`` (``""``: console on a TTY, else JSON) for sedna-lc on
    ``node``."""
    configure_process_logging(level, fmt, stream, component="sedna-lc", fields={"node": node})
