"""sedna-gm's logging: ``apis.logs.configure_process_logging`` (JSON lines in production, key=value on a TTY or on
request, secrets redacted, tracebacks without locals), with uncaught thread exceptions logged as ``sedna-gm``."""

from __future__ import annotations

from typing import TextIO

from apis.logs import configure_process_logging

__all__ = ["configure_logging"]


def configure_logging(level: str = "info", fmt: str = "", stream: TextIO | None = None) -> None:
    """``--log-level`` and ``--log-format json|console`` (``""``: console on a TTY, else JSON) for sedna-gm."""
    configure_process_logging(level, fmt, stream, component="sedna-gm")
