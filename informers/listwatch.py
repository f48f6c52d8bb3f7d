"""``ListWatch``: the list and watch functions a reflector drives (client-go tools/cache ``ListWatch``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Protocol

from apis.client import ResourceClient
from apis.watch import ListOptions, Watch

__all__ = ["ListerWatcher", "ListWatch", "ListFunc", "WatchFunc", "TweakListOptionsFunc", "apply_tweak"]

ListFunc = Callable[[ListOptions], dict[str, Any]]
WatchFunc = Callable[[ListOptions], Watch]
TweakListOptionsFunc = Callable[[ListOptions], "ListOptions | None"]


class ListerWatcher(Protocol):
    def list(self, options: ListOptions) -> dict[str, Any]: ...

    def watch(self, options: ListOptions) -> Watch: ...


def apply_tweak(options: ListOptions, tweak: TweakListOptionsFunc | None) -> ListOptions:
    """Run ``tweak`` on a copy of ``options``; it may change it in place or return a new one."""
    if tweak is None:
        return options
    options = dataclasses.replace(options)
    result = tweak(options)
    if result is not None and not isinstance(result, ListOptions):
        raise TypeError(f"tweak_list_options must return None or ListOptions, got {type(result).__name__}")
    return result if result is not None else options


class ListWatch:
    """``list_func(options)`` returns a List dict; ``watch_func(options)`` returns a ``Watch`` of ``WatchEvent``."""

    def __init__(self, list_func: ListFunc, watch_func: WatchFunc) -> None:
        if not callable(list_func) or not callable(watch_func):
            raise TypeError("ListWatch needs callable list_func and watch_func")
        self.list_func = list_func
        self.watch_func = watch_func

    def list(self, options: ListOptions) -> dict[str, Any]:
        return self.list_func(options)

    def watch(self, options: ListOptions) -> Watch:
        return self.watch_func(options)

    @classmethod
    def from_resource(
        cls,
        resource_client: ResourceClient,
        label_selector: str | None = None,
        field_selector: str | None = None,
        tweak_list_options: TweakListOptionsFunc | None = None,
    ) -> ListWatch:
        """List and watch one resource (in the client's namespace, "" = all) with optional selectors.

        The selectors are set first, then ``tweak_list_options`` runs, on a copy of each request's options.
        """

        def options_for(options: ListOptions) -> ListOptions:
            options = dataclasses.replace(options)
            if label_selector is not None:
                options.label_selector = str(label_selector)
            if field_selector is not None:
                options.field_selector = str(field_selector)
            return apply_tweak(options, tweak_list_options)

        def list_func(options: ListOptions) -> dict[str, Any]:
            return resource_client.list(options_for(options))

        def watch_func(options: ListOptions) -> Watch:
            return resource_client.watch(options_for(options))

        return cls(list_func, watch_func)
