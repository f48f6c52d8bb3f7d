"""``pods/log`` from a directory: the sandbox runs no containers, so a pod's log is the file
``<pod_logs_dir>/<namespace>/<pod>.log`` that whoever plays the pod's process (the worker simulator) appends to,
plain text, one line per entry.

Served as kube-apiserver serves a container log: ``text/plain``; ``tailLines`` (the last N lines), ``limitBytes``
(at most N bytes from the start of what is selected), ``follow`` (then appended lines as they come, until the pod
ends or is deleted, the client goes away or the server stops); ``container`` must name one of the pod's containers
(and is required when it has several). A pod whose containers have not started answers 400 ``container "c" in pod
"p" is waiting to start: ContainerCreating``; a pod without a log file has an empty log. At most
``MAX_LOG_BYTES`` are read per request (the end of a longer file).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apis import meta
from apis.errors import BadRequestError, new_invalid

from .options import query_value

__all__ = ["LogRequest", "MAX_LOG_BYTES", "NO_LOGS", "log_file", "log_request", "read_log", "follow_log"]

MAX_LOG_BYTES = 8 * 1024 * 1024
FOLLOW_POLL_SECONDS = 0.2
NO_LOGS = (
    "the sandbox API server has no container logs: pod {name} runs in the sandbox's pod simulator, where no "
    "container process runs (start the sandbox with --pod-logs-dir to serve the logs simulated workers write)"
)
_TERMINAL = ("Succeeded", "Failed")


@dataclass(frozen=True)
class LogRequest:
    tail_lines: int | None
    limit_bytes: int | None
    follow: bool


def _int_param(query: Mapping[str, list[str]], name: str) -> int | None:
    raw = query_value(dict(query), name)
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise BadRequestError(f'{name}: Invalid value: "{raw}": must be an integer') from None


def log_request(pod: Mapping[str, Any], query: Mapping[str, list[str]]) -> LogRequest:
    """Parse and check the query of a log request for ``pod`` (422 for bad values, 400 for a bad container)."""
    tail, limit = _int_param(query, "tailLines"), _int_param(query, "limitBytes")
    causes = []
    if tail is not None and tail < 0:
        causes.append({"field": "tailLines", "reason": "FieldValueInvalid",
                       "message": f"Invalid value: {tail}: must be greater than or equal to 0"})
    if limit is not None and limit < 1:
        causes.append({"field": "limitBytes", "reason": "FieldValueInvalid",
                       "message": f"Invalid value: {limit}: must be greater than 0"})
    if causes:
        raise new_invalid("PodLogOptions", meta.name(pod), causes)
    containers = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    container = query_value(dict(query), "container") or ""
    name = meta.name(pod)
    if not container and len(containers) > 1:
        raise BadRequestError(f"a container name must be specified for pod {name}, choose one of: "
                              f"[{' '.join(containers)}]")
    container = container or (containers[0] if containers else "")
    if container not in containers:
        raise BadRequestError(f"container {container} is not valid for pod {name}")
    waiting = _waiting_reason(pod, container)
    if waiting is not None:
        raise BadRequestError(f'container "{container}" in pod "{name}" is waiting to start: {waiting}')
    follow = (query_value(dict(query), "follow") or "").lower() in ("true", "1")
    return LogRequest(tail, limit, follow)


def _waiting_reason(pod: Mapping[str, Any], container: str) -> str | None:
    status = pod.get("status") or {}
    for cs in status.get("containerStatuses") or []:
        if cs.get("name") == container:
            waiting = (cs.get("state") or {}).get("waiting")
            has_run = (cs.get("lastState") or {}).get("terminated") is not None
            return (waiting.get("reason") or "ContainerCreating") if waiting is not None and not has_run else None
    return "ContainerCreating" if status.get("phase", "Pending") == "Pending" else None


def log_file(directory: Path, namespace: str, name: str) -> Path:
    """``<directory>/<namespace>/<name>.log`` (namespace and pod names are DNS names: no separators)."""
    if "/" in namespace or "/" in name or namespace.startswith(".") or name.startswith("."):
        raise BadRequestError(f"invalid pod {namespace}/{name}")
    return directory / namespace / f"{name}.log"


def read_log(path: Path, request: LogRequest) -> tuple[bytes, int]:
    """What a log request selects from ``path`` and the file offset it read to (an absent file is empty)."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, 2)
            start = max(0, size - MAX_LOG_BYTES)
            f.seek(start)
            data = f.read(size - start)
    except FileNotFoundError:
        return b"", 0
    if start and b"\n" in data:  # begin at a whole line
        data = data[data.index(b"\n") + 1:]
    if request.tail_lines is not None:
        lines = data.splitlines(keepends=True)
        data = b"".join(lines[-request.tail_lines:]) if request.tail_lines else b""
    if request.limit_bytes is not None:
        data = data[: request.limit_bytes]
    return data, size


def follow_log(
    path: Path,
    offset: int,
    write: Callable[[bytes], None],
    pod_running: Callable[[], bool],
    stopped: Callable[[], bool],
    client_gone: Callable[[], bool],
    budget: int | None,
) -> None:
    """Write what is appended to ``path`` after ``offset`` while the pod runs (then once more, for its last lines),
    the client is there and the server runs; at most ``budget`` bytes when given."""
    while budget is None or budget > 0:
        running = pod_running()
        try:
            with path.open("rb") as f:
                size = f.seek(0, 2)
                if size < offset:  # truncated or replaced: start over
                    offset = 0
                f.seek(offset)
                data = f.read(min(size - offset, MAX_LOG_BYTES))
        except FileNotFoundError:
            data = b""
        if data:
            if budget is not None:
                data = data[:budget]
                budget -= len(data)
            offset += len(data)
            write(data)
        if not running or stopped() or client_gone():
            return
        time.sleep(FOLLOW_POLL_SECONDS)


def pod_is_running(pod: Mapping[str, Any] | None) -> bool:
    return pod is not None and not meta.deletion_timestamp(pod) and (
        (pod.get("status") or {}).get("phase") not in _TERMINAL)
