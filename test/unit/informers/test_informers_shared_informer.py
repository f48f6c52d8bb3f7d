"""Port of client-go tools/cache shared_informer_test.go (release-1.32) plus the Python-specific guarantees."""

from __future__ import annotations

import threading

import pytest
from informer_test_helpers import (
    FakeClock,
    RecordingHandler,
    Source,
    pod,
    start,
    stop_and_join,
)
from testkit import wait_for
from testkit.logs import capture_library_logs

from informers import (
    REPLACED,
    SYNC,
    Delta,
    Deltas,
    InformerStartedError,
    InformerStoppedError,
    ResourceEventHandlerDetailedFuncs,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    wait_for_cache_sync,
)
from informers.backoff import Backoff
from informers.processor import ProcessorListener, SharedProcessor


def fast_reflector_options():
    clock = FakeClock()
    return {"clock": clock, "backoff": Backoff(clock=clock)}


def test_informer_delivers_list_and_watch_events_and_syncs():
    src = Source(pod("a", "1"), pod("b", "1"))
    inf = SharedIndexInformer(src.lw, name="pods", reflector_options=fast_reflector_options())
    rec = RecordingHandler()
    reg = inf.add_event_handler(rec)
    assert not inf.has_synced() and inf.last_sync_resource_version() == ""
    stop = threading.Event()
    t = start(inf, stop)
    assert wait_for_cache_sync(stop, inf.has_synced, reg.has_synced)
    wait_for("len(src.watches) == 1", lambda: len(src.watches) == 1)
    src.watches[0].add(pod("c", "11"))
    src.watches[0].modify(pod("a", "12"))
    src.watches[0].delete(pod("b", "13"))
    wait_for("len(rec.events) == 5", lambda: len(rec.events) == 5)
    assert rec.events == [("add", "a", True), ("add", "b", True), ("add", "c", False), ("update", "a", "12"),
                          ("delete", "b")]
    assert sorted(inf.get_store().list_keys()) == ["ns/a", "ns/c"]
    wait_for("inf.last_sync_resource_version() == '13'", lambda: inf.last_sync_resource_version() == "13")
    stop_and_join(stop, t)
    assert inf.is_stopped()
    with pytest.raises(InformerStoppedError, match="stopped already"):
        inf.add_event_handler(RecordingHandler())
    with pytest.raises(InformerStoppedError):
        inf.add_indexers({"x": lambda o: []})


def test_handler_added_after_start_gets_synthetic_adds_and_own_has_synced():
    src = Source(pod("a", "1"), pod("b", "1"))
    inf = SharedIndexInformer(src.lw, reflector_options=fast_reflector_options())
    stop = threading.Event()
    t = start(inf, stop)
    assert wait_for_cache_sync(stop, inf.has_synced)
    gate = threading.Event()
    rec = RecordingHandler(gate=gate)
    reg = inf.add_event_handler(rec)
    assert not reg.has_synced()  # its initial adds are not handled yet
    gate.set()
    wait_for("reg.has_synced", reg.has_synced)
    assert sorted(rec.events) == [("add", "a", True), ("add", "b", True)]
    with pytest.raises(InformerStartedError):
        inf.set_transform(lambda o: o)
    with pytest.raises(InformerStartedError):
        inf.set_watch_error_handler(lambda r, e: None)
    stop_and_join(stop, t)


def test_remove_event_handler():
    src = Source()
    inf = SharedIndexInformer(src.lw, reflector_options=fast_reflector_options())
    keep, gone = RecordingHandler(), RecordingHandler()
    inf.add_event_handler(keep)
    reg = inf.add_event_handler(gone)
    stop = threading.Event()
    t = start(inf, stop)
    wait_for("len(src.watches) == 1", lambda: len(src.watches) == 1)
    inf.remove_event_handler(reg)
    inf.remove_event_handler(reg)  # idempotent
    with pytest.raises(TypeError):
        inf.remove_event_handler("not a registration")
    src.watches[0].add(pod("x", "20"))
    wait_for("len(keep.events) == 1", lambda: len(keep.events) == 1)
    assert gone.events == []
    stop_and_join(stop, t)
    inf.remove_event_handler(reg)  # works on a stopped informer too


