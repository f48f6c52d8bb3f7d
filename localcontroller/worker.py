"""What a worker reports to its LC: ``POST /sedna/workers/{worker-name}/info`` (Sedna SDK ``LCClient.send``).

``parse_worker_message(body, worker_name)`` accepts exactly what the SDK sends (``name``, ``namespace``,
``ownerName``, ``ownerKind``, ``kind``, ``status``, ``results``, ``ownerInfo``) and raises ``ValueError`` with the
reason for anything else, which the server answers with HTTP 400. An empty ``ownerName`` parses (the server drops
such a report with a log line, as Go's LC does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = ["WorkerMessage", "parse_worker_message"]


@dataclass(frozen=True)
class WorkerMessage:
    name: str
    namespace: str
    owner_name: str
    owner_kind: str  # lower-cased
    kind: str = ""  # the worker's phase: train, eval, deploy, inference
    status: str = ""  # ready, running, completed, failed
    results: list[dict[str, Any]] = field(default_factory=list)
    owner_info: dict[str, Any] = field(default_factory=dict)


def _string(body: dict[str, Any], key: str, required: bool = False) -> str:
    value = body.get(key)
    if value is None or value == "":
        if required:
            raise ValueError(f"{key} is required")
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string, got {type(value).__name__}")
    return value


def parse_worker_message(body: bytes, worker_name: str) -> WorkerMessage:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"read worker(name={worker_name}) message body failed: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"the message body must be a JSON object, got {type(data).__name__}")
    name = _string(data, "name")
    if name != worker_name:
        raise ValueError(f"worker name(name={worker_name}) in the api is different from that(name={name}) "
                         "in the message body")
    results = data.get("results")
    if results is None:
        results = []
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        raise ValueError("results must be a list of objects")
    owner_info = data.get("ownerInfo")
    if owner_info is None:
        owner_info = {}
    if not isinstance(owner_info, dict):
        raise ValueError("ownerInfo must be an object")
    return WorkerMessage(
        name=name,
        namespace=_string(data, "namespace"),
        owner_name=_string(data, "ownerName"),  # empty: answered 200 and dropped (Go)
        owner_kind=_string(data, "ownerKind", required=True).lower(),
        kind=_string(data, "kind"),
        status=_string(data, "status"),
        results=results,
        owner_info=owner_info,
    )
