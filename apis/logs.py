"""Loggers of the library packages (``apis``, ``informers``, ``workqueue``, ``reconcile``): silent unless the application
configures ``logging``, and key/value like structlog.

``get_logger(__name__)`` returns a structlog ``BoundLogger`` over the standard-library logger of that name, so calls
read ``log.info("watch closed", reflector=name)`` and the standard ``logging`` levels and handlers decide what comes
out. The package loggers carry a ``NullHandler``: with no configuration nothing is printed (not even warnings).

* plain ``logging`` (``logging.basicConfig(level=logging.DEBUG)``): the message reads
  ``watch closed reflector=pods``;
* structlog's ``ProcessorFormatter`` (as ``sedna-gm`` configures it): add ``unpack_library_event`` to its
  ``foreign_pre_chain`` and library lines carry ``event`` and their keys as separate fields, like the application's.

``redact_secrets`` is the structlog processor that blanks credentials in any log line (keys and text alike).

``configure_process_logging`` is the one logging set-up of our programs (``sedna-gm``, ``sedna-lc``, the sandbox API
server, the worker simulator, the ElasticDL master): a program calls it once; a library never does.

``announce_listening(server, url)`` logs ``listening`` with ``server`` and ``url`` once a server bound its address:
the machine-readable announcement whoever started the program reads (with port 0 the only way to learn the port).
It comes out at every ``--log-level`` (its logger, ``ANNOUNCE_LOGGER``, stays at info).
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
from collections.abc import Mapping, MutableMapping
from contextlib import AbstractContextManager
from types import FrameType
from typing import Any, TextIO

import structlog
from structlog.tracebacks import ExceptionDictTransformer

__all__ = [
    "ANNOUNCE_LOGGER", "LIBRARY_PACKAGES", "LOG_FORMATS", "LOG_LEVELS", "LogEvent", "QUIET_LOGGERS", "REDACTED",
    "announce_listening", "bound_context", "configure_process_logging", "get_logger", "redact_secrets",
    "unpack_library_event",
]

# the packages that log as a library (through get_logger, silent until a program configures logging); the sandbox
# (a top-level package of its own, outside the library layer) logs the same way
LIBRARY_PACKAGES = ("apis", "informers", "workqueue", "reconcile", "sandbox")

for _package in LIBRARY_PACKAGES:
    logging.getLogger(_package).addHandler(logging.NullHandler())


class LogEvent(dict[str, Any]):
    """The event dict of one library log call, used as the ``msg`` of its ``logging.LogRecord``.

    ``str()`` renders ``event key=value ...`` for plain ``logging`` formatters; ``unpack_library_event`` turns it back
    into fields for structlog's ``ProcessorFormatter``."""

    def __str__(self) -> str:
        event = self.get("event", "")
        rest = " ".join(f"{k}={v!r}" if isinstance(v, str) and (" " in v or not v) else f"{k}={v}"
                        for k, v in self.items() if k != "event")
        return f"{event} {rest}" if rest else str(event)


def _to_stdlib(logger: logging.Logger, method_name: str, event_dict: MutableMapping[str, Any]) -> Any:
    """Last processor: hand the event to the standard-library logger as a ``LogEvent`` message."""
    kwargs: dict[str, Any] = {}
    for name in ("exc_info", "stack_info"):
        if name in event_dict:
            kwargs[name] = event_dict.pop(name)
    args = event_dict.pop("positional_args", ())
    if args:
        try:
            event_dict["event"] = str(event_dict.get("event", "")) % args
        except (TypeError, ValueError):
            event_dict["event"] = f"{event_dict.get('event', '')} {args!r}"
    if type(logger).findCaller is logging.Logger.findCaller:  # structlog's logger class skips its frames itself
        kwargs["stacklevel"] = _structlog_frames() + 1  # the record names the caller, not structlog's internals
    return (LogEvent(event_dict),), kwargs


_STRUCTLOG_DIR = os.path.dirname(structlog.__file__) + os.sep


def _structlog_frames() -> int:
    """The structlog frames between the stdlib logger call and the code that logged (``stacklevel`` skips them)."""
    # frames: 0 here, 1 _to_stdlib, 2 structlog's _process_event, 3 its _proxy_to_logger
    frame: FrameType | None = sys._getframe(3)
    count = 0
    while frame is not None and frame.f_code.co_filename.startswith(_STRUCTLOG_DIR):
        count += 1
        frame = frame.f_back
    return count


_PROCESSORS = [structlog.stdlib.filter_by_level, _to_stdlib]


