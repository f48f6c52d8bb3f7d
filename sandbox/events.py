"""Events the simulated controllers record, shaped as client-go's event recorder writes them (core/v1 Event named
``<object>.<hex nanoseconds>``, ``source.component`` the controller). A failed write is dropped, as the
recorder drops it: an event never fails the work it reports on."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.errors import ApiError
from apis.resources import EVENTS

from .tracker_api import TrackerAPI

__all__ = ["record_event"]


def record_event(
    tracker: TrackerAPI,
    obj: Mapping[str, Any],
    event_type: str,
    reason: str,
    message: str,
    component: str,
    host: str = "",
    field_path: str = "",
) -> None:
    """Record one Event about ``obj`` (which carries its apiVersion and kind); ``host`` is the reporting kubelet's
    node, ``field_path`` the part of the object it is about (``spec.containers{main}``)."""
    now = meta.now_rfc3339()
    md = obj.get("metadata") or {}
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{meta.name(obj)}.{time.time_ns():x}", "namespace": meta.namespace(obj)},
        "involvedObject": {
            "apiVersion": obj.get("apiVersion", ""),
            "kind": obj.get("kind", ""),
            "name": meta.name(obj),
            "namespace": meta.namespace(obj),
            "uid": md.get("uid", ""),
            "resourceVersion": md.get("resourceVersion", ""),
            **({"fieldPath": field_path} if field_path else {}),
        },
        "reason": reason,
        "message": message,
        "type": event_type,
        "source": {"component": component, **({"host": host} if host else {})},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "reportingComponent": component,
        "reportingInstance": host,
    }
    try:
        tracker.create(EVENTS, event, meta.namespace(obj), copy=False, trusted=True)  # built here; answer not read
    except ApiError:
        pass
