"""A simulated worker's own lines, where ``kubectl logs <pod>`` finds them: ``DIR/<namespace>/<pod name>.log``, plain
text, one line per entry, appended (the layout the sandbox API server's ``--pod-logs-dir`` serves).

``PodLogger`` wraps a worker's structlog logger: every call goes to the simulator's log as before and, as one line
``<UTC time> <level> <event> key=value ...``, to the pod's file. A pod's file stops growing at ``MAX_POD_LOG_BYTES``
(a last line says so); a file that cannot be written is reported once in the simulator's log and then skipped.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol

__all__ = ["MAX_POD_LOG_BYTES", "PodLog", "PodLogger"]

MAX_POD_LOG_BYTES = 10 * 1024 * 1024
_MAX_LINE = 16 * 1024


class PodLog:
    """The log file of one pod; thread-safe. ``directory`` None: lines are dropped."""

    def __init__(self, directory: str | os.PathLike[str] | None, namespace: str, name: str, warn: Callable[..., object]) -> None:
        self.path = Path(directory) / namespace / f"{name}.log" if directory is not None else None
        self._warn = warn
        self._lock = threading.Lock()
        self._size = -1
        self._broken = False

    def append(self, text: str) -> None:
        if self.path is None:
            return
        lines = [line[:_MAX_LINE] for line in text.splitlines() or [""]]
        data = "".join(f"{line}\n" for line in lines).encode(errors="replace")
        with self._lock:
            if self._broken:
                return
            try:
                if self._size < 0:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    self._size = self.path.stat().st_size if self.path.exists() else 0
                if self._size >= MAX_POD_LOG_BYTES:
                    return
                if self._size + len(data) > MAX_POD_LOG_BYTES:
                    data = f"{_stamp()} warning pod log reached {MAX_POD_LOG_BYTES} bytes; later lines are " \
                           "dropped\n".encode()
                    self._size = MAX_POD_LOG_BYTES
                else:
                    self._size += len(data)
                with open(self.path, "ab") as out:
                    out.write(data)
            except OSError as exc:
                self._broken = True
                self._warn("cannot write the pod's log; its lines are dropped", path=str(self.path), error=str(exc))


class StructLogger(Protocol):
    """The structlog logger methods a ``PodLogger`` wraps."""

    def bind(self, **fields: object) -> StructLogger: ...

    def debug(self, event: str, **fields: object) -> object: ...

    def info(self, event: str, **fields: object) -> object: ...

    def warning(self, event: str, **fields: object) -> object: ...

    def error(self, event: str, **fields: object) -> object: ...

    def exception(self, event: str, **fields: object) -> object: ...


class PodLogger:
    """A structlog-style logger that also appends each entry to the pod's ``PodLog``."""

    def __init__(self, inner: StructLogger, pod_log: PodLog) -> None:
        self._inner = inner
        self.pod_log = pod_log

    def bind(self, **fields: object) -> PodLogger:
        return PodLogger(self._inner.bind(**fields), self.pod_log)

    def _entry(self, level: str, event: str, fields: dict[str, object]) -> None:
        shown = " ".join(f"{k}={v}" for k, v in fields.items() if k not in ("pod", "kind", "worker_type", "node"))
        self.pod_log.append(f"{_stamp()} {level} {event}" + (f" {shown}" if shown else ""))

    def debug(self, event: str, **fields: object) -> None:
        self._inner.debug(event, **fields)

    def info(self, event: str, **fields: object) -> None:
        self._inner.info(event, **fields)
        self._entry("info", event, fields)

    def warning(self, event: str, **fields: object) -> None:
        self._inner.warning(event, **fields)
        self._entry("warning", event, fields)

    def error(self, event: str, **fields: object) -> None:
        self._inner.error(event, **fields)
        self._entry("error", event, fields)

    def exception(self, event: str, **fields: object) -> None:
        self._inner.exception(event, **fields)
        self._entry("error", event, fields)


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
