"""Paginated LIST that looks like one call (client-go tools/pager ``ListPager``).

Pages are requested with ``limit`` and followed through ``continue`` tokens; later pages drop the
resourceVersion, as the API server requires. When a continue token expires (410) on page two or later and
``full_list_if_expired`` is set, one unpaginated list at the original resourceVersion replaces the partial result.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from apis import errors
from apis.watch import ListOptions

__all__ = ["ListPager", "ListStoppedError", "DEFAULT_PAGE_SIZE"]

DEFAULT_PAGE_SIZE = 500


class ListStoppedError(Exception):
    """The stop event was set between two pages: the partial list was abandoned."""


class ListPager:
    def __init__(
        self,
        page_fn: Callable[[ListOptions], dict[str, Any]],
        page_size: int = DEFAULT_PAGE_SIZE,
        full_list_if_expired: bool = True,
    ) -> None:
        self.page_fn = page_fn
        self.page_size = page_size
        self.full_list_if_expired = full_list_if_expired

    def list(self, options: ListOptions, stop_event: threading.Event | None = None) -> tuple[dict[str, Any], bool]:
        """The whole list and whether it came back in more than one page. Raises ``ListStoppedError`` when
        ``stop_event`` is set before a further page is requested."""
        options = dataclasses.replace(options)
        if not options.limit:
            options.limit = self.page_size or None
        requested_rv = options.resource_version
        requested_match = options.resource_version_match
        result: dict[str, Any] | None = None
        items: list[Any] = []
        paginated = False
        while True:
            try:
                page = self.page_fn(options)
            except errors.ApiError as e:
                if not (errors.is_expired_or_gone(e) and self.full_list_if_expired and options.continue_):
                    raise
                # the continue token expired mid-way: fall back to one full list at the original RV
                full = dataclasses.replace(
                    options,
                    limit=None,
                    continue_=None,
                    resource_version=requested_rv,
                    resource_version_match=requested_match,
                )
                return self.page_fn(full), paginated
            if not isinstance(page, dict):
                raise TypeError(f"list returned {type(page).__name__}, expected a List dict")
            meta = page.get("metadata") or {}
            cont = meta.get("continue") or ""
            if result is None and not cont:
                return page, paginated
            if result is None:
                result = {k: v for k, v in page.items() if k != "items"}
                result["metadata"] = {k: v for k, v in meta.items() if k != "continue"}
            items.extend(page.get("items") or ())
            if not cont:
                result["items"] = items
                return result, paginated
            if stop_event is not None and stop_event.is_set():
                raise ListStoppedError(f"stopped after {len(items)} items, before the page at continue={cont!r}")
            # a fresh options object per page (callers may keep the ones they saw)
            options = dataclasses.replace(options, continue_=cont, resource_version=None, resource_version_match=None)
            paginated = True
