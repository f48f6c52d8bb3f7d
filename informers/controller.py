"""The informer's consumer loop: pop deltas from the FIFO, apply them to the indexer, tell the handler
(client-go tools/cache ``controller`` / ``processDeltas``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from apis.logs import get_logger

from .delta_fifo import DELETED, DeltaFIFO, Deltas, FIFOClosedError
from .handlers import ResourceEventHandler
from .keys import Obj, ObjOrTombstone
from .listwatch import ListerWatcher
from .reflector import Reflector, WatchErrorHandler
from .store import Store
from .thread_safe_store import ThreadSafeStore

_MISSING = ThreadSafeStore.MISSING  # type: ignore[attr-defined]

__all__ = ["Config", "Controller", "keyed_upserter", "process_deltas", "process_keyed_deltas", "upsert_and_notify"]

log = get_logger(__name__)


class ClientState(Protocol):
    """What ``process_deltas`` applies deltas to (a ``Store``; ``upsert``, when present, is used instead of
    ``get`` then ``add``/``update``)."""

    def add(self, obj: Obj) -> None: ...

    def update(self, obj: Obj) -> None: ...

    def delete(self, obj: ObjOrTombstone) -> None: ...

    def get(self, obj: Obj) -> tuple[Obj | None, bool]: ...


def process_deltas(handler: ResourceEventHandler, client_state: ClientState, deltas: Deltas, is_in_initial_list: bool,
                   use_deltas_key: bool = False) -> None:
    """Apply ``deltas`` (oldest first) to ``client_state`` and call the matching handler methods.

    Sync/Replaced/Added/Updated become ``on_update(old, new)`` when the key is cached, else ``on_add``;
    Deleted removes it and calls ``on_delete`` (possibly with a tombstone). With ``use_deltas_key`` the key the
    FIFO computed (``deltas.key``) is reused by a ``Store`` instead of computing it again; only valid when the FIFO
    and the store key objects the same way (as in the shared informer).
    """
    if use_deltas_key and deltas.key is not None and isinstance(client_state, Store):
        process_keyed_deltas(handler, client_state, deltas, is_in_initial_list)
        return
    upsert = getattr(client_state, "upsert", None)
    for d in deltas:
        obj = d.object
        if d.type == DELETED:
            client_state.delete(obj)
            handler.on_delete(obj)
            continue
        if upsert is not None:
            old, exists = upsert(obj)
        else:
            old, exists = client_state.get(obj)
            if exists:
                client_state.update(obj)
            else:
                client_state.add(obj)
        if exists:
            handler.on_update(old, obj)
        else:
            handler.on_add(obj, is_in_initial_list)


def process_keyed_deltas(handler: ResourceEventHandler, store: Store, deltas: Deltas, is_in_initial_list: bool) -> None:
    """``process_deltas(..., use_deltas_key=True)`` for a ``Store`` keyed like the FIFO and ``deltas`` with their
    key: once per watch event in an informer, so it goes straight to the store's map (one call per delta, no
    method lookups, no result tuple)."""
    key = deltas.key
    if key is None:
        raise ValueError("process_keyed_deltas needs deltas with their key (as DeltaFIFO.pop hands them out)")
    update = store._store.update  # the previous object, or MISSING
    for action, obj in deltas:
        if action == DELETED:
            store._store.delete(key)
            handler.on_delete(obj)
        else:
            upsert_and_notify(handler, update, key, obj, is_in_initial_list)


def upsert_and_notify(handler: ResourceEventHandler, update: Callable[[str, Obj], Any], key: str, obj: Obj,
                      is_in_initial_list: bool) -> None:
    """``process_deltas`` for one non-deletion delta (Added, Updated, Sync, Replaced: all upserts) of a keyed store;
    ``update(key, obj)`` stores ``obj`` and returns the previous object or the store's MISSING."""
    old = update(key, obj)
    if old is _MISSING:
        handler.on_add(obj, is_in_initial_list)
    else:
        handler.on_update(old, obj)