def test_slow_handler_does_not_delay_another():
    src = Source()
    inf = SharedIndexInformer(src.lw, reflector_options=fast_reflector_options())
    gate = threading.Event()
    slow, fast = RecordingHandler(gate=gate), RecordingHandler()
    inf.add_event_handler(slow)
    inf.add_event_handler(fast)
    stop = threading.Event()
    t = start(inf, stop)
    wait_for("len(src.watches) == 1", lambda: len(src.watches) == 1)
    for i in range(50):
        src.watches[0].add(pod(f"p{i}", str(100 + i)))
    wait_for("len(fast.events) == 50", lambda: len(fast.events) == 50)
    assert slow.events == []  # still stuck on its first notification
    gate.set()
    wait_for("len(slow.events) == 50", lambda: len(slow.events) == 50)
    assert [e[1] for e in slow.events] == [f"p{i}" for i in range(50)]  # in order per handler
    stop_and_join(stop, t)


def test_handler_exception_is_logged_with_key_and_delivery_continues():
    src = Source()
    inf = SharedIndexInformer(src.lw, reflector_options=fast_reflector_options())
    got = []

    def add(obj):
        if obj["metadata"]["name"] == "bad":
            raise RuntimeError("handler bug")
        got.append(obj["metadata"]["name"])

    inf.add_event_handler(ResourceEventHandlerFuncs(add_func=add))
    stop = threading.Event()
    t = start(inf, stop)
    wait_for("len(src.watches) == 1", lambda: len(src.watches) == 1)
    with capture_library_logs() as logs:
        src.watches[0].add(pod("bad", "1"))
        src.watches[0].add(pod("good", "2"))
        wait_for("got == ['good']", lambda: got == ["good"])
    errs = [entry for entry in logs if entry.get("log_level") == "error"]
    assert errs and errs[0]["key"] == "ns/bad" and errs[0]["notification"] == "add"
    stop_and_join(stop, t)


def test_transform_applied_before_cache_and_handlers():
    src = Source(pod("a", "1"))
    inf = SharedIndexInformer(src.lw, reflector_options=fast_reflector_options())

    def strip(obj):
        obj = dict(obj)
        obj["transformed"] = True
        return obj

    inf.set_transform(strip)
    seen = []
    inf.add_event_handler(ResourceEventHandlerFuncs(add_func=lambda o: seen.append(o.get("transformed"))))
    stop = threading.Event()
    t = start(inf, stop)
    assert wait_for_cache_sync(stop, inf.has_synced)
    wait_for("len(src.watches) == 1", lambda: len(src.watches) == 1)
    src.watches[0].add(pod("b", "2"))
    wait_for("seen == [True, True]", lambda: seen == [True, True])
    assert all(o.get("transformed") for o in inf.get_indexer().list())
    stop_and_join(stop, t)


def test_replaced_with_same_rv_goes_only_to_listeners_due_for_resync():
    src = Source()
    clock = FakeClock(start=0.0)
    inf = SharedIndexInformer(src.lw, 0, clock=clock)
    every, never = RecordingHandler(), RecordingHandler()
    inf._resync_check_period = 1.0
    inf.add_event_handler(every, resync_period=1.0)
    inf.add_event_handler(never)
    inf._processor.run()
    inf.get_indexer().add(pod("a", "1"))
    clock.t = 1.0
    assert inf._processor.should_resync()
    inf._handle_deltas(Deltas([Delta(REPLACED, pod("a", "1"))]), False)
    inf._handle_deltas(Deltas([Delta(SYNC, pod("a", "1"))]), False)
    inf._handle_deltas(Deltas([Delta(REPLACED, pod("a", "2"))]), False)
    wait_for("len(every.events) == 3 and len(never.events) == 1", lambda: len(every.events) == 3 and len(never.events) == 1)
    assert never.events == [("update", "a", "2")]
    inf._processor.stop()


