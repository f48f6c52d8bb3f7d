"""Fan-out of informer notifications to handlers: one unbounded buffer and one thread per registration
(client-go ``sharedProcessor`` / ``processorListener``). A slow handler only grows its own buffer."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from apis.logs import get_logger
from workqueue.clock import REAL_CLOCK, Clock

from .handlers import EventHandlerLike, on_add_caller
from .keys import Obj, ObjOrTombstone, deletion_handling_meta_namespace_key_func

__all__ = [
    "ADD_NOTIFICATION",
    "DELETE_NOTIFICATION",
    "MINIMUM_RESYNC_PERIOD",
    "UPDATE_NOTIFICATION",
    "ProcessorListener",
    "SharedProcessor",
    "determine_resync_period",
]

log = get_logger(__name__)

MINIMUM_RESYNC_PERIOD = 1.0

# what a ProcessorListener is told (client-go addNotification / updateNotification / deleteNotification)
ADD_NOTIFICATION, UPDATE_NOTIFICATION, DELETE_NOTIFICATION = 0, 1, 2
_KIND_NAMES = ("add", "update", "delete")

# The second item of a notification: the new object of an update, the initial-list flag of an add, None for a delete.
NotificationDetail = Obj | bool | None


def determine_resync_period(desired: float, check: float) -> float:
    """The effective resync period of a handler given the informer's resync check period."""
    if desired == 0:
        return 0.0
    if check == 0:
        log.warning("the informer does not resync; handler resync period ignored", desired=desired)
        return 0.0
    if desired < check:
        log.warning("handler resync period raised to the informer's resync check period", desired=desired, check=check)
        return check
    return desired


def _key(obj: object) -> str:
    try:
        return deletion_handling_meta_namespace_key_func(obj)
    except Exception:
        return "<unknown>"


