"""``AsyncEventRecorder``: Events written by sender threads of their own (client-go's ``EventBroadcaster`` and its
sink), so that a sync does not wait on an Event's write.

* Events are written by ``senders`` threads (4) through the ``EventRecorder`` given: its aggregation of repeats and
  its logging of failed writes apply. An Event is stamped, and its object's reference taken, when it is recorded (as
  client-go makes the Event before queueing it), so concurrent writes never reorder what ``kubectl describe`` shows.
* At most ``max_queued`` Events wait (1,000, client-go's ``maxQueuedEvents``). Recording while that many wait waits
  for room for up to ``max_wait`` seconds (1): the caller is slowed down to the API server's pace instead of losing
  Events. Only past that bound (an API server that stopped answering) is the Event dropped, with a warning, as
  client-go drops it when its channel is full; memory stays bounded either way.
* ``close(timeout)`` takes no more Events and writes those waiting for at most ``timeout`` seconds.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from . import meta
from .logs import get_logger
from .record import NORMAL, WARNING, EventRecorder

__all__ = ["AsyncEventRecorder", "DEFAULT_MAX_QUEUED", "DEFAULT_MAX_WAIT", "DEFAULT_SENDERS"]

log = get_logger(__name__)

DEFAULT_MAX_QUEUED = 1000
DEFAULT_SENDERS = 4
DEFAULT_MAX_WAIT = 1.0
_REFERENCE = ("namespace", "name", "uid", "resourceVersion")  # what an Event names of its object

_Pending = tuple[Mapping[str, Any], str, str, str, datetime]


class AsyncEventRecorder:
    """Queues Events for ``recorder`` to write on ``senders`` threads (started here, daemons)."""

    def __init__(self, recorder: EventRecorder, max_queued: int = DEFAULT_MAX_QUEUED, senders: int = DEFAULT_SENDERS,
                 max_wait: float = DEFAULT_MAX_WAIT) -> None:
        if max_queued < 1 or senders < 1 or max_wait < 0:
            raise ValueError(f"need max_queued >= 1, senders >= 1 and max_wait >= 0; got {max_queued}, {senders}, "
                             f"{max_wait}")
        self.recorder = recorder
        self.max_queued = max_queued
        self.max_wait = max_wait
        self.dropped = 0  # Events dropped: no room within max_wait, or recorded after close()
        self._pending: deque[_Pending] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._writing = 0
        self._senders = [threading.Thread(target=self._send, name=f"event-sender-{recorder.component}-{i}", daemon=True)
                         for i in range(senders)]
        for sender in self._senders:
            sender.start()

    def event(self, obj: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        """Queue an Event about ``obj``; waits only while ``max_queued`` wait (at most ``max_wait`` seconds). A bad
        ``event_type``, a programming error, raises here."""
        if event_type not in (NORMAL, WARNING):
            raise ValueError(f"event type must be {NORMAL} or {WARNING}, got {event_type!r}")
        md = obj.get("metadata") or {}
        ref = {"apiVersion": obj.get("apiVersion", ""), "kind": obj.get("kind", ""),
               "metadata": {field: md[field] for field in _REFERENCE if field in md}}
        item = (ref, event_type, reason, message, self.recorder.now())
        with self._cond:
            if self._cond.wait_for(lambda: self._closed or len(self._pending) < self.max_queued, self.max_wait) \
                    and not self._closed:
                self._pending.append(item)
                self._cond.notify_all()
                return
            self.dropped += 1
            why = "the recorder is closed" if self._closed else \
                f"{self.max_queued} Events were still waiting to be written after {self.max_wait} s"
        log.warning("event dropped", object=f"{meta.namespace(obj)}/{meta.name(obj)}", reason=reason, why=why)

    def eventf(self, obj: Mapping[str, Any], event_type: str, reason: str, fmt: str, *args: object) -> None:
        self.event(obj, event_type, reason, fmt % args if args else fmt)

    @property
    def pending(self) -> int:
        """Events recorded and not written yet (those being written included)."""
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
        deadline = time.monotonic() + timeout
        for sender in self._senders:
            sender.join(max(0.0, deadline - time.monotonic()))
        with self._cond:
            left = len(self._pending)
            self._pending.clear()
        if left:
            log.warning("events not written at shutdown", count=left, timeout_seconds=timeout)
        return not left and not any(sender.is_alive() for sender in self._senders)

    def _send(self) -> None:
        item: _Pending | None = None
        while True:
            with self._cond:
                if item is not None:
                    self._writing -= 1
                    self._cond.notify_all()  # flush() waiters
                while not self._pending and not self._closed:
                    self._cond.wait()
                if not self._pending:
                    return  # closed, nothing left
                item = self._pending.popleft()
                self._writing += 1
                self._cond.notify_all()  # a recorder waiting for room
            self.recorder.event(*item)  # never raises for a failed write: it logs