def test_listener_resync_periods():
    clock = FakeClock(start=0.0)
    p = SharedProcessor(clock)
    listeners = [ProcessorListener(RecordingHandler(), period, period, 0.0, lambda: True) for period in (1.0, 2.0, 3.0, 0.0)]
    for listener in listeners:
        p.add_listener(listener)
    due_at = {}
    for second in range(1, 7):
        clock.t = float(second)
        p.should_resync()
        due_at[second] = [p._listeners[listener] for listener in listeners]
    assert due_at[1] == [True, False, False, False]
    assert due_at[2] == [True, True, False, False]
    assert due_at[3] == [True, False, True, False]
    assert due_at[6] == [True, True, True, False]


def test_resync_check_period_rules():
    src = Source()
    inf = SharedIndexInformer(src.lw, 60.0)
    h1 = inf.add_event_handler(RecordingHandler())  # default 60
    assert inf._resync_check_period == 60.0 and h1.resync_period == 60.0
    h2 = inf.add_event_handler(RecordingHandler(), 30.0)  # lowers the check period before start
    assert inf._resync_check_period == 30.0 and h2.resync_period == 30.0 and h1.resync_period == 60.0
    h3 = inf.add_event_handler(RecordingHandler(), 0.2)  # below the 1 s minimum
    assert h3.resync_period == 1.0 and inf._resync_check_period == 1.0
    h4 = inf.add_event_handler(RecordingHandler(), 0)
    assert h4.resync_period == 0
    inf._started = True  # after start a smaller period is raised to the check period
    inf._resync_check_period = 10.0
    h5 = inf.add_event_handler(RecordingHandler(), 5.0)
    assert h5.resync_period == 10.0
    inf._started = False


def test_detailed_funcs_get_initial_list_flag():
    src = Source(pod("a", "1"))
    inf = SharedIndexInformer(src.lw, reflector_options=fast_reflector_options())
    flags = []
    inf.add_event_handler(ResourceEventHandlerDetailedFuncs(add_func=lambda o, initial: flags.append(initial)))
    stop = threading.Event()
    t = start(inf, stop)
    wait_for("flags == [True]", lambda: flags == [True])
    stop_and_join(stop, t)


def test_add_indexers_while_running_and_multiple_registrations():
    src = Source(pod("a", "1", labels={"app": "x"}))
    inf = SharedIndexInformer(src.lw, reflector_options=fast_reflector_options())
    rec = RecordingHandler()
    r1 = inf.add_event_handler(rec)
    r2 = inf.add_event_handler(rec)  # same handler twice: two registrations
    assert r1 is not r2
    stop = threading.Event()
    t = start(inf, stop)
    assert wait_for_cache_sync(stop, inf.has_synced, r1.has_synced, r2.has_synced)
    inf.add_indexers({"app": lambda o: [o["metadata"].get("labels", {}).get("app", "")]})
    assert inf.get_indexer().index_keys("app", "x") == ["ns/a"]
    wait_for("len(rec.events) == 2", lambda: len(rec.events) == 2)
    inf.run(stop)  # a second run is a no-op
    stop_and_join(stop, t)


def test_wait_for_cache_sync_semantics():
    stop = threading.Event()
    stop.set()
    assert wait_for_cache_sync(stop, lambda: True)  # already synced: True even when stopped
    assert not wait_for_cache_sync(stop, lambda: False)
    stop2 = threading.Event()
    calls = []

    def eventually():
        calls.append(1)
        return len(calls) >= 3

    assert wait_for_cache_sync(stop2, eventually) and len(calls) == 3
    from informers import wait_for_named_cache_sync

    assert wait_for_named_cache_sync("ctrl", stop2, lambda: True)


class _Obj(dict):
    """A dict that can be weakly referenced, to watch when the informer lets go of it."""


