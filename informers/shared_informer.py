"""``SharedIndexInformer``: one list+watch feeding one indexed cache and any number of handlers
(client-go tools/cache ``sharedIndexInformer``, release-1.32 with the DeltaFIFO)."""

from __future__ import annotations

import sys
import threading
from collections import deque
from typing import Any

from apis.logs import get_logger
from workqueue.clock import REAL_CLOCK, Clock

from .controller import Config, Controller, keyed_upserter, process_deltas
from .delta_fifo import DeltaFIFO, Deltas, TransformFunc
from .gc_policy import freeze_after_initial_sync, thaw_after_stop
from .handlers import EventHandlerLike
from .index import Indexer
from .keys import Obj, ObjOrTombstone, deletion_handling_meta_namespace_key_func, meta_namespace_key_func
from .listwatch import ListerWatcher
from .processor import (
    ADD_NOTIFICATION,
    DELETE_NOTIFICATION,
    MINIMUM_RESYNC_PERIOD,
    UPDATE_NOTIFICATION,
    ProcessorListener,
    SharedProcessor,
    determine_resync_period,
)
from .reflector import WatchErrorHandler
from .thread_safe_store import Indexers

__all__ = [
    "SharedIndexInformer",
    "SharedInformer",
    "InformerStoppedError",
    "InformerStartedError",
    "MAX_HELD_REPLACED",
    "is_resync",
]

log = get_logger(__name__)


class InformerStoppedError(RuntimeError):
    """The informer has stopped: it accepts no new handlers or indexers."""


class InformerStartedError(RuntimeError):
    """The informer has started: its transform and watch error handler can no longer change."""


_NO_METADATA: Any = object()

MAX_HELD_REPLACED = 2048
"""At most how many replaced or deleted objects an informer holds on to (see ``_release_later``); never more than
one eighth of the objects it caches either."""

_getrefcount = sys.getrefcount
_ONLY_HELD = 2  # sys.getrefcount(held[0]) of an object referenced by the held deque only (+1 for the argument)


def _rv(obj: object) -> Any:
    """The object's resourceVersion (None when unset), or ``_NO_METADATA`` when it has no object metadata."""
    if obj.__class__ is dict or isinstance(obj, dict):  # plain dicts first, then dict subclasses (typed views)
        md = obj.get("metadata")
        if md.__class__ is dict or isinstance(md, dict):
            return md.get("resourceVersion")
    return _NO_METADATA


def is_resync(old: Obj, new: Obj) -> bool:
    """True when an update is a periodic resync: both objects have metadata and the same resourceVersion (client-go),
    and the same uid: after an API server lost its state, a recreated object may carry the resourceVersion of the one
    it replaces, and that change must reach every handler."""
    old_rv = _rv(old)
    if old_rv is _NO_METADATA:
        return False
    new_rv = _rv(new)
    return new_rv is not _NO_METADATA and old_rv == new_rv and old["metadata"].get("uid") == new["metadata"].get("uid")