def keyed_upserter(handler: ResourceEventHandler, store: Store) -> Callable[[str, Obj, bool], None]:
    """``upsert_and_notify`` bound to ``handler`` and ``store``: ``(key, obj, is_in_initial_list)``, the one-delta
    fast path of ``DeltaFIFO.set_producer_process`` (``process_one``)."""
    return partial(upsert_and_notify, handler, store._store.update)


@dataclass
class Config:
    """What a ``Controller`` needs (client-go ``cache.Config``)."""

    queue: DeltaFIFO
    lister_watcher: ListerWatcher
    process: Callable[[Deltas, bool], Any]
    full_resync_period: float = 0
    should_resync: Callable[[], bool] | None = None
    watch_error_handler: WatchErrorHandler | None = None
    name: str = ""
    page_size: int | None = None
    reflector_options: dict[str, Any] = field(default_factory=dict)
    on_initial_sync: Callable[[], None] | None = None  # called once, outside the queue lock, after the first sync
    # After the first sync (and on_initial_sync), let the reflector process a watch event itself when the consumer
    # idles (DeltaFIFO.set_producer_process): only for a short, non-blocking ``process``, such as the informer's.
    process_in_producer: bool = False
    # With process_in_producer: what process does for one Added/Updated delta, without a Deltas (process_one there).
    process_one: Callable[[str, Obj, bool], Any] | None = None


class Controller:
    """Runs a reflector feeding ``config.queue`` and pops it into ``config.process`` until stopped."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.reflector: Reflector | None = None
        self._lock = threading.Lock()

    def run(self, stop_event: threading.Event) -> None:
        """Block until ``stop_event`` is set; closes the queue and joins the reflector before returning."""
        c = self.config
        reflector = Reflector(
            c.lister_watcher,
            c.queue,
            resync_period=c.full_resync_period,
            name=c.name,
            page_size=c.page_size,
            should_resync=c.should_resync,
            watch_error_handler=c.watch_error_handler,
            **c.reflector_options,
        )
        with self._lock:
            self.reflector = reflector
        reflector_thread = threading.Thread(target=reflector.run, args=(stop_event,), name=f"reflector-{c.name}",
                                            daemon=True)

        def close_on_stop() -> None:
            stop_event.wait()
            c.queue.close()

        closer = threading.Thread(target=close_on_stop, name=f"fifo-closer-{c.name}", daemon=True)
        closer.start()
        reflector_thread.start()
        try:
            self._process_loop()
        finally:
            reflector_thread.join()
            closer.join(timeout=1.0)

    def _process_loop(self) -> None:
        queue, process = self.config.queue, self.config.process
        pop = getattr(queue, "pop_batch", None) or queue.pop
        on_initial_sync = self.config.on_initial_sync
        in_producer = self.config.process_in_producer and hasattr(queue, "set_producer_process")
        if in_producer and on_initial_sync is None:
            queue.set_producer_process(process, self._log_process_error, self.config.process_one)
        try:
            while True:
                try:
                    pop(process)
                except FIFOClosedError:
                    return
                except Exception as e:
                    self._log_process_error(e)
                if on_initial_sync is not None and queue.has_synced():
                    callback, on_initial_sync = on_initial_sync, None
                    try:
                        callback()
                    except Exception as e:
                        log.error("initial sync callback failed", controller=self.config.name, error=str(e))
                    if in_producer:
                        queue.set_producer_process(process, self._log_process_error, self.config.process_one)
        finally:
            if in_producer:
                queue.set_producer_process(None)

    def _log_process_error(self, e: BaseException, key: str = "") -> None:
        log.error("processing deltas failed; the item is dropped", controller=self.config.name, key=key or None,
                  error=str(e), error_type=type(e).__name__)

    def has_synced(self) -> bool:
        return self.config.queue.has_synced()

    def last_sync_resource_version(self) -> str:
        with self._lock:
            return self.reflector.last_sync_resource_version() if self.reflector is not None else ""
