"""The tracker's watch cache: a bounded history of committed events, the open watchers, and waiting for a
resourceVersion, as kube-apiserver's watch cache keeps them.

- ``record`` appends an event (dropping the oldest beyond ``capacity``: the history is "compacted" up to that
  event's resourceVersion), offers it to the open watchers of its resource (and to those waiting for a future
  resourceVersion) and wakes whoever waits for a resourceVersion. A watcher learns that the events of other
  resources went by from ``resource_version`` (its bookmarks), never one offer per event.
- A watch from an exact resourceVersion is replayed from the history; one older than the history gets 410.
- ``snapshot`` rebuilds a resource's objects as they were at a retained resourceVersion (consistent pagination and
  exact-resourceVersion lists).

Every method but ``close_all`` expects the lock given at construction (the tracker's) to be held.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from typing import Any

from ... import meta
from ...errors import GoneError
from ...resources import GroupVersionResource
from ...watch import ADDED
from .watch import HistoryEvent, TrackerWatch, too_large_resource_version

__all__ = ["WatchCache"]


class WatchCache:
    """History (at most ``capacity`` events), watchers and resourceVersion waits under the owner's ``lock``."""

    def __init__(self, lock: threading.RLock, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("the watch history must hold at least 1 event")
        self._lock = lock
        self._advanced = threading.Condition(lock)  # notified on every recorded event
        self._capacity = capacity
        self._history: deque[HistoryEvent] = deque()
        self._watchers: dict[GroupVersionResource, list[TrackerWatch]] = {}
        # watchers of a future resourceVersion: offered every event (of any resource) until they reach it
        self._awaiting: list[TrackerWatch] = []
        self.resource_version = 0  # of the newest recorded event
        self.compacted_rv = 0  # of the newest event dropped from the history

    def record(self, event: HistoryEvent) -> None:
        """Append ``event``, fan it out to its resource's watchers (dropping finished ones) and wake resourceVersion
        waits."""
        if len(self._history) >= self._capacity:
            self.compacted_rv = self._history.popleft().rv
        self._history.append(event)
        watchers = self._watchers.get(event.gvr)
        if watchers:
            self._watchers[event.gvr] = [w for w in watchers if w.offer(event)]
        if self._awaiting:
            awaiting, self._awaiting = self._awaiting, []
            for w in awaiting:
                if w.offer(event):
                    self._register(w)
        # set once every watcher was offered the event: a watcher whose queue is empty when it reads this value
        # (its bookmark) has been offered every event up to it
        self.resource_version = event.rv
        self._advanced.notify_all()

    # -- watchers ---------------------------------------------------------------------------------------------------
    def start(self, watch: TrackerWatch, rv: int, too_large_wait: float) -> None:
        """Start ``watch`` after ``rv``: replay the retained events after it, or (when ``rv`` is in the future) let
        it wait up to ``too_large_wait`` seconds for it; one 410 ERROR event when ``rv`` was compacted away."""
        if rv < self.compacted_rv:
            watch.fail(self.expired(rv).to_status())
            return
        if rv > self.resource_version:
            watch.await_resource_version(rv, self.resource_version, too_large_wait)
        else:
            for event in self._history:
                if event.rv > rv and not watch.offer(event):
                    break
            watch.set_progress(rv)
        self.add(watch)

    def add(self, watch: TrackerWatch) -> None:
        """Offer every future event of its resource to ``watch`` (finished watchers of the list it joins are
        forgotten)."""
        watch.attach(self._current_resource_version)
        self._register(watch, forget_finished=True)

    def _register(self, watch: TrackerWatch, forget_finished: bool = False) -> None:
        """Put ``watch`` with the watchers of its resource, or with those waiting for a future resourceVersion."""
        group = self._awaiting if watch.awaiting else self._watchers.setdefault(watch.info.gvr, [])
        if forget_finished:
            group[:] = [w for w in group if not w.finished]
        group.append(watch)

    def _current_resource_version(self) -> int:
        return self.resource_version

    def _all_watchers(self) -> list[TrackerWatch]:
        return [w for watchers in self._watchers.values() for w in watchers] + self._awaiting

    @property
    def watcher_count(self) -> int:
        """Watchers that are not finished."""
        return sum(1 for w in self._all_watchers() if not w.finished)

    def close_all(self) -> None:
        """End every open watch (as a server shutting down does)."""
        with self._lock:
            watchers = self._all_watchers()
            self._watchers, self._awaiting = {}, []
        for w in watchers:
            w.close()

    # -- resourceVersions -------------------------------------------------------------------------------------------
    def wait_for(self, rv: int, timeout: float) -> None:
        """Wait (releasing the lock) until ``rv`` is recorded; the 504 "Too large resource version" error when it is
        not within ``timeout`` seconds."""
        if rv > self.resource_version and not self._advanced.wait_for(
            lambda: self.resource_version >= rv, timeout=timeout
        ):
            raise too_large_resource_version(rv, self.resource_version)

    def expired(self, rv: int) -> GoneError:
        """The 410 for a resourceVersion older than the history."""
        return GoneError(410, "Expired", f"too old resource version: {rv} ({self.compacted_rv})")

    def snapshot(
        self, current: Mapping[tuple[str, str], dict[str, Any]], gvr: GroupVersionResource, rv: int
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """The objects of ``gvr`` as they were at ``rv``, from its ``current`` objects with the later retained
        events undone (``rv`` must not be older than ``compacted_rv``)."""
        objects = dict(current)
        for event in reversed(self._history):
            if event.rv <= rv:
                break
            if event.gvr != gvr:
                continue
            key = (meta.namespace(event.obj), meta.name(event.obj))
            if event.type == ADDED:
                objects.pop(key, None)
            elif event.prev is not None:
                objects[key] = event.prev
        return objects
