"""``AsyncEventRecorder``: Events written by a sender thread of their own (client-go's ``EventBroadcaster`` and its
sink), so that recording never waits on the API server.

* Events are written one at a time, in the order they were recorded, through the ``EventRecorder`` given: its
  aggregation of repeats and its logging of failed writes apply. An Event is stamped, and its object's reference
  taken, when it is recorded (as client-go makes the Event before queueing it), not when it is written.
* At most ``max_queued`` Events wait (1,000, client-go's ``maxQueuedEvents``). One recorded while that many wait is
  dropped with a warning, as client-go drops an Event when its channel is full: a slow API server never makes the
  caller wait or the queue grow without bound.
* ``close(timeout)`` takes no more Events and writes those waiting for at most ``timeout`` seconds.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from . import meta
from .logs import get_logger
from .record import NORMAL, WARNING, EventRecorder

__all__ = ["AsyncEventRecorder", "DEFAULT_MAX_QUEUED"]

log = get_logger(__name__)

DEFAULT_MAX_QUEUED = 1000
_REFERENCE = ("namespace", "name", "uid", "resourceVersion")  # what an Event names of its object

_Pending = tuple[Mapping[str, Any], str, str, str, datetime]


class AsyncEventRecorder:
    """Queues Events for ``recorder`` to write on one sender thread (started here, a daemon)."""

    def __init__(self, recorder: EventRecorder, max_queued: int = DEFAULT_MAX_QUEUED) -> None:
        if max_queued < 1:
            raise ValueError(f"max_queued must be at least 1, got {max_queued}")
        self.recorder = recorder
        self.max_queued = max_queued
        self.dropped = 0  # Events dropped because max_queued were waiting, or recorded after close()
        self._pending: deque[_Pending] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._writing = False
        self._sender = threading.Thread(target=self._send, name=f"event-sender-{recorder.component}", daemon=True)
        self._sender.start()

    def event(self, obj: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        """Queue an Event about ``obj``; returns at once (a bad ``event_type``, a programming error, raises here)."""
        if event_type not in (NORMAL, WARNING):
            raise ValueError(f"event type must be {NORMAL} or {WARNING}, got {event_type!r}")
        md = obj.get("metadata") or {}
        ref = {"apiVersion": obj.get("apiVersion", ""), "kind": obj.get("kind", ""),
               "metadata": {field: md[field] for field in _REFERENCE if field in md}}
        item = (ref, event_type, reason, message, self.recorder.now())
        with self._cond:
            if not self._closed and len(self._pending) < self.max_queued:
                self._pending.append(item)
                self._cond.notify()
                return
            self.dropped += 1
            why = "the recorder is closed" if self._closed else f"{self.max_queued} Events are waiting to be written"
        log.warning("event dropped", object=f"{meta.namespace(obj)}/{meta.name(obj)}", reason=reason, why=why)

    def eventf(self, obj: Mapping[str, Any], event_type: str, reason: str, fmt: str, *args: object) -> None:
        self.event(obj, event_type, reason, fmt % args if args else fmt)

    @property
    def pending(self) -> int:
        """Events recorded and not written yet (the one being written included)."""
        with self._cond:
            return len(self._pending) + self._writing

    def flush(self, timeout: float) -> bool:
        """Wait until every Event recorded so far is written; False when ``timeout`` seconds passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._writing, timeout)

    def close(self, timeout: float = 5.0) -> bool:
        """Take no more Events; write those waiting for at most ``timeout`` seconds. False when some were left."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._sender.join(timeout)
        with self._cond:
            left = len(self._pending)
            self._pending.clear()
        if left:
            log.warning("events not written at shutdown", count=left, timeout_seconds=timeout)
        return not left and not self._sender.is_alive()

    def _send(self) -> None:
        while True:
            with self._cond:
                self._writing = False
                self._cond.notify_all()  # flush() waiters
                while not self._pending and not self._closed:
                    self._cond.wait()
                if not self._pending:
                    return  # closed, nothing left
                item = self._pending.popleft()
                self._writing = True
            self.recorder.event(*item)  # never raises for a failed write: it logs
