"""List semantics of the object tracker: selectors, ``resourceVersion``/``resourceVersionMatch``, and pagination
whose continue token pins the list's resourceVersion (later pages are served from the same snapshot, rebuilt from
the watch history; once that RV has left the history the token is expired → 410). A list at a resourceVersion
the tracker has not reached waits up to ``too_large_wait`` seconds for it, then raises the 504 "Too large
resource version" error."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ... import meta
from ...errors import BadRequestError, GoneError
from ...resources import ResourceInfo
from ...watch import ListOptions
from .filter import ObjectFilter
from .store import ObjectStore
from .watchcache import WatchCache

__all__ = ["ListPage", "parse_rv", "select_page"]

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
    """A resourceVersion query value as a number; 400 when it is not an unsigned 64-bit integer (as etcd3's
    ``ParseResourceVersion``)."""
    text = value.strip() if isinstance(value, str) else ""
    if not text.isdigit() or not text.isascii() or len(text) > 20 or int(text) >= 2**64:
        raise BadRequestError(f'resourceVersion: Invalid value: "{str(value)[:40]}": must be a non-negative integer')
    return int(text)


@dataclass(frozen=True)
class ListPage:
    """One page of a list: the stored items (not copies), the list's resourceVersion and continuation."""

    items: list[dict[str, Any]]
    resource_version: int
    continue_: str | None
    remaining: int | None

    def to_list(self, info: ResourceInfo, copy: bool = True) -> dict[str, Any]:
        """The List object a client gets (items copied, unless ``copy`` is false: the stored objects themselves)."""
        md: dict[str, Any] = {"resourceVersion": str(self.resource_version)}
        if self.continue_:
            md["continue"] = self.continue_
            if self.remaining is not None:
                md["remainingItemCount"] = self.remaining
        return {
            "apiVersion": info.gvr.api_version,
            "kind": info.list_kind,
            "metadata": md,
            "items": meta.deep_copy(self.items) if copy else list(self.items),
        }


def select_page(
    store: ObjectStore,
    cache: WatchCache,
    info: ResourceInfo,
    flt: ObjectFilter,
    options: ListOptions,
    too_large_wait: float,
) -> ListPage:
    """The page ``options`` ask for among the resource's stored objects or, for a continue token or an exact
    resourceVersion (``Exact``, or a ``limit`` and a non-zero RV without a match, as kube-apiserver serves such a
    paginated list from etcd at that revision), among the snapshot at that version. Expects the tracker lock held."""
    limit = options.limit or 0
    if limit < 0:
        raise BadRequestError(f"limit: Invalid value: {limit}: must be non-negative")
    start: tuple[str, str] | None = None
    if options.continue_:
        if options.resource_version not in (None, "", "0"):
            raise BadRequestError("specifying resource version is not allowed when using continue")
        list_rv, start = _decode_continue(options.continue_)
        if list_rv < cache.compacted_rv or list_rv > cache.resource_version:
            raise GoneError(410, "Expired", _CONTINUE_EXPIRED)
        objects: Mapping[tuple[str, str], dict[str, Any]] = cache.snapshot(store.objects(info.gvr), info.gvr, list_rv)
    elif options.resource_version and (
        options.resource_version_match == "Exact"
        # the legacy exact case: a first page at a non-zero RV without resourceVersionMatch
        or (limit and not options.resource_version_match and options.resource_version != "0")
    ):
        list_rv = parse_rv(options.resource_version)
        cache.wait_for(list_rv, too_large_wait)
        if list_rv < cache.compacted_rv:
            raise cache.expired(list_rv)
        objects = cache.snapshot(store.objects(info.gvr), info.gvr, list_rv)
    else:
        if options.resource_version not in (None, ""):
            cache.wait_for(parse_rv(options.resource_version), too_large_wait)
        list_rv, objects = cache.resource_version, store.objects(info.gvr)
    keys = sorted(k for k, o in objects.items() if (start is None or k > start) and flt.matches(o))
    page = keys[:limit] if limit else keys
    more = bool(limit) and len(keys) > limit
    return ListPage(
        items=[objects[k] for k in page],
        resource_version=list_rv,
        continue_=_encode_continue(list_rv, page[-1]) if more else None,
        remaining=len(keys) - limit if more and not flt.has_selectors else None,
    )
