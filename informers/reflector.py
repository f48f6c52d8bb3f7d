"""``Reflector``: keeps a store in step with the server by LIST then WATCH (client-go tools/cache, release-1.32).

- The first list asks for resourceVersion "0" (servable from the watch cache), later relists for the last synced
  RV; after a 410 or "too large resource version" on a list, or "too large resource version" on a watch (the server
  lost or never had that RV, e.g. it restarted empty; as client-go's watch-list path), the next list asks for ""
  (a consistent read) at once.
- Lists are paginated (500 per page by default; no limit for a relist at an exact RV so the watch cache can
  serve it); an expired continue token on a later page falls back to one full list.
- A watch starts from the last synced RV with bookmarks on and a server timeout drawn from [300, 600) s. Every
  event (bookmarks too) advances the RV. A clean close re-watches without relisting; a 410 / ERROR event or any
  other watch failure ends ``list_and_watch`` so that ``run`` backs off and relists; 429 and refused
  connections back off and re-watch on their own backoff (client-go's ``initConnBackoffManager``), so that an outage
  spent re-watching does not also lengthen the wait before the relist once the server is back. A watch that closes
  within 1 s without events counts as a failure.
- A watch that yields nothing for longer than its timeout plus a margin is considered dead, stopped and redone.
- ``run`` never gives up: it backs off 0.8 s → 30 s (jittered) between attempts and stops promptly on its stop
  event, also when blocked in a watch (a supervisor thread stops the watch object) or in a LIST (the list runs in a
  worker thread, as client-go runs the pager in a goroutine; on stop its result is discarded, nothing is replaced).
- A failed list reaches the watch error handler as the ORIGINAL exception (so ``apis.errors`` predicates and
  ``except`` clauses work, like Go's ``%w``), with a "failed to list" note (``__notes__``) naming the reflector.
"""

from __future__ import annotations

import errno
import random
import threading
from collections.abc import Callable
from typing import Any, Protocol

from apis import errors
from apis.logs import get_logger
from apis.watch import ADDED, BOOKMARK, DELETED, ERROR, MODIFIED, ListOptions, Watch
from workqueue.clock import REAL_CLOCK, Clock

from .backoff import Backoff
from .gc_policy import paused_gc
from .keys import Obj
from .listwatch import ListerWatcher
from .pager import ListPager

__all__ = [
    "Reflector",
    "ReflectorStore",
    "WatchErrorHandler",
    "default_watch_error_handler",
    "VeryShortWatchError",
    "is_connection_refused",
    "MIN_WATCH_TIMEOUT",
    "WatchSupervisor",
]

log = get_logger(__name__)

MIN_WATCH_TIMEOUT = 300.0  # seconds; the watch timeout is drawn from [min, 2 * min)
WATCH_INACTIVITY_MARGIN = 30.0  # seconds beyond the server-side timeout before a silent watch is declared dead
_SUPERVISOR_POLL = 0.1  # how often the supervisor looks at the stop event (no Go-style select in Python)
_LIST_STOP_POLL = 0.1  # how often a reflector waiting for its list worker looks at the stop event

WatchErrorHandler = Callable[["Reflector", BaseException], None]


class ReflectorStore(Protocol):
    """What a reflector fills (a ``DeltaFIFO`` in an informer, or any ``Store``); an optional
    ``update_resource_version(rv)`` is called after every watch event."""

    def add(self, obj: Obj) -> None: ...

    def update(self, obj: Obj) -> None: ...

    def delete(self, obj: Obj) -> None: ...

    def replace(self, items: list[Obj], resource_version: str) -> None: ...

    def resync(self) -> None: ...


class VeryShortWatchError(Exception):
    """The watch closed in under a second without delivering anything: treated as a failure (backoff, relist)."""


class _StopRequested(Exception):
    pass


def default_watch_error_handler(reflector: Reflector, err: BaseException) -> None:
    """Log a failed ``list_and_watch``: quietly for an expired RV (list or watch), as a warning otherwise."""
    context = "; ".join(getattr(err, "__notes__", None) or ())
    if errors.is_expired_or_gone(err):
        log.debug("watch closed", reflector=reflector.name, error=str(err), context=context)
    else:
        log.warning("failed to watch", reflector=reflector.name, error=str(err), error_type=type(err).__name__,
                    context=context)


