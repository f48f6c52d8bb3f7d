"""An EventRecorder writing core/v1 Events, aggregating repeats of the same (object, type, reason, message).

The first occurrence creates an Event ``<object>.<hex nanoseconds>``; each repeat patches that Event's ``count`` and
``lastTimestamp`` instead of creating a new one (client-go's events cache). The cache of recent events is bounded
(LRU); an evicted or externally deleted Event simply starts a new one. Recording never raises: API errors are logged.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import structlog
from cachetools import LRUCache

from apis import errors, meta
from apis.client import ClientsetBase

__all__ = ["EventRecorder", "NORMAL", "WARNING"]

log = structlog.get_logger(__name__)

NORMAL = "Normal"
WARNING = "Warning"

DEFAULT_CACHE_SIZE = 4096


@dataclass
class _Seen:
    name: str
    namespace: str
    count: int
    first_timestamp: str


class EventRecorder:
    """Records Events about objects on behalf of ``component`` (``source.component``)."""

    def __init__(
        self,
        clientset: ClientsetBase,
        component: str,
        host: str | None = None,
        cache_size: int = DEFAULT_CACHE_SIZE,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self._clientset = clientset
        self.component = component
        self.host = host if host is not None else socket.gethostname()
        self._now = now or (lambda: datetime.now(timezone.utc))
        self._lock = threading.Lock()
        self._seen: LRUCache[tuple[str, ...], _Seen] = LRUCache(maxsize=cache_size)

    def event(self, obj: Mapping[str, Any], event_type: str, reason: str, message: str) -> dict[str, Any] | None:
        """Record an event; returns the Event as written, or ``None`` when the API refused it."""
        if event_type not in (NORMAL, WARNING):
            raise ValueError(f"event type must be {NORMAL} or {WARNING}, got {event_type!r}")
        namespace = meta.namespace(obj) or "default"
        involved = {
            "apiVersion": obj.get("apiVersion", ""),
            "kind": obj.get("kind", ""),
            "namespace": meta.namespace(obj),
            "name": meta.name(obj),
            "uid": meta.uid(obj),
            "resourceVersion": meta.resource_version(obj),
        }
        key = (involved["kind"], involved["namespace"], involved["name"], involved["uid"], event_type, reason, message)
        now = meta.format_time(self._now())
        events = self._clientset.core_v1().events(namespace)
        with self._lock:  # one writer at a time keeps counts exact
            seen = self._seen.get(key)
            if seen is not None:
                try:
                    patched = events.patch(
                        seen.name, {"count": seen.count + 1, "lastTimestamp": now}, patch_type="merge"
                    )
                    seen.count += 1
                    return patched
                except errors.NotFoundError:
                    self._seen.pop(key, None)
                except errors.ApiError as exc:
                    log.warning("event patch failed", object=f"{namespace}/{involved['name']}", reason=reason, error=str(exc))
                    return None
            body = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": f"{involved['name']}.{time.time_ns():x}", "namespace": namespace},
                "involvedObject": involved,
                "reason": reason,
                "message": message,
                "type": event_type,
                "source": {"component": self.component, "host": self.host},
                "reportingComponent": self.component,
                "reportingInstance": self.host,
                "count": 1,
                "firstTimestamp": now,
                "lastTimestamp": now,
            }
            try:
                created = events.create(body)
            except errors.ApiError as exc:
                log.warning("event create failed", object=f"{namespace}/{involved['name']}", reason=reason, error=str(exc))
                return None
            self._seen[key] = _Seen(meta.name(created) or body["metadata"]["name"], namespace, 1, now)
            return created

    def eventf(self, obj: Mapping[str, Any], event_type: str, reason: str, fmt: str, *args: Any) -> dict[str, Any] | None:
        return self.event(obj, event_type, reason, fmt % args if args else fmt)
