"""Waiting for caches to sync (client-go tools/cache ``WaitForCacheSync``)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from apis.logs import get_logger

__all__ = ["wait_for_cache_sync", "wait_for_named_cache_sync", "SYNCED_POLL_PERIOD"]

log = get_logger(__name__)

SYNCED_POLL_PERIOD = 0.1


def wait_for_cache_sync(stop_event: threading.Event, *has_synced: Callable[[], bool]) -> bool:
    """True once every ``has_synced()`` is true (checked at once, then every 0.1 s); False if stopped first.

    Already-synced caches yield True even when ``stop_event`` is already set.
    """
    while True:
        if all(fn() for fn in has_synced):
            return True
        if stop_event.wait(SYNCED_POLL_PERIOD):
            return False


def wait_for_named_cache_sync(name: str, stop_event: threading.Event, *has_synced: Callable[[], bool]) -> bool:
    """``wait_for_cache_sync`` with start/end log lines naming the controller."""
    log.info("waiting for caches to sync", controller=name)
    if not wait_for_cache_sync(stop_event, *has_synced):
        log.error("unable to sync caches", controller=name)
        return False
    log.info("caches are synced", controller=name)
    return True