def _add_note_once(err: BaseException, note: str) -> None:
    """``err.add_note(note)`` unless already there (a fake may raise the same instance on every list)."""
    notes = getattr(err, "__notes__", None)
    if notes is not None and note in notes:
        return
    add_note = getattr(err, "add_note", None)
    if add_note is not None:
        add_note(note)
    else:  # Python 3.10: same attribute, only not shown in tracebacks
        err.__notes__ = [*(notes or ()), note]


class _ListOutcome:
    """What the list worker hands back: set ``done`` last."""

    __slots__ = ("done", "result", "error")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: tuple[Any, bool] | None = None
        self.error: BaseException | None = None


def is_connection_refused(err: BaseException | None) -> bool:
    """True when ``err`` (or anything it wraps) is a refused TCP connection."""
    seen = 0
    while err is not None and seen < 10:
        if isinstance(err, ConnectionRefusedError):
            return True
        if isinstance(err, OSError) and err.errno == errno.ECONNREFUSED:
            return True
        if "connection refused" in str(err).lower() and isinstance(err, (OSError, ConnectionError)):
            return True
        nxt = getattr(err, "reason", None)  # urllib3 MaxRetryError / NewConnectionError
        if not isinstance(nxt, BaseException):
            nxt = err.__cause__ or err.__context__
        err = nxt
        seen += 1
    return False


def _is_watch_error_retriable(err: BaseException) -> bool:
    return is_connection_refused(err) or errors.is_too_many_requests(err)


class WatchSupervisor(threading.Thread):
    """Per ``list_and_watch``: runs resyncs, stops the current watch on stop or when it has gone silent."""

    def __init__(self, reflector: Reflector, stop_event: threading.Event) -> None:
        super().__init__(name=f"reflector-supervisor-{reflector.name}", daemon=True)
        self._r = reflector
        self._stop_event = stop_event
        self._wake = threading.Event()
        self._cancelled = False
        self._lock = threading.Lock()
        self._watch: Any = None
        self._watch_timeout = 0.0
        self._last_count = -1
        self._last_progress = 0.0
        self.events = 0  # bumped by the watch loop for every event
        self.resync_error: BaseException | None = None
        self.inactivity_stopped = False

    def set_watch(self, w: Watch, timeout: float) -> None:
        with self._lock:
            self._watch = w
            self._watch_timeout = timeout
            self._last_count = self.events
            self._last_progress = self._r._clock.now()
            self.inactivity_stopped = False
            stop_now = self._stop_event.is_set() or self.resync_error is not None
        if stop_now:
            w.stop()

    def clear_watch(self) -> None:
        with self._lock:
            self._watch = None

    def cancel(self) -> None:
        self._cancelled = True
        self._wake.set()

    def _stop_watch(self) -> None:
        with self._lock:
            w = self._watch
        if w is not None:
            try:
                w.stop()
            except Exception as e:
                log.warning("stopping watch failed", reflector=self._r.name, error=str(e))

    def run(self) -> None:
        r = self._r
        clock = r._clock
        period = r.resync_period
        next_resync = clock.now() + period if period > 0 else None
        while not self._cancelled:
            if self._stop_event.is_set():
                self._stop_watch()
                return
            now = clock.now()
            if next_resync is not None and now >= next_resync:
                next_resync = now + period
                try:
                    if r.should_resync is None or r.should_resync():
                        r.store.resync()
                except Exception as e:
                    # As client-go's resync goroutine: no more resyncs, the current (or next) watch ends with this
                    # error. The supervisor itself stays: it is what ends a watch when the stop event is set.
                    self.resync_error = e
                    next_resync = None
                    self._stop_watch()
            silent = False
            with self._lock:
                if self._watch is not None:
                    if self.events != self._last_count:
                        self._last_count = self.events
                        self._last_progress = now
                    elif now - self._last_progress > self._watch_timeout + r.watch_inactivity_margin:
                        self.inactivity_stopped = silent = True
                        self._last_progress = now
            if silent:
                log.warning("watch went silent past its timeout; restarting it", reflector=r.name)
                self._stop_watch()
            timeout = _SUPERVISOR_POLL
            if next_resync is not None:
                timeout = min(timeout, max(0.0, next_resync - clock.now()))
            self._wake.wait(timeout)
            self._wake.clear()


