"""``EventRecorder``: writes core/v1 Events about objects (client-go ``tools/record``); needs only a clientset.

Repeats of the same (object, type, reason, message) are aggregated: the first occurrence creates an Event ``<object>.<hex nanoseconds>``; each repeat patches that Event's ``count`` and
``lastTimestamp`` instead of creating a new one (client-go's events cache). The cache of recent events is bounded
(LRU, ``cache_size``) and forgets an event ``cache_ttl`` seconds after it was first recorded (10 minutes, client-go's
aggregation interval), so a process recording events with new messages all the time (a learning job's rounds) keeps
only the last minutes' worth instead of growing to the bound over hours; an evicted, expired or externally deleted
Event simply starts a new one. Recording never raises (API, connection and
unexpected errors are logged; only a bad ``event_type``, a programming error, raises ``ValueError``). The lock guards
only the cache: no HTTP call is made while holding it, so one slow write never delays events about other objects
(two concurrent repeats of one event may then patch their counts out of order, as in client-go).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from cachetools import TTLCache

from . import errors, meta
from .client import ClientsetBase
from .http_transport import ApiConnectionError, ResponseDecodeError
from .logs import get_logger

__all__ = ["EventRecorder", "NORMAL", "WARNING"]

log = get_logger(__name__)

NORMAL = "Normal"
WARNING = "Warning"

DEFAULT_CACHE_SIZE = 4096
DEFAULT_CACHE_TTL = 600.0  # seconds: client-go's event aggregation interval

RECORD_ERRORS = (errors.ApiError, ApiConnectionError, ResponseDecodeError)


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
        cache_ttl: float = DEFAULT_CACHE_TTL,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clientset = clientset
        self.component = component
        self.host = host if host is not None else socket.gethostname()
        self._now = now or (lambda: datetime.now(timezone.utc))
        self._lock = threading.Lock()
        self._seen: TTLCache[tuple[str, ...], _Seen] = TTLCache(maxsize=cache_size, ttl=cache_ttl, timer=timer)

    def event(self, obj: Mapping[str, Any], event_type: str, reason: str, message: str) -> dict[str, Any] | None:
        """Record an event; returns the Event as written, or ``None`` when it could not be written."""
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
        where = f"{namespace}/{involved['name']}"
        now = meta.format_time(self._now())
        try:
            events = self._clientset.core_v1().events(namespace)
            with self._lock:  # decide under the lock, write without it
                seen = self._seen.get(key)
                count = 0
                if seen is not None:
                    seen.count += 1
                    count = seen.count
            if seen is not None:
                try:
                    return events.patch(seen.name, {"count": count, "lastTimestamp": now}, patch_type="merge")
                except errors.NotFoundError:  # deleted by someone (or expired): start a new Event
                    with self._lock:
                        if self._seen.get(key) is seen:
                            self._seen.pop(key, None)
            body: dict[str, Any] = {
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
            created = events.create(body)
            with self._lock:
                self._seen.setdefault(key, _Seen(meta.name(created) or body["metadata"]["name"], namespace, 1, now))
            return created
        except RECORD_ERRORS as exc:
            log.warning("event not recorded", object=where, reason=reason, error=str(exc))
        except Exception as exc:  # recording is best effort: a bug here must never break a sync
            log.exception("event not recorded: unexpected error", object=where, reason=reason, error=str(exc))
        return None

    def eventf(self, obj: Mapping[str, Any], event_type: str, reason: str, fmt: str, *args: object) -> dict[str, Any] | None:
        return self.event(obj, event_type, reason, fmt % args if args else fmt)
