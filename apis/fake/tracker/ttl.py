"""Expiry of Events, as kube-apiserver's ``--event-ttl`` does it: every write of an Event attaches an etcd lease of
``ttl`` seconds, and when it runs out etcd deletes the key, which watchers see as a DELETED event.

``EventExpiry`` keeps one deadline per stored Event (renewed on each write, dropped on deletion, so it is bounded
by the Events stored) and deletes the Events whose deadline passed through the tracker's commit, like etcd (no
finalizers, no garbage collection of their own). Every method expects the tracker's lock to be held.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

from ... import meta
from ...resources import GroupVersionResource, ResourceInfo
from ...watch import DELETED
from .gc import Commit
from .store import ObjectKey

__all__ = ["DEFAULT_EVENT_TTL", "EVENT_GROUPS", "EventExpiry"]

DEFAULT_EVENT_TTL = 3600.0  # kube-apiserver's --event-ttl default (1 h)
EVENT_GROUPS = ("", "events.k8s.io")  # core/v1 and events.k8s.io/v1 Events


class _Objects(Protocol):
    def get_by_key(self, key: ObjectKey) -> dict[str, Any] | None: ...


class EventExpiry:
    """Deadlines of the stored Events and their deletion; ``ttl`` None or 0 keeps Events forever."""

    def __init__(
        self,
        ttl: float | None,
        clock: Callable[[], float],
        objects: _Objects,
        resource_info: Callable[[GroupVersionResource], ResourceInfo],
        commit: Commit,
    ) -> None:
        if ttl is not None and (math.isnan(ttl) or ttl < 0):
            raise ValueError(f"the event TTL must be a non-negative number of seconds, got {ttl!r}")
        self.ttl = ttl or None
        self.clock = clock
        self._objects, self._resource_info, self._commit = objects, resource_info, commit
        self._deadlines: OrderedDict[ObjectKey, float] = OrderedDict()  # oldest first: the TTL is constant
        self._expiring = False

    @staticmethod
    def applies(gvr: GroupVersionResource) -> bool:
        return gvr.resource == "events" and gvr.group in EVENT_GROUPS

    def written(self, gvr: GroupVersionResource, obj: dict[str, Any], event_type: str) -> None:
        """Renew the lease of an Event that was written (or forget one that was deleted)."""
        if self.ttl is None or not self.applies(gvr):
            return
        key: ObjectKey = (gvr, meta.namespace(obj), meta.name(obj))
        self._deadlines.pop(key, None)
        if event_type != DELETED:
            self._deadlines[key] = self.clock() + self.ttl

    def expire(self, keep: ObjectKey | None = None) -> int:
        """Delete every Event whose lease ran out, except ``keep`` (the object being written); how many went.
        Cheap when none did; does nothing when called from its own deletions."""
        if self._expiring or not self._deadlines or next(iter(self._deadlines.values())) > self.clock():
            return 0
        now, due = self.clock(), []
        for key, deadline in self._deadlines.items():
            if deadline > now:
                break
            if key != keep:
                due.append(key)
        self._expiring, gone = True, 0
        try:
            for key in due:
                del self._deadlines[key]
                obj = self._objects.get_by_key(key)
                if obj is not None:
                    self._commit(self._resource_info(key[0]), {**obj, "metadata": dict(obj["metadata"])}, obj, DELETED)
                    gone += 1
        finally:
            self._expiring = False
        return gone

    def __len__(self) -> int:
        return len(self._deadlines)
