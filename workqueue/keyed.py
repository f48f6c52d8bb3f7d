"""``KeyedFIFO``: items grouped by key, handled one at a time per key and in order, keys in parallel.

Built on ``RateLimitingQueue`` (the queue holds keys, so it stays stingy: a key is never handed to two workers at
once). For message streams where every item matters (reports, downstream changes) — unlike a plain work queue,
which collapses repeated adds of a key into one.

    fifo = KeyedFIFO()
    fifo.put(key, item)                       # producers
    key, item, shutdown = fifo.get()          # workers: the oldest item of a key no other worker holds
    fifo.done(key)                            # item handled: the key's next item (if any) is queued
    fifo.done(key, retry=True)                # not handled: the same item again after the key's rate-limit delay

or let ``start_workers(count, process)`` run that loop on ``count`` threads, ``process(key, item) -> retry``.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from workqueue.rate_limiters import RateLimiter
from workqueue.rate_limiting_queue import RateLimitingQueue

__all__ = ["KeyedFIFO"]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class KeyedFIFO(Generic[K, T]):
    """Items of type ``T`` grouped by keys of type ``K`` (see the module doc)."""

    def __init__(self, rate_limiter: RateLimiter | None = None, name: str = "") -> None:
        self._queue = RateLimitingQueue(rate_limiter, name=name)
        self._lock = threading.Lock()
        self._items: dict[K, deque[T]] = {}
        self._count = 0
        self._threads: list[threading.Thread] = []

    def put(self, key: K, item: T) -> None:
        with self._lock:
            self._items.setdefault(key, deque()).append(item)
            self._count += 1
        self._queue.add(key)

    def get(self) -> tuple[K, T, bool] | tuple[None, None, bool]:
        """``(key, item, shutdown)``; blocks until a key has work or the FIFO shuts down."""
        got = self._next()
        return (None, None, True) if got is None else (got[0], got[1], False)

    def _next(self) -> tuple[K, T] | None:
        """The oldest item of a key no other worker holds, with its key; ``None`` once the FIFO shuts down."""
        while True:
            key, shutdown = self._queue.get()
            if shutdown:
                return None
            with self._lock:
                items = self._items.get(key)
                if items:
                    return key, items[0]
            self._queue.done(key)

    def done(self, key: K, retry: bool = False) -> None:
        """Finish the item ``get`` returned for ``key``: drop it, or with ``retry`` keep it for a rate-limited retry."""
        if retry and not self._queue.shutting_down():
            self._queue.add_rate_limited(key)
            self._queue.done(key)
            return
        with self._lock:
            items = self._items.get(key)
            if items:
                items.popleft()
                self._count -= 1
                more = bool(items)
                if not more:
                    del self._items[key]
            else:
                more = False
        self._queue.forget(key)
        if more:
            self._queue.add(key)  # queued again when done() below releases the key
        self._queue.done(key)

    def num_requeues(self, key: K) -> int:
        return self._queue.num_requeues(key)

    def pending(self) -> int:
        """Items put and not yet done."""
        with self._lock:
            return self._count

    def shut_down(self) -> None:
        self._queue.shut_down()

    def shutting_down(self) -> bool:
        return self._queue.shutting_down()

    def start_workers(self, count: int, process: Callable[[K, T], bool], name: str = "keyed-fifo",
                      on_error: Callable[[K, T, Exception], None] | None = None) -> None:
        """Start ``count`` daemon threads that call ``process(key, item)`` for every item until ``stop``; it returns
        True to retry the item. An exception drops the item (``on_error(key, item, exc)`` is told) and the thread
        goes on."""

        def work() -> None:
            while True:
                got = self._next()
                if got is None:
                    return
                key, item = got
                retry = False
                try:
                    retry = process(key, item)
                except Exception as exc:
                    if on_error is not None:
                        on_error(key, item, exc)
                finally:
                    self.done(key, retry=retry)

        for i in range(count):
            t = threading.Thread(target=work, name=f"{name}-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self, timeout: float = 5.0) -> None:
        """Shut down and wait up to ``timeout`` seconds for each worker to finish its item."""
        self.shut_down()
        for t in self._threads:
            t.join(timeout)
