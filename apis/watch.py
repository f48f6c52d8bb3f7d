"""Watch events, list options and the watch interface shared by the real and the fake clientset."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "ADDED",
    "MODIFIED",
    "DELETED",
    "BOOKMARK",
    "ERROR",
    "EVENT_TYPES",
    "WatchEvent",
    "ListOptions",
    "Watch",
    "INITIAL_EVENTS_END_ANNOTATION",
]

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
ERROR = "ERROR"
EVENT_TYPES = (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR)

INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end"


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One watch event; an ``ERROR`` event's object is a ``Status`` dict."""

    type: str
    object: dict[str, Any]


@dataclass
class ListOptions:
    """Options of a list or watch call (metav1.ListOptions)."""

    resource_version: str | None = None
    resource_version_match: str | None = None
    limit: int | None = None
    continue_: str | None = None
    timeout_seconds: int | None = None
    allow_watch_bookmarks: bool = False
    label_selector: str | None = None
    field_selector: str | None = None
    send_initial_events: bool | None = None

    def to_query(self, watch: bool = False) -> dict[str, str]:
        """Query parameters as the API server spells them."""
        q: dict[str, str] = {}
        if watch:
            q["watch"] = "1"
        if self.resource_version is not None:
            q["resourceVersion"] = self.resource_version
        if self.resource_version_match:
            q["resourceVersionMatch"] = self.resource_version_match
        if self.limit:
            q["limit"] = str(int(self.limit))
        if self.continue_:
            q["continue"] = self.continue_
        if self.timeout_seconds is not None:
            q["timeoutSeconds"] = str(int(self.timeout_seconds))
        if self.allow_watch_bookmarks:
            q["allowWatchBookmarks"] = "true"
        if self.label_selector:
            q["labelSelector"] = self.label_selector
        if self.field_selector:
            q["fieldSelector"] = self.field_selector
        if self.send_initial_events is not None:
            q["sendInitialEvents"] = "true" if self.send_initial_events else "false"
        return q

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> ListOptions:
        """Build from keyword arguments; accepts ``continue_`` or ``continue`` and rejects unknown names."""
        if "continue" in kwargs:
            kwargs["continue_"] = kwargs.pop("continue")
        unknown = set(kwargs) - set(cls.__dataclass_fields__)
        if unknown:
            raise TypeError(f"unknown list/watch option(s): {', '.join(sorted(unknown))}")
        return cls(**kwargs)


@runtime_checkable
class Watch(Protocol):
    """An iterator of ``WatchEvent`` that ends when the server closes the stream or ``stop()`` is called."""

    def __iter__(self) -> Iterator[WatchEvent]: ...

    def stop(self) -> None: ...
