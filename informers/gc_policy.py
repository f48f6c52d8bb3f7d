"""How informers drive CPython's cyclic garbage collector (on by default; opt out with ``configure``).

Why: an informer cache holds tens of thousands of decoded objects, each a few dozen GC-tracked dicts and lists.
The cyclic GC repeatedly walks every live container, so with default thresholds decoding a large LIST is several
times slower, and every full collection walks the whole cache. Cached objects are acyclic JSON trees (orjson output:
dicts, lists, strings, numbers), so reference counting alone frees them when the cache drops them: the cyclic GC
finds nothing there and may skip them.

The policy:
- ``paused_gc()`` around each reflector LIST (request, decode, ``store.replace``): the GC is disabled while at least
  one pause is active in the process and restored to its previous state when the last one ends, also on errors.
  Pauses nest and may overlap across threads.
- ``freeze_after_initial_sync()`` once per informer, when its first LIST has been fully processed: one full
  collection, then ``gc.freeze()`` moves every surviving object (the cache included) to the permanent generation,
  which collections never walk. Later cache replacements are freed by reference counting.
- ``thaw_after_stop()`` when an informer stops: a stopped informer is a reference cycle (informer, controller,
  handlers), and a frozen cycle is never collected, so its whole cache would leak. The heap goes back to the
  oldest generation, and is frozen again right after the next full collection (which reclaims the informer once
  nothing references it).
- ``tune_gc_for_controllers()``: for daemons (``sedna-gm``) at start-up: larger generation thresholds, and the
  start-up heap (modules, config) frozen.
"""

from __future__ import annotations

import gc
import threading
from dataclasses import dataclass

from apis.logs import get_logger

__all__ = [
    "GCPolicy",
    "configure",
    "current_policy",
    "paused_gc",
    "pause_depth",
    "freeze_after_initial_sync",
    "thaw_after_stop",
    "tune_gc_for_controllers",
    "CONTROLLER_GC_THRESHOLDS",
]

log = get_logger(__name__)

CONTROLLER_GC_THRESHOLDS = (50_000, 20, 100)
"""gen-0 collections every 50,000 net container allocations (default 700): a watch event of a pod allocates ~30."""


@dataclass(frozen=True)
class GCPolicy:
    """``pause_during_list``: disable the GC while a reflector lists; ``freeze_after_sync``: ``gc.freeze()`` after
    an informer's initial sync."""

    pause_during_list: bool = True
    freeze_after_sync: bool = True


_policy = GCPolicy()
_lock = threading.Lock()
_depth = 0  # active pauses in this process
_restore_enabled = False  # whether the GC was enabled when the outermost pause began
_froze = False  # this policy has called gc.freeze() (a user's own freeze is never undone)


def configure(pause_during_list: bool | None = None, freeze_after_sync: bool | None = None) -> GCPolicy:
    """Change the process-wide policy (``None`` keeps a setting); returns the new policy."""
    global _policy
    with _lock:
        _policy = GCPolicy(
            _policy.pause_during_list if pause_during_list is None else bool(pause_during_list),
            _policy.freeze_after_sync if freeze_after_sync is None else bool(freeze_after_sync),
        )
        return _policy


def current_policy() -> GCPolicy:
    return _policy


def pause_depth() -> int:
    """How many pauses are active right now (for tests and diagnostics)."""
    return _depth


class _PausedGC:
    """Context manager behind ``paused_gc``; reference-counted across threads."""

    __slots__ = ("_active",)

    def __init__(self, active: bool) -> None:
        self._active = active

    def __enter__(self) -> _PausedGC:
        global _depth, _restore_enabled
        if self._active:
            with _lock:
                if _depth == 0:
                    _restore_enabled = gc.isenabled()
                    gc.disable()
                _depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        global _depth
        if self._active:
            with _lock:
                _depth -= 1
                if _depth == 0 and _restore_enabled:
                    gc.enable()


def paused_gc(enabled: bool | None = None) -> _PausedGC:
    """Disable the cyclic GC for a ``with`` block (see the module doc); ``enabled=None`` follows the policy's
    ``pause_during_list``, ``False`` makes the block a no-op."""
    if enabled is None:
        enabled = _policy.pause_during_list
    return _PausedGC(enabled)


def freeze_after_initial_sync(name: str = "") -> bool:
    """Collect once, then ``gc.freeze()`` (when the policy allows); returns whether it froze. Callers call it once
    per informer. Not while a pause is active (a LIST elsewhere would otherwise be frozen half-built: harmless, but
    the collection would be wasted): then the next informer to sync does it."""
    global _froze
    if not _policy.freeze_after_sync:
        return False
    with _lock:
        if _depth:
            return False
        _disarm_refreeze()  # this collection and freeze do its job
        gc.collect()
        gc.freeze()
        _froze = True
    log.debug("initial sync done; froze the heap out of the cyclic GC", informer=name, frozen=gc.get_freeze_count())
    return True


def tune_gc_for_controllers(
    thresholds: tuple[int, int, int] = CONTROLLER_GC_THRESHOLDS, freeze_startup_heap: bool = True
) -> tuple[int, int, int]:
    """For a controller daemon, once at start-up: raise the GC thresholds and freeze what start-up allocated.
    Returns the previous thresholds."""
    if len(thresholds) != 3 or any(not isinstance(t, int) or t < 0 for t in thresholds):
        raise ValueError(f"thresholds must be three non-negative ints, got {thresholds!r}")
    global _froze
    previous = gc.get_threshold()
    gc.set_threshold(*thresholds)
    if freeze_startup_heap:
        with _lock:
            _disarm_refreeze()
            gc.collect()
            gc.freeze()
            _froze = True
    return previous


def thaw_after_stop(name: str = "") -> bool:
    """Unfreeze what this policy froze, so that a stopped informer can be reclaimed; the survivors of the next full
    collection are frozen again. Returns whether it unfroze. Callers call it when an informer stops."""
    global _froze
    with _lock:
        if not _froze:
            return False
        _froze = False
        gc.unfreeze()
        if _refreeze_after_full_collection not in gc.callbacks:
            gc.callbacks.append(_refreeze_after_full_collection)
    log.debug("informer stopped; unfroze the heap until the next full collection", informer=name)
    return True


def _disarm_refreeze() -> None:
    try:
        gc.callbacks.remove(_refreeze_after_full_collection)
    except ValueError:
        pass


def _refreeze_after_full_collection(phase: str, info: dict[str, int]) -> None:
    """A ``gc.callbacks`` hook armed by ``thaw_after_stop``: after the next full collection, freeze its survivors.
    Takes no lock: it runs inside whatever thread triggered the collection (possibly one holding ``_lock``)."""
    global _froze
    if phase != "stop" or info.get("generation") != 2 or _depth:
        return  # during a LIST, wait for a later collection rather than freeze a half-built cache
    _disarm_refreeze()
    if _policy.freeze_after_sync:
        gc.freeze()
        _froze = True