class ProcessorListener:
    """One handler registration; returned by ``add_event_handler``. ``has_synced()`` is per registration."""

    def __init__(self, handler: EventHandlerLike, requested_resync_period: float, resync_period: float, now: float,
                 upstream_has_synced: Callable[[], bool], name: str = "") -> None:
        self.handler = handler
        self._on_add = on_add_caller(handler)
        self.requested_resync_period = requested_resync_period
        self.resync_period = resync_period
        self.next_resync = now + resync_period
        self._upstream_has_synced = upstream_has_synced
        self._name = name
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._pending: deque[tuple[int, ObjOrTombstone, NotificationDetail]] = deque()
        self._waiting = False
        self._closed = False
        self._initial_pending = 0  # initial-list adds queued but not yet handled
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"<ProcessorListener handler={self.handler!r}>"

    # -- producer side (called by the informer) --------------------------------------------------------------------
    def add(self, kind: int, a: ObjOrTombstone, b: NotificationDetail) -> None:
        if kind == ADD_NOTIFICATION and b:  # an initial-list add: counted for has_synced
            with self._lock:
                if self._closed:
                    return
                self._initial_pending += 1
                self._pending.append((kind, a, b))
                if self._waiting:
                    self._waiting = False
                    self._cond.notify()
            return
        if self._closed:
            return
        # deque.append is atomic: no lock per event. The consumer raises _waiting *before* it checks for work, so
        # either it sees this item or this sees _waiting and wakes it; the first to wake it lowers _waiting, so
        # the events that follow before it runs (up to a GIL switch interval) skip the lock and the notify.
        self._pending.append((kind, a, b))
        if self._waiting:
            self._wake()

    def _wake(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting = False
                self._cond.notify()

    def has_synced(self) -> bool:
        """True once the informer synced and this handler has handled every initial-list add it was given."""
        if not self._upstream_has_synced():
            return False
        with self._lock:
            return self._initial_pending <= 0

    # -- resync bookkeeping ----------------------------------------------------------------------------------------
    def should_resync(self, now: float) -> bool:
        return self.resync_period != 0 and now >= self.next_resync

    def determine_next_resync(self, now: float) -> None:
        self.next_resync = now + self.resync_period

    def set_resync_period(self, period: float) -> None:
        self.resync_period = period

    # -- consumer side ---------------------------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"informer-handler-{self._name}", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop delivering; pending notifications are dropped (as client-go does on shutdown)."""
        with self._lock:
            self._closed = True
            self._pending.clear()
            self._cond.notify_all()

    def join(self, timeout: float | None = None) -> bool:
        t = self._thread
        if t is None or t is threading.current_thread():
            return True
        t.join(timeout)
        return not t.is_alive()

    def _run(self) -> None:
        handler = self.handler
        # typed loosely: which arguments each takes depends on the notification's kind, dispatched below
        on_add: Callable[..., None] = self._on_add
        on_update: Callable[..., None] = handler.on_update
        on_delete: Callable[..., None] = handler.on_delete
        pending, popleft = self._pending, self._pending.popleft
        a: ObjOrTombstone | None
        while True:
            with self._lock:
                while True:
                    self._waiting = True
                    if pending or self._closed:
                        break
                    self._cond.wait()
                self._waiting = False
            # drain everything buffered before waiting again (stop() clears the buffer: popleft then ends this)
            while pending:
                try:
                    kind, a, b = popleft()
                except IndexError:  # stop() cleared the buffer meanwhile
                    break
                try:
                    if kind == UPDATE_NOTIFICATION:
                        on_update(a, b)
                    elif kind == ADD_NOTIFICATION:
                        on_add(a, b)
                    else:
                        on_delete(a)
                except Exception:
                    log.exception("event handler raised; continuing", handler=repr(handler)[:120],
                                  notification=_KIND_NAMES[kind], key=_key(b if kind == UPDATE_NOTIFICATION else a))
                finally:
                    if kind == ADD_NOTIFICATION and b:
                        with self._lock:
                            self._initial_pending -= 1
            # drop the last notification's objects before waiting: the informer lets go of replaced objects once
            # nothing else references them
            a = b = None
            if self._closed:
                return


class SharedProcessor:
    """Holds the listeners; ``distribute`` never blocks on a handler."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock: Clock = clock or REAL_CLOCK
        self._lock = threading.Lock()
        self._listeners: dict[ProcessorListener, bool] = {}  # listener -> is due for resync now
        self._all: tuple[ProcessorListener, ...] = ()  # snapshot for lock-free fan-out
        self._running = False

    def add_listener(self, listener: ProcessorListener) -> None:
        with self._lock:
            self._listeners[listener] = False
            self._all = tuple(self._listeners)
            if self._running:
                listener.start()

    def remove_listener(self, listener: ProcessorListener) -> bool:
        with self._lock:
            if listener not in self._listeners:
                return False
            del self._listeners[listener]
            self._all = tuple(self._listeners)
            if self._running:
                listener.stop()
            return True

    def listeners(self) -> tuple[ProcessorListener, ...]:
        return self._all

    def distribute(self, kind: int, a: ObjOrTombstone, b: NotificationDetail, sync: bool) -> None:
        if not sync:
            for listener in self._all:
                listener.add(kind, a, b)
            return
        with self._lock:
            due = [listener for listener, syncing in self._listeners.items() if syncing]
        for listener in due:
            listener.add(kind, a, b)

    def run(self) -> None:
        with self._lock:
            self._running = True
            for listener in self._listeners:
                listener.start()

    def stop(self, join_timeout: float = 10.0) -> None:
        """Stop every listener and wait for their threads, ``join_timeout`` seconds in all (one shared deadline)."""
        with self._lock:
            self._running = False
            listeners = list(self._listeners)
        for listener in listeners:
            listener.stop()
        deadline = time.monotonic() + join_timeout
        for listener in listeners:
            if not listener.join(max(0.0, deadline - time.monotonic())):
                log.warning("event handler still running after stop", handler=repr(listener.handler)[:120])

    def should_resync(self) -> bool:
        """Mark the listeners whose resync is due; True if any is."""
        with self._lock:
            needed = False
            now = self.clock.now()
            for listener in self._listeners:
                due = listener.should_resync(now)
                self._listeners[listener] = due
                if due:
                    needed = True
                    listener.determine_next_resync(now)
            return needed

    def resync_check_period_changed(self, check: float) -> None:
        with self._lock:
            for listener in self._listeners:
                listener.set_resync_period(determine_resync_period(listener.requested_resync_period, check))
