"""``SyncLoop``: the small queue-and-workers loop of the edge kinds' controllers (Dataset, Model).

Keys go into a named rate-limited queue; ``workers`` threads call ``sync(key)`` through the job kinds'
``KeyProcessor``: a key is never synced by two workers at once; a ``sync`` that raises is retried with rate limiting
(5 ms doubling to 360 s, 10 qps overall), without limit unless ``max_retries`` is set; every sync is counted
and timed in ``sedna_gm_controller_sync_total``/``_duration_seconds`` of ``registry``. ``run(stop)`` waits for the
caches, sets ``synced``, works until ``stop`` and then returns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import structlog
from prometheus_client import CollectorRegistry

from globalmanager.runtime.keyprocessor import KeyProcessor, controller_rate_limiter
from globalmanager.runtime.metrics import controller_metrics
from informers import wait_for_cache_sync
from workqueue import RateLimitingQueue

__all__ = ["SyncLoop"]

log = structlog.get_logger(__name__)

class SyncLoop:
    def __init__(self, name: str, sync: Callable[[str], None], workers: int = 1,
                 max_retries: int | None = None, registry: CollectorRegistry | None = None) -> None:
        self.name = name
        self.queue = RateLimitingQueue(controller_rate_limiter(), name=name)
        self.synced = threading.Event()
        self._sync = sync
        self._workers = workers
        self._log = log.bind(controller=name)
        self.processor = KeyProcessor(name, self.queue, controller_metrics(registry), max_retries, self._log)

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
                self.processor.process(key, self._sync_and_forget)
            finally:
                self.queue.done(key)

    def _sync_and_forget(self, key: str) -> bool:
        self._sync(key)
        return True
