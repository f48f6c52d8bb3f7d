"""List semantics of ``ObjectTracker``: selectors, ``resourceVersion``/``resourceVersionMatch``, and pagination
whose continue token pins the list's resourceVersion (later pages are served from the same snapshot, rebuilt from
the watch history; once that RV has left the history the token is expired → 410). A list at a resourceVersion
the tracker has not reached waits up to ``too_large_rv_wait`` seconds for it, then raises the 504 "Too large
resource version" error."""

from __future__ import annotations

import base64
import threading
from collections import deque
from typing import Any

import orjson

from .. import meta
from ..errors import BadRequestError, GoneError
from ..resources import GroupVersionResource
from ..watch import ADDED, ListOptions
from .tracker_watch import HistoryEvent, ObjectFilter, too_large_resource_version

__all__ = ["ListMixin", "parse_rv"]

_CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter."
)


def _encode_continue(rv: int, key: tuple[str, str]) -> str:
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": [key[0], key[1]]})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        rv, start = int(data["rv"]), data["start"]
        return rv, (str(start[0]), str(start[1]))
    except (ValueError, KeyError, TypeError, IndexError):
        raise BadRequestError(f"continue key is not valid: {token!r}") from None


def parse_rv(value: str) -> int:
    try:
        rv = int(value)
        if rv < 0:
            raise ValueError
        return rv
    except (TypeError, ValueError):
        raise BadRequestError(f'resourceVersion: Invalid value: "{value}": must be a non-negative integer') from None


class ListMixin:
    """``list`` of ``ObjectTracker``."""

    _lock: threading.RLock
    _rv_advanced: threading.Condition
    _rv: int
    too_large_rv_wait: float
    _compacted_rv: int
    _history: deque[HistoryEvent]
    _objects: dict[GroupVersionResource, dict[tuple[str, str], dict[str, Any]]]
    # the rest (_remove, resource_info …) comes from ObjectTracker and its other mixins

    def _snapshot(self, gvr: GroupVersionResource, rv: int) -> dict[tuple[str, str], dict[str, Any]]:
        """The objects of ``gvr`` as they were at ``rv`` (undoing the retained history after it)."""
        objects = dict(self._objects.get(gvr, {}))
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

    def _wait_for_resource_version(self, rv: int) -> None:
        """With the lock held: wait (releasing it) until the tracker reaches ``rv``; 504 when it does not in time."""
        if rv > self._rv and not self._rv_advanced.wait_for(lambda: self._rv >= rv, timeout=self.too_large_rv_wait):
            raise too_large_resource_version(rv, self._rv)

    def _expired(self, rv: int) -> GoneError:
        return GoneError(410, "Expired", f"too old resource version: {rv} ({self._compacted_rv})")

    def list(self, gvr: GroupVersionResource, namespace: str = "", options: ListOptions | None = None) -> dict[str, Any]:
        """The List object: items sorted by namespace/name, filtered by selectors, paginated by limit/continue."""
        options = options or ListOptions()
        info = self.resource_info(gvr)
        flt = ObjectFilter(info, namespace, options.label_selector, options.field_selector)
        limit = options.limit or 0
        if limit < 0:
            raise BadRequestError(f"limit: Invalid value: {limit}: must be non-negative")
        with self._lock:
            start: tuple[str, str] | None = None
            if options.continue_:
                if options.resource_version not in (None, "", "0"):
                    raise BadRequestError("specifying resource version is not allowed when using continue")
                list_rv, start = _decode_continue(options.continue_)
                if list_rv < self._compacted_rv or list_rv > self._rv:
                    raise GoneError(410, "Expired", _CONTINUE_EXPIRED)
                objects = self._snapshot(gvr, list_rv)
            elif options.resource_version_match == "Exact" and options.resource_version:
                list_rv = parse_rv(options.resource_version)
                self._wait_for_resource_version(list_rv)
                if list_rv < self._compacted_rv:
                    raise self._expired(list_rv)
                objects = self._snapshot(gvr, list_rv)
            else:
                if options.resource_version not in (None, ""):
                    self._wait_for_resource_version(parse_rv(options.resource_version))
                list_rv, objects = self._rv, self._objects.get(gvr, {})
            keys = sorted(k for k, o in objects.items() if (start is None or k > start) and flt.matches(o))
            page = keys[:limit] if limit else keys
            items = [objects[k] for k in page]
        result_md: dict[str, Any] = {"resourceVersion": str(list_rv)}
        if limit and len(keys) > limit:
            result_md["continue"] = _encode_continue(list_rv, page[-1])
            if not flt.has_selectors:
                result_md["remainingItemCount"] = len(keys) - limit
        return {
            "apiVersion": gvr.api_version,
            "kind": info.list_kind,
            "metadata": result_md,
            "items": meta.deep_copy(items),
        }
