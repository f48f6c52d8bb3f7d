"""Status writes through the status subresource with retry on conflict, conditions and metrics helpers.

``update_status(client, obj, mutate)`` applies ``mutate`` to a private copy of the object and writes it with
``update_status``; on 409 it re-reads the object and applies ``mutate`` again. ``mutate`` changes only the fields it
owns, so fields written by others meanwhile (conditions appended by an upstream report...) are kept.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import structlog

from apis import errors, meta
from apis.client import ResourceClient

__all__ = [
    "DEFAULT_STATUS_RETRIES",
    "MAX_APPENDED_CONDITIONS",
    "append_condition",
    "condition_is_true",
    "convert_map_to_metrics",
    "get_condition",
    "go_json",
    "last_condition",
    "set_condition",
    "update_status",
]

log = structlog.get_logger(__name__)

DEFAULT_STATUS_RETRIES = 5
MAX_APPENDED_CONDITIONS = 16  # conditions append_condition keeps (the newest)

Mutation = Callable[[dict[str, Any]], bool]


def update_status(
    client: ResourceClient,
    obj: Mapping[str, Any],
    mutate: Mutation,
    retries: int = DEFAULT_STATUS_RETRIES,
) -> dict[str, Any] | None:
    """Apply ``mutate(obj_copy) -> changed`` and write the status; re-read and retry on conflict.

    ``obj`` (e.g. from a lister) is never modified. Returns the written object, or ``None`` when ``mutate`` reported
    no change. Raises the last ``ConflictError`` after ``retries`` attempts, and any other API error at once;
    ``NotFoundError`` (object gone) returns ``None``.
    """
    current: dict[str, Any] = meta.deep_copy(obj)
    key = f"{meta.namespace(obj)}/{meta.name(obj)}"
    for attempt in range(1, retries + 1):
        if not mutate(current):
            return None
        try:
            return client.update_status(current)
        except errors.NotFoundError:
            return None
        except errors.ConflictError:
            if attempt == retries:
                raise
            log.debug("status update conflict, retrying", object=key, attempt=attempt)
            try:
                current = client.get(meta.name(obj))
            except errors.NotFoundError:
                return None
    return None


# A condition as the caller holds it: a dict the caller may change, or a read-only mapping.
ConditionT = TypeVar("ConditionT", bound=Mapping[str, Any])


def get_condition(conditions: Sequence[ConditionT] | None, ctype: str) -> ConditionT | None:
    for cond in conditions or []:
        if cond.get("type") == ctype:
            return cond
    return None


def condition_is_true(conditions: Sequence[Mapping[str, Any]] | None, ctype: str) -> bool:
    cond = get_condition(conditions, ctype)
    return cond is not None and cond.get("status") == "True"


def set_condition(
    conditions: list[dict[str, Any]],
    ctype: str,
    status: str,
    reason: str,
    message: str,
    now: str,
) -> bool:
    """Set condition ``ctype`` in place; ``lastTransitionTime`` changes only when ``status`` does.

    Returns True when anything changed. ``status`` is "True", "False" or "Unknown".
    """
    for cond in conditions:
        if cond.get("type") != ctype:
            continue
        changed = False
        if cond.get("status") != status:
            cond["status"] = status
            cond["lastTransitionTime"] = now
            changed = True
        for k, v in (("reason", reason), ("message", message)):
            if cond.get(k) != v:
                cond[k] = v
                changed = True
        return changed
    conditions.append(
        {
            "type": ctype,
            "status": status,
            "reason": reason,
            "message": message,
            "lastTransitionTime": now,
        }
    )
    return True


def last_condition(conditions: Sequence[ConditionT] | None) -> ConditionT | None:
    """The latest of conditions that are appended, never replaced (Sedna's service and job kinds)."""
    return conditions[-1] if conditions else None


def append_condition(conditions: list[dict[str, Any]], condition: dict[str, Any]) -> bool:
    """Append ``condition`` unless the latest condition already says the same (type, status, reason, message).

    Sedna appends a condition whenever the state changes and the last one is the current state; comparing more than
    the type keeps a changed failure reason visible without appending on every sync. Only the latest
    ``MAX_APPENDED_CONDITIONS`` stay (Go keeps them all: a service whose state flaps for a year would outgrow what
    etcd stores; every failure was an Event when it happened). Returns True when appended."""
    last = last_condition(conditions)
    if last is not None and all(last.get(k) == condition.get(k) for k in ("type", "status", "reason", "message")):
        return False
    conditions.append(condition)
    del conditions[:-MAX_APPENDED_CONDITIONS]
    return True


def _go_value(value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return int(value)  # encoding/json writes a float64 without a fraction as an integer
    if isinstance(value, dict):
        return {k: _go_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_value(v) for v in value]
    return value


def go_json(value: Any, sort_keys: bool = True) -> str:
    """JSON as Go's ``json.Marshal`` writes decoded JSON values: map keys sorted, no spaces, integral floats as
    integers, ``<``, ``>`` and ``&`` escaped. ``sort_keys=False`` keeps the dicts' order (a Go struct's fields)."""
    text = json.dumps(_go_value(value), sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def convert_map_to_metrics(metrics: Mapping[str, Any]) -> list[dict[str, str]]:
    """Sedna's ``ConvertMapToMetrics``: ``[{key, value}]``, strings as they are, anything else as JSON (sorted by
    key here; Go's order is random)."""
    return [
        {"key": key, "value": value if isinstance(value, str) else go_json(value)}
        for key, value in sorted(metrics.items())
    ]