class Reflector:
    """Mirror one resource into ``store`` (a ``DeltaFIFO`` or any store with add/update/delete/replace/resync).

    ``min_watch_timeout`` (default 300 s, as client-go) sets the watch timeout range [min, 2 * min). client-go
    ignores values below 5 minutes; here smaller values are honoured as a TEST HOOK only (short watches, quick
    inactivity detection together with ``watch_inactivity_margin``): production code should keep the default.
    """

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        store: ReflectorStore,
        resync_period: float = 0,
        name: str = "",
        page_size: int | None = None,
        clock: Clock | None = None,
        backoff: Backoff | None = None,
        init_conn_backoff: Backoff | None = None,
        should_resync: Callable[[], bool] | None = None,
        watch_error_handler: WatchErrorHandler | None = None,
        min_watch_timeout: float = MIN_WATCH_TIMEOUT,
        watch_inactivity_margin: float = WATCH_INACTIVITY_MARGIN,
        rng: random.Random | None = None,
        pause_gc_during_list: bool | None = None,
    ) -> None:
        if resync_period < 0:
            raise ValueError(f"resync_period must be >= 0, got {resync_period}")
        if page_size is not None and page_size < 0:
            raise ValueError(f"page_size must be >= 0, got {page_size}")
        self.lister_watcher = lister_watcher
        self.store = store
        self.resync_period = float(resync_period)
        self.name = name or f"reflector-{id(self):x}"
        self.page_size = page_size
        self._clock: Clock = clock or REAL_CLOCK
        self._rng = rng or random.Random()
        self.backoff = backoff or Backoff(clock=self._clock, rng=self._rng)  # between list_and_watch attempts
        # between retries of a watch start refused or throttled (429)
        self.init_conn_backoff = init_conn_backoff or self.backoff.fresh_copy()
        self.should_resync = should_resync
        self.watch_error_handler: WatchErrorHandler = watch_error_handler or default_watch_error_handler
        self.min_watch_timeout = max(float(min_watch_timeout), 0.0)
        self.watch_inactivity_margin = watch_inactivity_margin
        self._last_sync_rv = ""
        self._last_sync_rv_unavailable = False
        self._paginated_result = False
        self._threads: list[threading.Thread] = []
        self.pause_gc_during_list = pause_gc_during_list  # None: follow informers.gc_policy

    # -- resource versions -----------------------------------------------------------------------------------------
    def last_sync_resource_version(self) -> str:
        """The RV of the last list or watch event processed ("" before the first list)."""
        return self._last_sync_rv

    def _relist_resource_version(self) -> str:
        if self._last_sync_rv_unavailable:
            return ""  # the last RV is gone: read the latest state from etcd
        if self._last_sync_rv == "":
            return "0"  # first list: any state is fine, let the watch cache serve it
        return self._last_sync_rv

    # -- run loop --------------------------------------------------------------------------------------------------
    def run(self, stop_event: threading.Event) -> None:
        """``list_and_watch`` until ``stop_event`` is set, backing off after every return (error or not)."""
        log.debug("starting reflector", reflector=self.name, resync_period=self.resync_period)
        try:
            while not stop_event.is_set():
                try:
                    self.list_and_watch(stop_event)
                except Exception as e:
                    try:
                        self.watch_error_handler(self, e)
                    except Exception as handler_err:
                        log.error("watch error handler failed", reflector=self.name, error=str(handler_err))
                if self.backoff.wait(stop_event):
                    break
        finally:
            for t in self._threads:
                t.join(timeout=5.0)
            self._threads = [t for t in self._threads if t.is_alive()]
            log.debug("stopped reflector", reflector=self.name)

    def list_and_watch(self, stop_event: threading.Event) -> None:
        """List once, then watch until the watch fails. Raises when the list (or the watch start) fails; returns
        without touching the store when ``stop_event`` is set meanwhile."""
        if not self._list(stop_event) or stop_event.is_set():
            return
        supervisor = WatchSupervisor(self, stop_event)
        self._threads = [t for t in self._threads if t.is_alive()]
        self._threads.append(supervisor)
        supervisor.start()
        try:
            self._watch_loop(stop_event, supervisor)
        finally:
            supervisor.cancel()
            supervisor.join(timeout=5.0)

    # -- list ------------------------------------------------------------------------------------------------------
    def _list(self, stop_event: threading.Event) -> bool:
        """LIST and replace the store's contents; False when stopped before the list finished (store untouched)."""
        # Decoding a large LIST allocates a million containers: with the cyclic GC on that is several times slower.
        with paused_gc(self.pause_gc_during_list):
            return self._list_and_replace(stop_event)

    def _list_and_replace(self, stop_event: threading.Event) -> bool:
        options = ListOptions(resource_version=self._relist_resource_version())
        pager = ListPager(self.lister_watcher.list)
        if self.page_size:
            pager.page_size = self.page_size
        elif self._paginated_result:
            pass  # the server paginated an RV="0" list: its watch cache is off, keep paginating
        elif options.resource_version not in ("", "0"):
            pager.page_size = 0  # an exact RV with no limit can be served from the watch cache
        outcome = _ListOutcome()
        # A LIST can hang for a long time (60 s per page on a real transport): it runs in a worker so that a stop is
        # honoured at once. A worker left behind by a stop finishes in the background; its result is dropped.
        worker = threading.Thread(target=self._list_pages, args=(pager, options, stop_event, outcome),
                                  name=f"reflector-list-{self.name}", daemon=True)
        worker.start()
        while not outcome.done.is_set() and not stop_event.is_set():
            outcome.done.wait(_LIST_STOP_POLL)
        if stop_event.is_set():  # also when the worker gave up between pages because of the stop
            log.debug("stopped while listing; the list result is discarded", reflector=self.name)
            return False
        if outcome.error is not None:
            err = outcome.error
            log.warning("failed to list", reflector=self.name, error=str(err), error_type=type(err).__name__)
            _add_note_once(err, f"{self.name}: failed to list")
            raise err
        assert outcome.result is not None
        list_obj, paginated = outcome.result
        if options.resource_version == "0" and paginated:
            self._paginated_result = True
        self._last_sync_rv_unavailable = False
        if not isinstance(list_obj, dict):
            raise RuntimeError(f"{self.name}: list returned {type(list_obj).__name__}, expected a List dict")
        rv = (list_obj.get("metadata") or {}).get("resourceVersion") or ""
        items = list_obj.get("items") or []
        try:
            self.store.replace(items, rv)
        except Exception as e:
            raise RuntimeError(f"{self.name}: unable to sync list result: {e}") from e
        # client-go calls the store's ResourceVersionUpdater only for watch events, never after a LIST
        self._last_sync_rv = rv
        return True

    def _list_pages(self, pager: ListPager, options: ListOptions, stop_event: threading.Event,
                    outcome: _ListOutcome) -> None:
        """The list worker: every page, with one retry at RV "" when the RV asked for is expired or too large."""
        try:
            try:
                outcome.result = pager.list(options, stop_event)
            except errors.ApiError as e:
                if not (errors.is_expired_or_gone(e) or errors.is_too_large_resource_version(e)):
                    raise
                self._last_sync_rv_unavailable = True
                outcome.result = pager.list(ListOptions(resource_version=self._relist_resource_version()), stop_event)
        except BaseException as e:  # handed to the waiting reflector (Go re-panics there too)
            outcome.error = e
        finally:
            outcome.done.set()

    def _forget_unavailable_rv(self, err: BaseException) -> None:
        """A watch refused for "too large resource version": the server does not have our RV (it restarted empty,
        or lags far behind); listing at it would only wait and fail the same way, so the next list reads at ""."""
        if errors.is_too_large_resource_version(err):
            log.info("the server does not have the last synced resourceVersion; relisting from the latest",
                     reflector=self.name, resource_version=self._last_sync_rv, error=str(err))
            self._last_sync_rv_unavailable = True

    # -- watch -----------------------------------------------------------------------------------------------------
    def _watch_timeout(self) -> int:
        return int(self.min_watch_timeout * (self._rng.random() + 1.0))

    def _watch_loop(self, stop_event: threading.Event, supervisor: WatchSupervisor) -> BaseException | None:
        """Watch (and re-watch) until stopped or the watch must be given up; returns the resync error if one
        ended it (client-go hands that to nobody: ``list_and_watch`` returns normally)."""
        while True:
            if stop_event.is_set():
                return None
            if supervisor.resync_error is not None:  # e.g. raised while backing off after a 429
                log.warning("resync failed; ending the watch", reflector=self.name,
                            error=str(supervisor.resync_error))
                return supervisor.resync_error
            start = self._clock.now()
            timeout = self._watch_timeout()
            options = ListOptions(
                resource_version=self._last_sync_rv, timeout_seconds=timeout, allow_watch_bookmarks=True
            )
            try:
                w = self.lister_watcher.watch(options)
            except Exception as e:
                if _is_watch_error_retriable(e):
                    log.info("watch start failed; backing off", reflector=self.name, error=str(e))
                    if self.init_conn_backoff.wait(stop_event):
                        return None
                    continue
                self._forget_unavailable_rv(e)
                raise
            try:
                err = self._handle_watch(w, start, timeout, stop_event, supervisor)
            finally:
                supervisor.clear_watch()
                try:
                    w.stop()
                except Exception as e:
                    log.warning("stopping watch failed", reflector=self.name, error=str(e))
            if err is None:
                continue  # clean close: re-watch from the last RV, no relist
            if isinstance(err, _StopRequested):
                return None
            if errors.is_expired_or_gone(err):
                log.debug("watch closed", reflector=self.name, error=str(err))
            elif errors.is_too_many_requests(err):
                log.info("watch returned 429; backing off", reflector=self.name)
                if self.init_conn_backoff.wait(stop_event):
                    return None
                continue
            else:
                self._forget_unavailable_rv(err)
                log.warning("watch ended with error", reflector=self.name, error=str(err))
            return supervisor.resync_error

    def _handle_watch(
        self,
        w: Watch,
        start: float,
        timeout: float,
        stop_event: threading.Event,
        supervisor: WatchSupervisor,
    ) -> BaseException | None:
        supervisor.set_watch(w, timeout)
        store = self.store
        add, update, delete = store.add, store.update, store.delete
        rv_updater = getattr(store, "update_resource_version", None)
        try:
            return self._consume(w, stop_event, supervisor, add, update, delete, rv_updater, start)
        except Exception as e:  # the stream broke mid-way: relist, as client-go does for decode errors
            return e

    def _consume(self, w: Watch, stop_event: threading.Event, supervisor: WatchSupervisor,
                 add: Callable[[Obj], None], update: Callable[[Obj], None], delete: Callable[[Obj], None],
                 rv_updater: Callable[[str], None] | None, start: float) -> BaseException | None:
        name = self.name
        count = 0
        stopped = stop_event.is_set
        for event in w:
            if stopped():
                return _StopRequested()
            etype = event.type
            obj = event.object
            if etype == ERROR:
                return errors.from_status(obj)
            # plain dicts first (the common case), then dict subclasses (e.g. typed views)
            md = obj.get("metadata") if obj.__class__ is dict or isinstance(obj, dict) else None
            if md.__class__ is not dict and not isinstance(md, dict):
                # the object's shape only: objects may carry credentials and never go into a log line
                log.error("unable to understand watch event", reflector=name, event_type=etype,
                          object_type=type(obj).__name__,
                          fields=sorted(str(k) for k in obj)[:20] if isinstance(obj, dict) else None)
                continue
            try:
                if etype == ADDED:
                    add(obj)
                elif etype == MODIFIED:
                    update(obj)
                elif etype == DELETED:
                    delete(obj)
                elif etype != BOOKMARK:
                    log.error("unknown watch event type", reflector=name, event_type=etype)
            except Exception as e:
                log.error("unable to apply watch event to store", reflector=name, event_type=etype,
                          key=f"{md.get('namespace') or ''}/{md.get('name') or ''}", error=str(e))
            self._last_sync_rv = rv = md.get("resourceVersion") or self._last_sync_rv
            if rv_updater is not None:
                rv_updater(rv)
            count += 1
            supervisor.events += 1
        if supervisor.resync_error is not None:
            return supervisor.resync_error
        if stop_event.is_set():
            return _StopRequested()
        if supervisor.inactivity_stopped:
            return None
        if self._clock.now() - start < 1.0 and count == 0:
            return VeryShortWatchError(
                f"very short watch: {name}: unexpected watch close - watch lasted less than a second and no items received"
            )
        log.debug("watch closed", reflector=name, events=count)
        return None
