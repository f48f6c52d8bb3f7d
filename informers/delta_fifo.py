"""``DeltaFIFO``: a producer/consumer queue of per-object change lists (client-go tools/cache, release-1.32).

Each key is queued at most once; its pending changes accumulate as ``Deltas`` (oldest first) until ``pop``
hands them all to ``process`` at once. ``replace`` (from a relist) also reports objects that disappeared
as ``Deleted`` with a ``DeletedFinalStateUnknown`` tombstone.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any, NamedTuple, Protocol

from apis.logs import get_logger

from .keys import (
    DeletedFinalStateUnknown,
    KeyFunc,
    Obj,
    ObjectKeyError,
    ObjOrTombstone,
    meta_namespace_key_func,
)

__all__ = [
    "DeltaType",
    "ADDED",
    "UPDATED",
    "DELETED",
    "REPLACED",
    "SYNC",
    "Delta",
    "Deltas",
    "DeltaFIFO",
    "FIFOClosedError",
    "RequeueError",
    "KeyListerGetter",
    "TransformFunc",
    "ZERO_LENGTH_DELTAS_MESSAGE",
]

log = get_logger(__name__)


class DeltaType(str, Enum):
    """The kind of a change; members compare equal to their strings (``DeltaType.ADDED == "Added"``)."""

    ADDED = "Added"
    UPDATED = "Updated"
    DELETED = "Deleted"
    REPLACED = "Replaced"  # emitted by a relist when emit_delta_type_replaced is set
    SYNC = "Sync"  # emitted by a resync (and by a relist otherwise)

    def __str__(self) -> str:
        return self.value


ADDED = DeltaType.ADDED
UPDATED = DeltaType.UPDATED
DELETED = DeltaType.DELETED
REPLACED = DeltaType.REPLACED
SYNC = DeltaType.SYNC

ZERO_LENGTH_DELTAS_MESSAGE = "0 length Deltas object; can't get key"

TransformFunc = Callable[[Any], Any]


class Delta(NamedTuple):
    """One change: ``type`` (a ``DeltaType``) and the object after it (a tombstone for inferred deletions)."""

    type: DeltaType
    object: Any


class Deltas(list[Delta]):
    """The pending changes of one object, oldest first. ``key`` is set on what ``pop`` hands out (else None)."""

    __slots__ = ("key",)

    def __init__(self, *args: Iterable[Delta]) -> None:
        super().__init__(*args)
        self.key: str | None = None

    def oldest(self) -> Delta | None:
        return self[0] if self else None

    def newest(self) -> Delta | None:
        return self[-1] if self else None


_new_list = list.__new__
_new_tuple = tuple.__new__


def _delta(action: DeltaType, obj: ObjOrTombstone) -> Delta:
    return _new_tuple(Delta, (action, obj))  # skips NamedTuple's Python-level __new__


def _new_deltas(key: str, first: Delta) -> Deltas:
    deltas = _new_list(Deltas)  # skips Deltas.__init__ (it sets key to None)
    deltas.append(first)
    deltas.key = key
    return deltas


class KeyListerGetter(Protocol):
    """What ``known_objects`` must offer (an ``Indexer`` does)."""

    def list_keys(self) -> list[str]: ...

    def get_by_key(self, key: str) -> tuple[Obj | None, bool]: ...


class FIFOClosedError(Exception):
    """``pop`` on a closed, drained queue."""

    def __init__(self, message: str = "DeltaFIFO: manipulating with closed queue") -> None:
        super().__init__(message)


class RequeueError(Exception):
    """Raised by a ``pop`` callback to put the item back at the end of the queue.

    ``pop`` then raises ``err`` if one is given, else returns the item normally.
    """

    def __init__(self, err: BaseException | None = None) -> None:
        super().__init__(str(err) if err is not None else "the popped item should be requeued without returning an error")
        self.err = err


class _Requeued(Exception):
    """Internal: ``process`` asked for a requeue without an error."""

    def __init__(self, deltas: Deltas) -> None:
        super().__init__()
        self.deltas = deltas


def _upserter(action: DeltaType) -> Callable[[DeltaFIFO, Obj], None]:
    """``DeltaFIFO.add`` (``action`` Added) or ``update`` (Updated): ``_queue_action`` for a watch event. Once per
    event, so one function per action (no call in between) with the common case inlined: a plain dict. An
    Added/Updated never follows up on a Deleted, so there is nothing to deduplicate."""

    def upsert(self: DeltaFIFO, obj: Obj) -> None:
        if obj.__class__ is not dict:
            with self._lock:
                self._populated = True
                self._queue_action(action, action, obj, notify=False)
                self._notify_or_process_here()
            return
        try:
            key = self._key_func(obj)
        except ObjectKeyError:
            raise
        except Exception as e:
            raise ObjectKeyError(obj, e) from e
        with self._lock:
            self._populated = True
            if self._transformer is not None:
                obj = self._transformer(obj)
            deltas = self._items.get(key)
            if deltas is not None:
                deltas.append(_new_tuple(Delta, (action, obj)))
            elif self._producer_process is not None and self._waiters and not self._queue and not self._closed:
                # Nothing queued and a consumer idles in pop: it would pop exactly this next. Process it here, as
                # _process_here_if_idle would after queueing it, without the round trip through the queue (the
                # steady state of a watch), and with process_one without building the Deltas.
                process_one = self._producer_process_one
                if process_one is None:
                    self._process_in_producer(key, _new_deltas(key, _new_tuple(Delta, (action, obj))))
                    return
                is_in_initial_list = self._initial_population_count > 0  # 0 once the queue was empty, really
                if is_in_initial_list:
                    self._initial_population_count -= 1
                try:
                    process_one(key, obj, is_in_initial_list)
                except Exception as e:
                    self._producer_failed(key, _new_deltas(key, _new_tuple(Delta, (action, obj))), e)
                return
            else:
                self._items[key] = _new_deltas(key, _new_tuple(Delta, (action, obj)))
                self._queue.append(key)
            self._notify_or_process_here()

    upsert.__name__ = "add" if action is ADDED else "update"
    upsert.__qualname__ = f"DeltaFIFO.{upsert.__name__}"
    upsert.__doc__ = f"Queue an {action.value} delta of ``obj`` (or process it here: see ``set_producer_process``)."
    return upsert


class DeltaFIFO:
    """See the module doc. Thread-safe; ``process`` runs under the queue lock, so keep it short."""

    def __init__(
        self,
        key_function: KeyFunc = meta_namespace_key_func,
        known_objects: KeyListerGetter | None = None,
        emit_delta_type_replaced: bool = False,
        transformer: TransformFunc | None = None,
    ) -> None:
        self._key_func = key_function
        self._known = known_objects
        self._emit_replaced = emit_delta_type_replaced
        self._transformer = transformer
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._items: dict[str, Deltas] = {}
        self._queue: deque[str] = deque()  # each key at most once; key in queue <=> key in items
        self._populated = False
        self._initial_population_count = 0
        self._closed = False
        self._waiters = 0  # threads blocked in pop: lets producers skip notify() when nobody waits
        self._producer_process: Callable[[Deltas, bool], Any] | None = None
        self._producer_error: Callable[[BaseException, str], None] | None = None
        self._producer_process_one: Callable[[str, Any, bool], Any] | None = None

    # -- keys ------------------------------------------------------------------------------------------------------
    def key_of(self, obj: object) -> str:
        """The key of an object, of the newest object of a ``Deltas``, or the recorded key of a tombstone."""
        if obj.__class__ is not dict:
            if isinstance(obj, Deltas):
                if not obj:
                    raise ObjectKeyError(obj, ZERO_LENGTH_DELTAS_MESSAGE)
                obj = obj[-1].object
            if isinstance(obj, DeletedFinalStateUnknown):
                return obj.key
        try:
            return self._key_func(obj)
        except ObjectKeyError:
            raise
        except Exception as e:
            raise ObjectKeyError(obj, e) from e

    # -- producers -------------------------------------------------------------------------------------------------
    add = _upserter(ADDED)
    update = _upserter(UPDATED)

    def delete(self, obj: Obj) -> None:
        """Queue a deletion, unless the object is known neither to the queue nor to ``known_objects``."""
        key = self.key_of(obj)
        with self._lock:
            self._populated = True
            if key not in self._items:
                if self._known is None:
                    return
                try:
                    _, exists = self._known.get_by_key(key)
                except Exception:
                    exists = True  # client-go queues the deletion when the lookup fails
                if not exists:
                    return
            self._queue_action(DELETED, DELETED, obj, key, notify=False)
            self._notify_or_process_here()

    def _notify_or_process_here(self) -> None:
        if self._producer_process is not None and self._process_here_if_idle():
            return
        if self._waiters:
            self._cond.notify()

    def _queue_action(self, action: DeltaType, internal_action: DeltaType, obj: ObjOrTombstone, key: str | None = None,
                      notify: bool = True) -> None:
        if key is None:
            key = self.key_of(obj)
        # Everything passes here once; tombstones and resyncs carry objects that were transformed already.
        if self._transformer is not None and internal_action is not SYNC and not isinstance(obj, DeletedFinalStateUnknown):
            obj = self._transformer(obj)
        delta = _delta(action, obj)
        deltas = self._items.get(key)
        if deltas is None:
            self._items[key] = _new_deltas(key, delta)
            self._queue.append(key)
        elif action is DELETED and deltas[-1].type == DELETED:
            # two deletions in a row collapse into one: the older, unless it is a tombstone (less information)
            if isinstance(deltas[-1].object, DeletedFinalStateUnknown):
                deltas[-1] = delta
        else:
            deltas.append(delta)
        if notify and self._waiters:
            self._cond.notify()

    def replace(self, items: Iterable[Obj], resource_version: str = "") -> None:
        """Queue ``Replaced`` (or ``Sync``) for every item and a tombstone deletion for every key that vanished."""
        with self._lock:
            keys: set[str] = set()
            action = REPLACED if self._emit_replaced else SYNC
            for item in items:
                key = self.key_of(item)
                keys.add(key)
                self._queue_action(action, REPLACED, item, key)

            queued_deletions = 0
            for key, deltas in list(self._items.items()):
                if key in keys:
                    continue
                deleted_obj = deltas[-1].object if deltas else None
                if isinstance(deleted_obj, DeletedFinalStateUnknown):
                    deleted_obj = deleted_obj.obj
                queued_deletions += 1
                self._queue_action(DELETED, DELETED, DeletedFinalStateUnknown(key, deleted_obj), key)

            if self._known is not None:
                for key in self._known.list_keys():
                    if key in keys or self._items.get(key):
                        continue
                    try:
                        deleted_obj, exists = self._known.get_by_key(key)
                    except Exception as e:
                        log.error("lookup in known objects failed; queueing a tombstone without object", key=key, error=str(e))
                        deleted_obj = None
                    else:
                        if not exists:
                            log.info("key vanished from known objects; queueing a tombstone without object", key=key)
                            deleted_obj = None
                    queued_deletions += 1
                    self._queue_action(DELETED, DELETED, DeletedFinalStateUnknown(key, deleted_obj), key)

            if not self._populated:
                self._populated = True
                self._initial_population_count = len(keys) + queued_deletions
            self._cond.notify_all()

    def resync(self) -> None:
        """Queue ``Sync`` for every known object that has no pending deltas (they would be stale)."""
        if self._known is None:
            return
        with self._lock:
            for key in self._known.list_keys():
                try:
                    obj, exists = self._known.get_by_key(key)
                except Exception as e:
                    log.error("resync lookup failed", key=key, error=str(e))
                    continue
                if not exists or obj is None:
                    log.info("key does not exist in known objects store, unable to queue object for sync", key=key)
                    continue
                key = self.key_of(obj)
                if self._items.get(key):
                    continue  # a queued change is newer than what the cache holds
                self._queue_action(SYNC, SYNC, obj, key)

    def add_if_not_present(self, deltas: Deltas) -> None:
        """Put a popped ``Deltas`` back at the end of the queue unless its key was queued again meanwhile."""
        if not isinstance(deltas, Deltas):
            raise TypeError(f"add_if_not_present requires a Deltas object, got {type(deltas).__name__}")
        key = self.key_of(deltas)
        with self._lock:
            self._add_if_not_present(key, deltas)

    def _add_if_not_present(self, key: str, deltas: Deltas) -> None:
        self._populated = True
        if key in self._items:
            return
        self._queue.append(key)
        self._items[key] = deltas
        self._cond.notify()

    # -- consumer --------------------------------------------------------------------------------------------------
    def set_producer_process(self, process: Callable[[Deltas, bool], Any] | None,
                             on_error: Callable[[BaseException, str], None] | None = None,
                             process_one: Callable[[str, Any, bool], Any] | None = None) -> None:
        """Let ``add``/``update``/``delete`` process the item they queued themselves (``None`` turns it off) when it
        is the only one queued and a consumer is idle in ``pop``: that consumer would process it next anyway, so
        order, the queue lock and ``RequeueError`` work as in ``pop``; only the thread hand-off (and the time the
        object waits, going cold in the CPU caches) is saved. ``on_error(err, key)`` gets what ``pop`` would have raised.
        ``process_one(key, obj, is_in_initial_list)``, when given, must do what ``process`` does for a ``Deltas`` of
        one Added/Updated delta of ``obj``; ``add``/``update`` then call it instead, building no ``Deltas``.
        Only for a short ``process`` that never blocks: it holds up the producer (the reflector)."""
        with self._lock:
            self._producer_process = process
            self._producer_error = on_error
            self._producer_process_one = process_one if process is not None else None

    def _process_here_if_idle(self) -> bool:
        """Under the lock, right after a producer queued an item: process it now when nothing else is queued and a
        consumer waits. Returns whether it did."""
        if not self._waiters or len(self._queue) != 1 or self._closed:
            return False
        key = self._queue.popleft()
        self._process_in_producer(key, self._items.pop(key))
        return True

    def _process_in_producer(self, key: str, deltas: Deltas) -> None:
        """Process the item of ``key``, which a consumer would pop next (it is no longer queued), in this producer
        thread; errors go to ``on_error`` as ``pop`` would raise them."""
        is_in_initial_list = self._count_popped()
        try:
            self._producer_process(deltas, is_in_initial_list)  # type: ignore[misc]
        except Exception as e:
            self._producer_failed(key, deltas, e)

    def _producer_failed(self, key: str, deltas: Deltas, err: Exception) -> None:
        """What ``pop`` does when ``process`` raises, for an item processed by a producer: a ``RequeueError`` puts it
        back (for the waiting consumer); what ``pop`` would raise goes to ``on_error``."""
        try:
            self._after_failed_process(key, deltas, err)
        except _Requeued:
            return
        except Exception as e:
            if self._producer_error is not None:
                self._producer_error(e, key)

    def pop(self, process: Callable[[Deltas, bool], Any]) -> Deltas:
        """Block until an item is queued, remove it and run ``process(deltas, is_in_initial_list)`` under the lock.

        Raises ``FIFOClosedError`` once closed and drained. An exception from ``process`` drops the item and is
        raised here, except ``RequeueError``, which re-queues it (and raises its ``err`` when given).
        """
        with self._cond:
            self._wait_for_item_locked()
            try:
                return self._pop_one_locked(process)
            except _Requeued as requeued:
                return requeued.deltas

    def pop_batch(self, process: Callable[[Deltas, bool], Any], max_items: int = 64) -> int:
        """Like ``pop`` but, once an item is available, keeps popping (up to ``max_items``) without releasing the
        lock in between while more are queued. Returns how many items were processed. Each item gets exactly the
        treatment ``pop`` gives it; a ``process`` exception ends the batch and is raised as ``pop`` would, and a
        ``RequeueError`` without ``err`` ends it too (so a requeued item is not popped again at once)."""
        with self._cond:
            self._wait_for_item_locked()
            done = 0
            queue = self._queue
            while queue and done < max_items:
                done += 1
                try:
                    self._pop_one_locked(process)
                except _Requeued:
                    return done
            return done

    def _wait_for_item_locked(self) -> None:
        while not self._queue:
            if self._closed:
                raise FIFOClosedError()
            self._waiters += 1
            try:
                self._cond.wait()
            finally:
                self._waiters -= 1

    def _pop_one_locked(self, process: Callable[[Deltas, bool], Any]) -> Deltas:
        """Pop the head (the queue must not be empty) and process it; see ``pop`` for errors. A ``RequeueError``
        without ``err`` surfaces as ``_Requeued`` so that ``pop`` returns the deltas and ``pop_batch`` stops."""
        is_in_initial_list = self._count_popped()
        key = self._queue.popleft()
        deltas = self._items.pop(key)  # key in queue <=> key in items
        try:
            process(deltas, is_in_initial_list)
        except Exception as e:
            self._after_failed_process(key, deltas, e)
        return deltas

    def _count_popped(self) -> bool:
        """Under the lock, for an item leaving the queue to be processed: whether it belongs to the initial list
        (which ``has_synced`` waits for), counted as processed. ``add``/``update`` inline this for their fast path."""
        is_in_initial_list = not (self._populated and self._initial_population_count == 0)
        if self._initial_population_count > 0:
            self._initial_population_count -= 1
        return is_in_initial_list

    def _after_failed_process(self, key: str, deltas: Deltas, err: Exception) -> None:
        """A ``RequeueError`` puts the item back and raises its ``err``, or ``_Requeued`` without one; anything else
        is raised as it is (the item is dropped)."""
        if isinstance(err, RequeueError):
            self._add_if_not_present(key, deltas)
            if err.err is not None:
                raise err.err from err
            raise _Requeued(deltas) from None
        raise err

    # -- inspection ------------------------------------------------------------------------------------------------
    def has_synced(self) -> bool:
        """True once the first ``replace`` (or any earlier add/update/delete) was fully popped."""
        with self._lock:
            return self._populated and self._initial_population_count == 0

    def list_keys(self) -> list[str]:
        """Queued keys in queue order."""
        with self._lock:
            return list(self._queue)

    def list(self) -> list[Any]:
        """The newest object of every queued key, in queue order."""
        with self._lock:
            return [self._items[k][-1].object for k in self._queue]

    def get(self, obj: Obj) -> tuple[Deltas | None, bool]:
        return self.get_by_key(self.key_of(obj))

    def get_by_key(self, key: str) -> tuple[Deltas | None, bool]:
        """A copy of the pending deltas of ``key``."""
        with self._lock:
            deltas = self._items.get(key)
            return (Deltas(deltas), True) if deltas is not None else (None, False)

    def close(self) -> None:
        """Wake every blocked ``pop``; they drain what is queued, then raise ``FIFOClosedError``."""
        with self._lock:
            self._closed = True
            self._cond.notify_all()

    def is_closed(self) -> bool:
        with self._lock:
            return self._closed

    def __len__(self) -> int:
        return len(self._queue)