def _run_informer_over_40_pods():
    src = Source(*(pod(f"p{i}", "1") for i in range(40)))
    inf = SharedIndexInformer(src.lw, name="pods")
    handler = RecordingHandler()
    inf.add_event_handler(handler)
    stop = threading.Event()
    return src, inf, handler, stop, start(inf, stop)


def test_replaced_objects_are_held_a_while_within_bounds_and_let_go_at_stop(monkeypatch):
    import weakref

    from informers import shared_informer

    monkeypatch.setattr(shared_informer, "MAX_HELD_REPLACED", 4)
    src, inf, handler, stop, t = _run_informer_over_40_pods()
    versions = {rv: _Obj(pod("a", str(rv))) for rv in range(2, 10)}
    refs = {rv: weakref.ref(obj) for rv, obj in versions.items()}
    try:
        assert wait_for_cache_sync(stop, inf.has_synced)
        wait_for("src.watches", lambda: src.watches)
        w = src.watches[0]
        w.add(versions.pop(2))
        for rv in range(3, 10):  # replaces versions 2..8
            w.modify(versions.pop(rv))
        wait_for("len(handler.snapshot()) == 40 + 8", lambda: len(handler.snapshot()) == 40 + 8)
        assert [rv for rv, ref in refs.items() if ref() is not None] == [5, 6, 7, 8, 9]  # 4 held, 9 cached
        for i in range(35):  # the cache shrinks to 6 objects: at most 6 // 8 = 0 may be held
            w.delete(pod(f"p{i}", "10"))
        wait_for("len(handler.snapshot()) == 40 + 8 + 35", lambda: len(handler.snapshot()) == 40 + 8 + 35)
        assert len(inf._replaced) == 0
        assert [rv for rv, ref in refs.items() if ref() is not None] == [9]
    finally:
        stop_and_join(stop, t)


def test_a_stopped_informer_holds_no_replaced_objects():
    import weakref

    src, inf, handler, stop, t = _run_informer_over_40_pods()
    replaced = _Obj(pod("p0", "2"))
    ref = weakref.ref(replaced)
    try:
        assert wait_for_cache_sync(stop, inf.has_synced)
        wait_for("src.watches", lambda: src.watches)
        src.watches[0].modify(replaced)
        del replaced
        src.watches[0].modify(pod("p0", "3"))
        wait_for("len(handler.snapshot()) == 42", lambda: len(handler.snapshot()) == 42)
        assert ref() is not None  # held: 1 of at most 40 // 8
    finally:
        stop_and_join(stop, t)
    assert ref() is None


def test_a_replaced_object_is_let_go_once_no_handler_references_it():
    """Held replaced objects are let go as soon as the handlers are done with them (here: at the next event), not
    only when the hold is full."""
    import weakref

    src = Source(*(pod(f"p{i}", "1") for i in range(40)))
    inf = SharedIndexInformer(src.lw, name="pods")
    seen = []
    inf.add_event_handler(ResourceEventHandlerFuncs(add_func=lambda obj: seen.append(obj["metadata"]["name"]),
                                                    update_func=lambda old, new: seen.append(new["metadata"]["name"])))
    stop = threading.Event()
    t = start(inf, stop)
    first = _Obj(pod("x", "2"))
    ref = weakref.ref(first)
    try:
        assert wait_for_cache_sync(stop, inf.has_synced)
        wait_for("src.watches", lambda: src.watches)
        w = src.watches[0]
        w.add(first)
        del first
        wait_for("len(seen) == 41", lambda: len(seen) == 41)
        w.modify(pod("x", "3"))  # replaces `first`; the handler may still be using it: it is held
        wait_for("len(seen) == 42", lambda: len(seen) == 42)
        assert ref() is not None
        w.modify(pod("p1", "4"))
        wait_for("len(seen) == 43", lambda: len(seen) == 43)
        assert ref() is None  # handled, so let go at the next event, although the hold (40 // 8) was not full
    finally:
        stop_and_join(stop, t)