def get_logger(name: str) -> Any:
    """A key/value logger over ``logging.getLogger(name)``; pass the module's ``__name__``."""
    return structlog.wrap_logger(
        logging.getLogger(name),
        processors=_PROCESSORS,
        wrapper_class=structlog.stdlib.BoundLogger,
        context_class=dict,
        cache_logger_on_first_use=True,
    )


def bound_context(**fields: Any) -> AbstractContextManager[None]:
    """A block in which every structlog line of this thread (a program's and a library's under
    ``configure_process_logging``) carries ``fields``, e.g. the controller and key a sync works on."""
    return structlog.contextvars.bound_contextvars(**fields)


def unpack_library_event(_logger: object, _method: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """structlog processor for ``ProcessorFormatter.foreign_pre_chain``: a library record's ``event`` and keys become
    fields of the line (other records pass unchanged)."""
    record = event_dict.get("_record")
    msg = getattr(record, "msg", None)
    if isinstance(msg, LogEvent):
        for key, value in msg.items():
            if key not in ("_record", "_from_structlog"):
                event_dict[key] = value
    return event_dict


# -- redaction -----------------------------------------------------------------------------------------------------

REDACTED = "[REDACTED]"

# credential-like names, as keys (any case) and as ``name: value`` / ``name=value`` inside text
_SECRET_NAMES = (
    "authorization", "proxy-authorization", "x-auth-token", "cookie", "set-cookie", "token", "bearer_token",
    "access_token", "refresh_token", "id-token", "password", "client-key-data", "sedna.io/credential",
    # S3 / AWS: the sedna.io/credential keys, boto's arguments, SigV4 headers and presigned-URL query parameters
    "secret_access_key", "access_key_id", "aws_access_key_id", "aws_secret_access_key", "aws_session_token",
    "session_token", "x-amz-security-token", "x-amz-credential", "x-amz-signature", "awsaccesskeyid", "signature",
    "credential",
)
_SECRET_KEYS = frozenset(_SECRET_NAMES)
_NAME_ALTERNATIVES = "|".join(re.escape(name) for name in sorted(_SECRET_NAMES, key=len, reverse=True)
                              if name not in ("token", "cookie", "set-cookie", "signature", "credential"))
_SECRET_TEXT = [
    # a header line "Authorization: <scheme> <credentials>" (the websockets library's debug lines of a request): the
    # whole value, whatever the scheme ("Token abc", "Digest ..."), to the end of its line; quoted forms below
    (re.compile(r"""(?im)(?<![\w-])((?:proxy-)?authorization)([ \t]*:[ \t]*)(?!b?['"])[^\r\n]+"""),
     rf"\1\2{REDACTED}"),
    # an Authorization header or scheme anywhere in a text: "Bearer abc", "authorization: Basic abc"
    (re.compile(r"(?i)\b(bearer)(\s+)[A-Za-z0-9\-._~+/]+=*"), rf"\1\2{REDACTED}"),
    (re.compile(r"\b(Basic)(\s+)[A-Za-z0-9+/]{8,}=*"), rf"\1\2{REDACTED}"),
    # "authorization": "...", 'Authorization': b'...', authorization=... in reprs, JSON, key=value text, headers and
    # URL queries; a quoted value cut short (a truncated repr) is blanked to the end of the text
    (re.compile(rf"""(?i)(?<![\w-])({_NAME_ALTERNATIVES})(['"]?\s*[:=]\s*)"""
                r"""(?:b?'(?:[^'\\]|\\.)*'?|b?"(?:[^"\\]|\\.)*"?|[^\s,;}\]&]+)"""), rf"\1\2'{REDACTED}'"),
    # what is left of a SigV4/SigV2 Authorization value or a presigned URL: "Credential=AKIA.../...",
    # "Signature=abc", "Signature:\nabc" (botocore's debug lines)
    (re.compile(r"(?i)(?<![\w-])((?:x-amz-)?(?:credential|signature))(\s*[:=]\s*)[^\s,;&'\"]+"), rf"\1\2{REDACTED}"),
]
_MAX_DEPTH = 20


def _is_secret_key(key: object) -> bool:
    return isinstance(key, str) and key.lower() in _SECRET_KEYS


def _redact(value: object, depth: int = 0) -> object:
    if isinstance(value, str):
        for pattern, replacement in _SECRET_TEXT:
            value = pattern.sub(replacement, value)
        return value
    if depth >= _MAX_DEPTH:
        return value
    if isinstance(value, Mapping):
        return {k: REDACTED if _is_secret_key(k) else _redact(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact(v, depth + 1) for v in value]
    if isinstance(value, BaseException):
        return _redact(str(value), depth + 1)
    return value


def redact_secrets(_logger: object, _method: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """structlog processor: blank ``Authorization`` headers, bearer/basic credentials, tokens, passwords, the
    ``sedna.io/credential`` annotation and its keys, AWS keys, session tokens and SigV4/presigned-URL credentials and
    signatures, as keys at any depth and inside any text (messages, rendered tracebacks).
    Put it after the exception processor and before the renderer."""
    for key in list(event_dict):
        if key in ("_record", "_from_structlog", "exc_info"):
            continue
        value = event_dict[key]
        event_dict[key] = REDACTED if _is_secret_key(key) else _redact(value)
    return event_dict


# -- the process set-up ----------------------------------------------------------------------------------------------

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
LOG_FORMATS = ("json", "console")
QUIET_LOGGERS = ("urllib3", "kubernetes", "websockets")  # chatty third-party libraries: warning unless debugging
ANNOUNCE_LOGGER = "apis.listening"


def announce_listening(server: str, url: str, **fields: Any) -> None:
    """Log ``listening`` with ``server`` (what it serves: ``metrics``, ``probes``, ``edge``, ``worker-api``...) and
    ``url`` (where a client on this machine reaches it), at every log level of a program."""
    get_logger(ANNOUNCE_LOGGER).info("listening", server=server, url=url, **fields)


def configure_process_logging(level: str = "info", fmt: str = "", stream: TextIO | None = None, *,
                              component: str = "", fields: Mapping[str, Any] | None = None) -> None:
    """Configure structlog and the standard-library root logger for a whole program; call it once, from ``main``.

    ``fmt`` is ``json`` (one object per line), ``console`` (key=value) or ``""`` (console when ``stream`` is a TTY,
    else JSON); ``stream`` defaults to stderr; ``level`` is a name of ``LOG_LEVELS`` in any case (anything else:
    info). Every line, whoever logged it (structlog loggers, the library packages with their keys, other stdlib
    loggers, Python ``warnings``), has ``timestamp`` (ISO, UTC), ``level``, ``logger``, ``event``, the context
    variables, and ``fields`` unless the call sets them (e.g. sedna-lc's ``node``). ``level`` applies to every
    logger; ``QUIET_LOGGERS`` stay at warning unless it is debug. Tracebacks never show local variables, and
    ``redact_secrets`` runs last before rendering; ``announce_listening`` lines come out at every level. An uncaught
    exception in a thread is logged (by ``component``) instead of printed raw.
    """
    stream = sys.stderr if stream is None else stream
    numeric = getattr(logging, level.upper()) if level.lower() in LOG_LEVELS else logging.INFO
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
    if fields:
        shared.append(_DefaultFields(fields))
    # never the locals of a frame: request code holds headers with Authorization, clients hold tokens
    if fmt == "json":
        renderer: Any = structlog.processors.JSONRenderer()
        exceptions: Any = structlog.processors.ExceptionRenderer(ExceptionDictTransformer(show_locals=False))
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback)
        exceptions = structlog.processors.format_exc_info
    structlog.configure(
        processors=[structlog.stdlib.filter_by_level, *shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, exceptions, redact_secrets, renderer],
    ))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    # a child logger's records reach the root handler whatever the root's own level: its level is the only filter
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(numeric if numeric <= logging.DEBUG else max(numeric, logging.WARNING))
    logging.getLogger(ANNOUNCE_LOGGER).setLevel(min(numeric, logging.INFO))  # announcements at every level
    logging.captureWarnings(True)  # warnings.warn (e.g. urllib3's InsecureRequestWarning) → logger "py.warnings"
    threading.excepthook = _ThreadExceptionLogger(component or "main")


class _DefaultFields:
    """structlog processor: the program's fixed fields, unless the line sets them."""

    def __init__(self, fields: Mapping[str, Any]) -> None:
        self.fields = dict(fields)

    def __call__(self, _logger: object, _method: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        for key, value in self.fields.items():
            event_dict.setdefault(key, value)
        return event_dict


class _ThreadExceptionLogger:
    """``threading.excepthook``: an uncaught exception in a thread becomes a log line, not a raw traceback amid them."""

    def __init__(self, component: str) -> None:
        self.component = component

    def __call__(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        thread = args.thread.name if args.thread is not None else "?"
        structlog.get_logger(self.component).error(
            "uncaught exception in thread", thread=thread, exc_info=(args.exc_type, args.exc_value, args.exc_traceback))
