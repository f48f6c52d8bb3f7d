"""structlog setup for sedna-gm: JSON lines in production, key=value console output on a TTY or on request.

Standard-library loggers (urllib3, kubernetes, the library packages ``apis``/``informers``/``workqueue`` with their
key/value fields) and Python ``warnings`` go through the same processors, so every line has the same shape; the level
applies to all of them (chatty third-party libraries are held at ``warning`` at least, unless the level is ``debug``).
Exceptions are rendered without local variables, and every line passes ``apis.logs.redact_secrets`` (Authorization
headers, bearer tokens, the ``sedna.io/credential`` annotation) last before rendering.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any, TextIO

import structlog
from structlog.tracebacks import ExceptionDictTransformer

from apis.logs import redact_secrets, unpack_library_event

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
        unpack_library_event,
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.stdlib.PositionalArgumentsFormatter(),
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]
    # never the locals of a frame: request code holds headers with Authorization, clients hold tokens
    if fmt == "json":
        renderer: Any = structlog.processors.JSONRenderer()
        exceptions: Any = structlog.processors.ExceptionRenderer(ExceptionDictTransformer(show_locals=False))
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback)
        exceptions = structlog.processors.format_exc_info
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
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, exceptions, redact_secrets, renderer],
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(numeric)
    # chatty libraries stay at warning unless we debug; never below the configured level (records of a child logger
    # reach the root handler whatever the root's own level, so the library logger's level is the only filter)
    for noisy in ("urllib3", "kubernetes"):
        logging.getLogger(noisy).setLevel(numeric if numeric <= logging.DEBUG else max(numeric, logging.WARNING))
    threading.excepthook = _log_thread_exception  # not a raw traceback on stderr amid the JSON lines
    logging.captureWarnings(True)  # warnings.warn (e.g. urllib3's InsecureRequestWarning) → logger "py.warnings"


def _log_thread_exception(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    thread = args.thread.name if args.thread is not None else "?"
    structlog.get_logger("sedna-gm").error(
        "uncaught exception in thread", thread=thread, exc_info=(args.exc_type, args.exc_value, args.exc_traceback)
    )
