"""The part of ``ObjectTracker`` the simulators use: a narrow interface, so they run on any tracker-like store."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any, Protocol

from apis.resources import GroupVersionResource
from apis.watch import ListOptions, Watch

__all__ = ["TrackerAPI"]


class TrackerAPI(Protocol):
    def get(self, gvr: GroupVersionResource, namespace: str, name: str) -> dict[str, Any]: ...

    def peek(self, gvr: GroupVersionResource, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The stored object, read-only (no copy); None when absent."""
        ...

    def list(self, gvr: GroupVersionResource, namespace: str = "", options: ListOptions | None = None) -> dict[str, Any]: ...

    def claimable(self, gvr: GroupVersionResource, namespace: str, owner_uid: str) -> builtins.list[Mapping[str, Any]]:
        """Stored objects (read-only) of ``gvr`` in ``namespace`` owned by ``owner_uid`` or without a controller."""
        ...

    def watch(self, gvr: GroupVersionResource, namespace: str = "", options: ListOptions | None = None) -> Watch: ...

    def create(
        self, gvr: GroupVersionResource, obj: dict[str, Any], namespace: str = "", *, copy: bool = True,
        trusted: bool = False,
    ) -> dict[str, Any]:
        """``copy=False``: the stored object itself (read-only) is the answer. ``trusted``: ``obj`` was built for
        this write, well-formed, and is never changed afterwards: stored as it is (no bounds copy, no decoding
        check; admission still applies)."""
        ...

    def update(
        self,
        gvr: GroupVersionResource,
        obj: dict[str, Any],
        namespace: str = "",
        subresource: str | None = None,
        *,
        copy: bool = True,
        trusted: bool = False,
    ) -> dict[str, Any]:
        """``copy=False`` and ``trusted`` as for ``create``."""
        ...

    def bind(self, namespace: str, name: str, node_name: str) -> dict[str, Any]: ...

    def delete(
        self,
        gvr: GroupVersionResource,
        namespace: str,
        name: str,
        propagation_policy: str | None = None,
        preconditions: dict[str, Any] | None = None,
    ) -> dict[str, Any]: ...