class SharedIndexInformer:
    """See the module doc. Handlers get their own buffer and thread; objects handed out are shared, read-only."""

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        default_event_handler_resync_period: float = 0,
        indexers: Indexers | None = None,
        *,
        name: str = "",
        clock: Clock | None = None,
        reflector_options: dict[str, Any] | None = None,
    ) -> None:
        self.lister_watcher = lister_watcher
        self.name = name
        self._indexer = Indexer(deletion_handling_meta_namespace_key_func, indexers)
        self._clock: Clock = clock or REAL_CLOCK
        self._processor = SharedProcessor(self._clock)
        self._default_resync = float(default_event_handler_resync_period)
        self._resync_check_period = float(default_event_handler_resync_period)
        self._reflector_options = dict(reflector_options or {})
        self._started_lock = threading.Lock()
        # Held while deltas are processed and while a handler joins late or leaves: once running, the FIFO's lock,
        # which processing holds anyway (pop and the producer process under it).
        self._block_deltas = threading.Lock()
        self._started = False
        self._stopped = False
        self._transform: TransformFunc | None = None
        self._watch_error_handler: WatchErrorHandler | None = None
        self._fifo: DeltaFIFO | None = None
        self._controller: Controller | None = None
        self._replaced: deque[ObjOrTombstone] = deque()
        self._hold_limit = 0  # see _trim_held
        self._cache_size = self._indexer._store.__len__  # one call per watch event, not two (Store.__len__)

    # -- configuration ---------------------------------------------------------------------------------------------
    def set_transform(self, fn: TransformFunc | None) -> None:
        """Transform every object before it is cached and handed out; must be idempotent. Only before ``run``."""
        with self._started_lock:
            if self._started:
                raise InformerStartedError("informer has already started")
            self._transform = fn

    def set_watch_error_handler(self, fn: WatchErrorHandler) -> None:
        """``fn(reflector, error)`` on every failed list/watch cycle. Only before ``run``."""
        with self._started_lock:
            if self._started:
                raise InformerStartedError("informer has already started")
            self._watch_error_handler = fn

    def add_indexers(self, indexers: Indexers) -> None:
        """Add index functions (also while running; existing objects are indexed at once)."""
        with self._started_lock:
            if self._stopped:
                raise InformerStoppedError("indexer was not added because it has stopped already")
            self._indexer.add_indexers(indexers)

    # -- handlers --------------------------------------------------------------------------------------------------
    def add_event_handler(self, handler: EventHandlerLike, resync_period: float | None = None) -> ProcessorListener:
        """Register a handler; after start it first gets a synthetic add (initial list) per cached object.

        ``resync_period`` (default: the informer's) below 1 s is raised to 1 s; below the resync check period it
        lowers that period before start and is raised to it after start. Raises ``InformerStoppedError`` once
        the informer has stopped.
        """
        period = self._default_resync if resync_period is None else float(resync_period)
        with self._started_lock:
            if self._stopped:
                raise InformerStoppedError(
                    f"handler {handler!r} was not added to shared informer because it has stopped already"
                )
            if period > 0:
                if period < MINIMUM_RESYNC_PERIOD:
                    log.warning("resync period too small, raised", informer=self.name, requested=period,
                                minimum=MINIMUM_RESYNC_PERIOD)
                    period = MINIMUM_RESYNC_PERIOD
                if period < self._resync_check_period:
                    if self._started:
                        log.warning("resync period smaller than the informer's resync check period, raised",
                                    informer=self.name, requested=period, check=self._resync_check_period)
                        period = self._resync_check_period
                    else:
                        self._resync_check_period = period
                        self._processor.resync_check_period_changed(period)
            listener = ProcessorListener(
                handler,
                period,
                determine_resync_period(period, self._resync_check_period),
                self._clock.now(),
                self.has_synced,
                name=self.name,
            )
            if not self._started:
                self._processor.add_listener(listener)
                return listener
            with self._block_deltas:
                self._processor.add_listener(listener)
                for obj in self._indexer.list():
                    listener.add(ADD_NOTIFICATION, obj, True)
            return listener

    def remove_event_handler(self, registration: ProcessorListener) -> None:
        """Unregister (idempotent; unknown registrations are ignored). Its pending notifications are dropped."""
        if not isinstance(registration, ProcessorListener):
            raise TypeError(f"invalid registration type {type(registration).__name__}")
        with self._started_lock, self._block_deltas:
            self._processor.remove_listener(registration)

    # -- delta handling (runs under the FIFO lock) -----------------------------------------------------------------
    def _handle_deltas(self, deltas: Deltas, is_in_initial_list: bool) -> None:
        # Under the FIFO's lock, that is _block_deltas. The FIFO keys objects exactly as the indexer does, so its key
        # is reused.
        process_deltas(self, self._indexer, deltas, is_in_initial_list, use_deltas_key=True)

    def _on_initial_sync(self) -> None:
        # the first LIST is cached: take it (and the start-up heap) out of the cyclic GC's walks (see gc_policy)
        freeze_after_initial_sync(self.name)

    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None:
        self._processor.distribute(ADD_NOTIFICATION, obj, is_in_initial_list, False)

    def on_update(self, old: Obj, new: Obj) -> None:
        # An unchanged resourceVersion (and uid) means a resync (or a relist of an unchanged object). Once per watch
        # event: is_resync is inlined for plain dicts.
        if old.__class__ is dict and new.__class__ is dict:
            old_md, new_md = old.get("metadata"), new.get("metadata")
            if old_md.__class__ is dict and new_md.__class__ is dict:
                sync = old_md.get("resourceVersion") == new_md.get("resourceVersion") and old_md.get(
                    "uid"
                ) == new_md.get("uid")
            else:
                sync = is_resync(old, new)
        else:
            sync = is_resync(old, new)
        if sync:
            self._processor.distribute(UPDATE_NOTIFICATION, old, new, True)
        else:
            # distribute() and ProcessorListener.add() for an update, inlined (once per watch event): the informer is
            # the listeners' only producer
            for listener in self._processor._all:
                if listener._closed:
                    continue
                listener._pending.append((UPDATE_NOTIFICATION, old, new))
                if listener._waiting:
                    listener._wake()
        # _release_later(old), inlined
        replaced = self._replaced
        replaced.append(old)
        if len(replaced) > self._hold_limit:
            self._trim_held()
        elif _getrefcount(replaced[0]) <= _ONLY_HELD:
            replaced.popleft()

    def on_delete(self, obj: ObjOrTombstone) -> None:
        self._processor.distribute(DELETE_NOTIFICATION, obj, None, False)
        self._release_later(obj)

    def _release_later(self, obj: ObjOrTombstone) -> None:
        """Hold ``obj`` (just replaced or deleted, and handed to the handlers) until the handlers are done with it,
        then let go of it here, so that CPython frees it in the thread that decodes the watch stream, where the next
        objects reuse its memory at once, rather than in bursts in a handler thread on another core
        (hack/bench_informer.py, 20,000 cached pods: about 1.25x the events per second, 1.8x with Python's default
        GC thresholds). Held objects are let go oldest first, as soon as nothing else references them (handlers
        work in order), and whatever the references beyond MAX_HELD_REPLACED objects or one eighth of the cache."""
        replaced = self._replaced
        replaced.append(obj)
        self._trim_held()
        if replaced and _getrefcount(replaced[0]) <= _ONLY_HELD:
            replaced.popleft()

    def _trim_held(self) -> None:
        """Let go of the oldest held objects beyond the limit, which follows the cache's size: it is computed here,
        on every deletion and whenever the held objects exceed it (the cache only shrinks by deletions)."""
        limit = self._hold_limit = min(MAX_HELD_REPLACED, self._cache_size() >> 3)
        replaced = self._replaced
        while len(replaced) > limit:
            replaced.popleft()

    # -- lifecycle -------------------------------------------------------------------------------------------------
    def run(self, stop_event: threading.Event) -> None:
        """Run until ``stop_event`` is set; all handler threads are stopped before returning."""
        with self._started_lock:
            if self._started:
                log.warning("the informer has already started", informer=self.name)
                return
            if self._stopped:
                log.warning("the informer has already stopped", informer=self.name)
                return
            self._fifo = DeltaFIFO(
                key_function=meta_namespace_key_func,
                known_objects=self._indexer,
                emit_delta_type_replaced=True,
                transformer=self._transform,
            )
            config = Config(
                queue=self._fifo,
                lister_watcher=self.lister_watcher,
                process=self._handle_deltas,
                full_resync_period=self._resync_check_period,
                should_resync=self._processor.should_resync,
                watch_error_handler=self._watch_error_handler,
                name=self.name,
                reflector_options=dict(self._reflector_options),
                on_initial_sync=self._on_initial_sync,
                process_in_producer=True,  # _handle_deltas only updates the cache and fills handler buffers
                process_one=keyed_upserter(self, self._indexer),  # _handle_deltas for one upsert, keys as the FIFO
            )
            self._controller = Controller(config)
            self._block_deltas = self._fifo._lock  # see __init__
            self._started = True
        self._processor.run()
        try:
            self._controller.run(stop_event)
        finally:
            with self._started_lock:
                self._stopped = True
            self._processor.stop()
            self._replaced.clear()
            thaw_after_stop(self.name)  # else a frozen, stopped informer (a reference cycle) would never be freed

    def has_synced(self) -> bool:
        """True once the first list is fully in the indexer (not that handlers have seen it; see registrations)."""
        fifo = self._fifo
        return fifo is not None and fifo.has_synced()

    def has_started(self) -> bool:
        return self._started

    def is_stopped(self) -> bool:
        return self._stopped

    def last_sync_resource_version(self) -> str:
        controller = self._controller
        return controller.last_sync_resource_version() if controller is not None else ""

    def get_store(self) -> Indexer:
        return self._indexer

    def get_indexer(self) -> Indexer:
        return self._indexer


SharedInformer = SharedIndexInformer
