"""``SyncLoop``: the small queue-and-workers loop of the edge kinds' controllers (Dataset, Model).

Keys go into a named rate-limited queue; ``workers`` threads call ``sync(key)``. A key is never synced by two
workers at once; a ``sync`` that raises is retried with rate limiting (5 ms doubling to 1000 s, 10 qps overall) and
dropped with a log line after ``max_retries``. ``run(stop)`` waits for the caches, sets ``synced``, works until
``stop`` and then returns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import structlog

from informers import wait_for_cache_sync
from workqueue import RateLimitingQueue, default_controller_rate_limiter

__all__ = ["SyncLoop"]

log = structlog.get_logger(__name__)

DEFAULT_MAX_RETRIES = 15


class SyncLoop:
    def __init__(self, name: str, sync: Callable[[str], None], workers: int = 1,
                 max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        self.name = name
        self.queue = RateLimitingQueue(default_controller_rate_limiter(), name=name)
        self.synced = threading.Event()
        self._sync = sync
        self._workers = workers
        self._max_retries = max_retries
        self._log = log.bind(controller=name)

    def enqueue(self, key: str) -> None:
        self.queue.add(key)

    def run(self, stop: threading.Event, cache_syncs: Sequence[Callable[[], bool]]) -> None:
        self._log.info("starting controller", workers=self._workers)
        threads: list[threading.Thread] = []
        try:
            if not wait_for_cache_sync(stop, *cache_syncs):
                self._log.info("stopped before the caches synced")
                return
            self.synced.set()
            for i in range(self._workers):
                t = threading.Thread(target=self._work, name=f"{self.name}-worker-{i}", daemon=True)
                t.start()
                threads.append(t)
            stop.wait()
        finally:
            self.queue.shut_down()
            for t in threads:
                t.join(5.0)
            self._log.info("controller stopped")

    def _work(self) -> None:
        while True:
            key, shutdown = self.queue.get()
            if shutdown:
                return
            try:
                self._sync(key)
                self.queue.forget(key)
            except Exception as exc:
                retries = self.queue.num_requeues(key)
                if retries < self._max_retries:
                    self._log.warning("sync failed, retrying", key=key, error=str(exc), retries=retries)
                    self.queue.add_rate_limited(key)
                else:
                    self._log.error("sync failed too often, dropping key", key=key, error=str(exc), retries=retries)
                    self.queue.forget(key)
            finally:
                self.queue.done(key)
