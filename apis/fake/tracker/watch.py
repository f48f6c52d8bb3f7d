"""One watch stream of the object tracker: per-watcher filtering, a bounded buffer, bookmarks.

A writer hands every committed event to each watcher with ``TrackerWatch.offer``, which never blocks: the event
is filtered (namespace, label and field selectors, with the ADDED/DELETED transitions the real API server makes
when an object starts or stops matching) and queued. A watcher with ``buffer`` undelivered events is closed, as
the API server closes a slow watcher; its reader still gets what was buffered, then the stream ends.
The object of each delivered event is copied in the reader's thread, so the store's objects are never shared, unless
the reader asks for the stored objects to serialize them (``next_events(copy=False)``); a reader takes every queued
event at once.
A watch from a resourceVersion the tracker has not reached yet delivers nothing up to that version, and ends with
one "Too large resource version" ERROR event when the version does not appear in time.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ... import meta
from ...errors import CAUSE_RESOURCE_VERSION_TOO_LARGE, RequestTimeoutError
from ...logs import get_logger
from ...resources import GroupVersionResource, ResourceInfo
from ...watch import ADDED, BOOKMARK, DELETED, ERROR, INITIAL_EVENTS_END_ANNOTATION, MODIFIED, WatchEvent
from .filter import ObjectFilter

__all__ = ["GATHER_SECONDS", "HistoryEvent", "TrackerWatch", "too_large_resource_version"]

GATHER_SECONDS = 0.005  # how long a busy reader lets events gather (``TrackerWatch.next_events``)

log = get_logger(__name__)

def too_large_resource_version(requested: int, current: int) -> RequestTimeoutError:
    """The error kube-apiserver's watch cache answers when it has not reached ``requested`` in time (504)."""
    return RequestTimeoutError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {requested}, current: {current}",
        details={
            "causes": [{"type": CAUSE_RESOURCE_VERSION_TOO_LARGE, "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        },
    )


@dataclass(frozen=True)
class HistoryEvent:
    """One committed change: ``obj`` is the stored object after it (for DELETED: its final state), ``prev`` before."""

    rv: int
    gvr: GroupVersionResource
    type: str
    obj: dict[str, Any]
    prev: dict[str, Any] | None


def _delivered(obj: dict[str, Any], rv: int | None, copy: bool) -> dict[str, Any]:
    """The object of a delivered event: a copy (or the stored object), stamped with ``rv`` when given."""
    if copy:
        out = meta.deep_copy(obj)
        if rv is not None:
            out.setdefault("metadata", {})["resourceVersion"] = str(rv)
        return out
    if rv is None:
        return obj
    return {**obj, "metadata": {**(obj.get("metadata") or {}), "resourceVersion": str(rv)}}


class TrackerWatch:
    """One watch stream (implements ``apis.watch.Watch``); created by ``ObjectTracker.watch``."""

    def __init__(
        self,
        info: ResourceInfo,
        object_filter: ObjectFilter,
        buffer: int,
        bookmark_interval: float | None,
        timeout_seconds: float | None = None,
    ) -> None:
        self.info = info
        self._filter = object_filter
        self._buffer = max(1, buffer)
        self._bookmark_interval = bookmark_interval
        self._cond = threading.Condition(threading.Lock())
        # (type, object, resourceVersion to stamp on the copy or None)
        self._queue: deque[tuple[str, dict[str, Any], int | None]] = deque()
        self._progress_rv = 0  # every event up to this RV has been considered for this watcher
        # the watch cache's newest RV once registered: every event up to it was offered (``progress_rv``)
        self._cache_rv: Callable[[], int] | None = None
        self._stopped = False
        self._closed = False  # no more events will be queued; the reader drains then ends
        self._last_activity = time.monotonic()
        self._last_taken = 0.0  # when next_events last took events
        # a timeout longer than a condition wait can take (~292 years) is no timeout
        bounded = timeout_seconds and timeout_seconds < threading.TIMEOUT_MAX
        self._deadline = time.monotonic() + timeout_seconds if timeout_seconds and bounded else None
        self._awaited_rv: int | None = None  # a future RV asked for: nothing is delivered up to it
        self._awaited_deadline = 0.0

    # -- writer side (called with the tracker lock held; never blocks on the reader) ---------------------------------
    def offer(self, event: HistoryEvent) -> bool:
        """Queue ``event`` if it concerns this watcher; False when the watcher is finished (drop it)."""
        converted = self._convert(event) if event.gvr == self.info.gvr else None
        with self._cond:
            if self._stopped or self._closed:
                return False
            self._progress_rv = event.rv
            if self._awaited_rv is not None:
                if event.rv <= self._awaited_rv:
                    if event.rv == self._awaited_rv:
                        self._awaited_rv = None  # caught up: deliver what comes after
                    return True
                self._awaited_rv = None
            if converted is None:
                return True
            if len(self._queue) >= self._buffer:
                self._closed = True
                self._cond.notify_all()
                log.warning(
                    "closing slow watcher",
                    resource=str(self.info.gvr),
                    namespace=self._filter.namespace,
                    buffered=len(self._queue),
                    key=f"{meta.namespace(event.obj)}/{meta.name(event.obj)}",
                )
                return False
            self._queue.append(converted)
            self._cond.notify_all()
            return True

    def _convert(self, event: HistoryEvent) -> tuple[str, dict[str, Any], int | None] | None:
        if event.type == DELETED:
            return (DELETED, event.obj, None) if self._filter.matches(event.obj) else None
        now_matches = self._filter.matches(event.obj)
        prev = event.prev
        was_matching = prev is not None and self._filter.matches(prev)
        if event.type == ADDED:
            return (ADDED, event.obj, None) if now_matches else None
        if now_matches:
            return (MODIFIED if was_matching else ADDED, event.obj, None)
        if prev is not None and was_matching:  # stopped matching: the previous content, at the event's resourceVersion
            return (DELETED, prev, event.rv)
        return None

    def queue_initial(self, objects: list[dict[str, Any]], rv: int, end_bookmark: bool) -> None:
        """Synthetic ADDED for each current object (and the initial-events-end bookmark when asked)."""
        with self._cond:
            for obj in objects:
                self._queue.append((ADDED, obj, None))
            if end_bookmark:
                self._queue.append((BOOKMARK, self._bookmark_object(rv, initial_end=True), None))
            self._progress_rv = rv
            self._cond.notify_all()

    def await_resource_version(self, rv: int, current: int, wait: float) -> None:
        """Deliver only events after ``rv`` (newer than ``current``, the tracker's RV); when ``rv`` has not been
        reached ``wait`` seconds from now, deliver one "Too large resource version" ERROR event and end."""
        with self._cond:
            self._awaited_rv = rv
            self._awaited_deadline = time.monotonic() + max(0.0, wait)
            self._progress_rv = current
            self._cond.notify_all()

    def set_progress(self, rv: int) -> None:
        with self._cond:
            self._progress_rv = max(self._progress_rv, rv)

    def attach(self, cache_rv: Callable[[], int]) -> None:
        """Registered with the watch cache, which offers this watcher every event of its resource and tells its
        newest resourceVersion through ``cache_rv``: the events of other resources are never offered one by one."""
        self._cache_rv = cache_rv

    @property
    def awaiting(self) -> bool:
        """Waiting for a future resourceVersion: must be offered every event (of any resource) until it is reached."""
        return self._awaited_rv is not None

    def _progress(self) -> int:
        """The newest RV up to which every event has been considered (the cond held, the queue empty)."""
        cache_rv = self._cache_rv() if self._cache_rv is not None and not self.awaiting else 0
        return max(self._progress_rv, cache_rv)

    def fail(self, status: dict[str, Any]) -> None:
        """Deliver one ERROR event (a Status object) and end the stream."""
        with self._cond:
            self._queue.append((ERROR, status, None))
            self._closed = True
            self._cond.notify_all()

    def close(self) -> None:
        """End the stream after what is buffered (the server side went away)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # -- reader side ----------------------------------------------------------------------------------------------
    def _bookmark_object(self, rv: int, initial_end: bool = False) -> dict[str, Any]:
        md: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_end:
            md["annotations"] = {INITIAL_EVENTS_END_ANNOTATION: "true"}
        return {"kind": self.info.kind, "apiVersion": self.info.gvr.api_version, "metadata": md}

    def next_event(self, timeout: float | None = None) -> WatchEvent | None:
        """The next event; None after ``timeout`` seconds without one; raises StopIteration once the watch ended."""
        events = self.next_events(timeout, limit=1)
        return events[0] if events else None

    def next_events(
        self, timeout: float | None = None, *, copy: bool = True, limit: int | None = None, gather: float = 0.0
    ) -> list[WatchEvent]:
        """Every queued event (at most ``limit``), waiting up to ``timeout`` seconds for the first; ``[]`` after the
        timeout; raises StopIteration once the watch ended. ``copy=False`` hands out the stored objects themselves,
        for a reader that only serializes them. ``gather``: when the previous call took events less than that many
        seconds ago, wait that long first, so that events coming fast are taken (and the reader woken) a few at a
        time rather than one by one (``GATHER_SECONDS`` suits a stream)."""
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        if gather and time.monotonic() - self._last_taken < gather:
            time.sleep(gather)
        give_up = time.monotonic() + timeout if timeout is not None else None
        with self._cond:
            while True:
                if self._stopped:
                    raise StopIteration
                if self._queue:
                    n = len(self._queue) if limit is None else min(limit, len(self._queue))
                    taken = [self._queue.popleft() for _ in range(n)]
                    self._last_activity = self._last_taken = time.monotonic()
                    break
                now = time.monotonic()
                if self._closed or (self._deadline is not None and now >= self._deadline):
                    self._stopped = True
                    raise StopIteration
                waits = []
                if self._awaited_rv is not None:
                    if now >= self._awaited_deadline:
                        status = too_large_resource_version(self._awaited_rv, self._progress()).to_status()
                        self._awaited_rv = None
                        self._queue.append((ERROR, status, None))
                        self._closed = True
                        continue
                    waits.append(self._awaited_deadline - now)
                elif self._bookmark_interval is not None:
                    due = self._last_activity + self._bookmark_interval
                    progress = self._progress()
                    if now >= due and progress:
                        self._last_activity = now
                        return [WatchEvent(BOOKMARK, self._bookmark_object(progress))]
                    waits.append(max(due - now, 0.001))
                if give_up is not None:
                    if now >= give_up:
                        return []
                    waits.append(give_up - now)
                if self._deadline is not None:
                    waits.append(self._deadline - now)
                self._cond.wait(min(waits) if waits else None)
        return [WatchEvent(etype, _delivered(obj, rv, copy)) for etype, obj, rv in taken]

    def __iter__(self) -> Iterator[WatchEvent]:
        while True:
            try:
                event = self.next_event(None)
            except StopIteration:
                return
            if event is not None:
                yield event

    def stop(self) -> None:
        """End the watch now (idempotent, thread-safe); wakes a blocked reader."""
        with self._cond:
            self._stopped = True
            self._queue.clear()
            self._cond.notify_all()

    @property
    def finished(self) -> bool:
        """No more events will be queued (stopped, closed or past its timeout); a lock-free hint for the tracker."""
        return self._stopped or self._closed or (self._deadline is not None and time.monotonic() >= self._deadline)

    @property
    def stopped(self) -> bool:
        with self._cond:
            return self._stopped or (self._closed and not self._queue)

    def __enter__(self) -> TrackerWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
