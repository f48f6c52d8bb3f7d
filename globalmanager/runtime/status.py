"""Status writes through the status subresource with retry on conflict, and a conditions helper.

``update_status(client, obj, mutate)`` applies ``mutate`` to a private copy of the object and writes it with
``update_status``; on 409 it re-reads the object and applies ``mutate`` again. ``mutate`` changes only the fields it
owns, so fields written by others meanwhile (conditions appended by an upstream report...) are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import structlog

from apis import errors, meta
from apis.client import ResourceClient

__all__ = ["DEFAULT_STATUS_RETRIES", "update_status", "set_condition", "get_condition", "condition_is_true"]

log = structlog.get_logger(__name__)

DEFAULT_STATUS_RETRIES = 5

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


def get_condition(conditions: list[Mapping[str, Any]] | None, ctype: str) -> Mapping[str, Any] | None:
    for cond in conditions or []:
        if cond.get("type") == ctype:
            return cond
    return None


def condition_is_true(conditions: list[Mapping[str, Any]] | None, ctype: str) -> bool:
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
