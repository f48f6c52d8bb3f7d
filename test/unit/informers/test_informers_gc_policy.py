"""informers.gc_policy: GC paused around LISTs (nested, concurrent, restored on errors), one freeze per informer
after its initial sync, the daemon tuning helper; plus the hot-path fast paths it came with (namespace index,
lock-free listener hand-off)."""

from __future__ import annotations

import gc
import threading

import pytest
from informer_test_helpers import FakeClock, FakeWatch, pod
from testkit import wait_for

from informers import Indexer, ListWatch, SharedIndexInformer, gc_policy, wait_for_cache_sync
from informers.backoff import Backoff
from informers.controller import Config, Controller
from informers.delta_fifo import DeltaFIFO
from informers.index import NAMESPACE_INDEX, meta_namespace_index_func
from informers.processor import ADD_NOTIFICATION, UPDATE_NOTIFICATION, ProcessorListener
from informers.reflector import Reflector


@pytest.fixture(autouse=True)
def _restore_gc_state(monkeypatch):
    enabled, thresholds, policy = gc.isenabled(), gc.get_threshold(), gc_policy.current_policy()
    gc_policy._disarm_refreeze()  # start from "the policy has frozen nothing" (earlier tests ran informers)
    monkeypatch.setattr(gc_policy, "_froze", False)
    yield
    gc_policy._disarm_refreeze()
    assert gc_policy.pause_depth() == 0, "a test leaked a GC pause"
    gc_policy.configure(policy.pause_during_list, policy.freeze_after_sync)
    gc.set_threshold(*thresholds)
    (gc.enable if enabled else gc.disable)()


@pytest.fixture
def freezes(monkeypatch):
    """Counts gc.freeze() calls instead of freezing the test process."""
    calls: list[int] = []
    monkeypatch.setattr(gc_policy.gc, "freeze", lambda: calls.append(1))
    return calls


def test_pause_disables_and_restores_previous_state():
    gc.enable()
    with gc_policy.paused_gc(True):
        assert not gc.isenabled() and gc_policy.pause_depth() == 1
    assert gc.isenabled()
    gc.disable()
    with gc_policy.paused_gc(True):
        assert not gc.isenabled()
    assert not gc.isenabled()  # it was off before: stays off


def test_pause_restores_on_exception():
    gc.enable()
    with pytest.raises(RuntimeError, match="boom"), gc_policy.paused_gc(True):
        raise RuntimeError("boom")
    assert gc.isenabled() and gc_policy.pause_depth() == 0


def test_nested_pauses_restore_only_at_the_outermost_exit():
    gc.enable()
    with gc_policy.paused_gc(True):
        with gc_policy.paused_gc(True):
            assert gc_policy.pause_depth() == 2
        assert not gc.isenabled()
    assert gc.isenabled()


def test_overlapping_pauses_across_threads():
    gc.enable()
    entered = threading.Barrier(3, timeout=5)
    release_first = threading.Event()
    release_second = threading.Event()
    first_done = threading.Event()

    def pause(release, done=None):
        with gc_policy.paused_gc(True):
            entered.wait()
            assert release.wait(5)
        if done is not None:
            done.set()

    t1 = threading.Thread(target=pause, args=(release_first, first_done))
    t2 = threading.Thread(target=pause, args=(release_second,))
    t1.start()
    t2.start()
    entered.wait()
    assert gc_policy.pause_depth() == 2 and not gc.isenabled()
    release_first.set()
    assert first_done.wait(5)
    assert not gc.isenabled()  # the other thread still lists
    release_second.set()
    t1.join(5)
    t2.join(5)
    assert gc.isenabled() and gc_policy.pause_depth() == 0


def test_policy_opt_out_makes_pause_a_no_op():
    gc.enable()
    gc_policy.configure(pause_during_list=False)
    with gc_policy.paused_gc():
        assert gc.isenabled() and gc_policy.pause_depth() == 0
    with gc_policy.paused_gc(True):  # an explicit request still pauses
        assert not gc.isenabled()
    assert gc.isenabled()


def _reflector(list_func, store, **kwargs):
    clock = FakeClock()
    lw = ListWatch(list_func, lambda options: FakeWatch())
    return Reflector(lw, store, clock=clock, backoff=Backoff(clock=clock), **kwargs)


def test_reflector_lists_with_gc_paused_and_restores_it():
    gc.enable()
    seen = []

    def list_func(options):
        seen.append(gc.isenabled())
        return {"metadata": {"resourceVersion": "5"}, "items": [pod("a", "5")]}

    store = Indexer()
    _reflector(list_func, store)._list(threading.Event())
    assert seen == [False] and gc.isenabled()
    assert store.list_keys() == ["ns/a"]

    seen.clear()
    _reflector(list_func, Indexer(), pause_gc_during_list=False)._list(threading.Event())
    assert seen == [True]


def test_reflector_restores_gc_when_the_list_or_the_replace_fails():
    gc.enable()

    def failing_list(options):
        raise ConnectionError("apiserver down")

    with pytest.raises(ConnectionError, match="apiserver down"):
        _reflector(failing_list, Indexer())._list(threading.Event())
    assert gc.isenabled() and gc_policy.pause_depth() == 0

    class BrokenStore(Indexer):
        def replace(self, items, resource_version=""):
            assert not gc.isenabled()
            raise ValueError("cannot store")

    ok_list = lambda options: {"metadata": {"resourceVersion": "1"}, "items": []}  # noqa: E731
    with pytest.raises(RuntimeError, match="unable to sync list result"):
        _reflector(ok_list, BrokenStore())._list(threading.Event())
    assert gc.isenabled() and gc_policy.pause_depth() == 0


def test_freeze_collects_then_freezes_and_honours_the_policy(freezes):
    assert gc_policy.freeze_after_initial_sync("x") is True
    assert freezes == [1]
    with gc_policy.paused_gc(True):  # a LIST in progress elsewhere: not now
        assert gc_policy.freeze_after_initial_sync("x") is False
    gc_policy.configure(freeze_after_sync=False)
    assert gc_policy.freeze_after_initial_sync("x") is False
    assert freezes == [1]


def test_informer_freezes_once_after_its_initial_sync(freezes):
    watches: list[FakeWatch] = []

    def watch(options):
        watches.append(FakeWatch())
        return watches[-1]

    lw = ListWatch(lambda o: {"metadata": {"resourceVersion": "3"}, "items": [pod("a", "1"), pod("b", "2")]}, watch)
    clock = FakeClock()
    inf = SharedIndexInformer(lw, name="pods", reflector_options={"clock": clock, "backoff": Backoff(clock=clock)})
    stop = threading.Event()
    t = threading.Thread(target=inf.run, args=(stop,), daemon=True)
    t.start()
    try:
        assert wait_for_cache_sync(stop, inf.has_synced)
        for _ in range(500):
            if watches:
                break
            threading.Event().wait(0.01)
        assert watches
        for i in range(5):
            watches[0].modify(pod("a", str(10 + i)))
        for _ in range(500):
            if inf.last_sync_resource_version() == "14":
                break
            threading.Event().wait(0.01)
        assert inf.last_sync_resource_version() == "14"
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive()
    assert freezes == [1]


def test_controller_initial_sync_callback_runs_once_and_only_after_sync():
    fifo = DeltaFIFO(known_objects=Indexer())
    calls = []
    config = Config(queue=fifo, lister_watcher=None, process=lambda d, initial: None,
                    on_initial_sync=lambda: calls.append(fifo.has_synced()))
    controller = Controller(config)
    fifo.replace([pod("a", "1"), pod("b", "1")], "1")
    fifo.add(pod("c", "2"))
    fifo.close()
    controller._process_loop()  # drains the queue, then stops on the closed FIFO
    assert calls == [True]


def test_controller_lets_the_producer_process_only_after_the_initial_sync_callback():
    fifo = DeltaFIFO(known_objects=Indexer())
    during_callback: list = []
    processed_by: list[tuple[str, str]] = []
    config = Config(queue=fifo, lister_watcher=None, process_in_producer=True,
                    process=lambda d, initial: processed_by.append((d.key, threading.current_thread().name)),
                    on_initial_sync=lambda: during_callback.append(fifo._producer_process))
    controller = Controller(config)
    fifo.replace([pod("a", "1")], "1")
    loop = threading.Thread(target=controller._process_loop, name="consumer", daemon=True)
    loop.start()
    for _ in range(1000):
        if processed_by and fifo._waiters and fifo._producer_process is not None:
            break
        threading.Event().wait(0.005)
    fifo.add(pod("b", "2"))  # the consumer idles: this thread processes b
    fifo.close()
    loop.join(5)
    assert during_callback == [None]  # the initial list went through the consumer, the callback came first
    assert processed_by == [("ns/a", "consumer"), ("ns/b", threading.current_thread().name)]
    assert fifo._producer_process is None  # switched off when the loop ends


def test_tune_gc_for_controllers(freezes):
    previous = gc.get_threshold()
    assert gc_policy.tune_gc_for_controllers() == previous
    assert gc.get_threshold() == gc_policy.CONTROLLER_GC_THRESHOLDS
    assert freezes == [1]
    gc_policy.tune_gc_for_controllers((1000, 5, 5), freeze_startup_heap=False)
    assert gc.get_threshold() == (1000, 5, 5) and freezes == [1]
    with pytest.raises(ValueError, match="three non-negative ints"):
        gc_policy.tune_gc_for_controllers((1, 2))  # type: ignore[arg-type]


def test_namespace_index_stays_right_on_updates_and_deletes():
    idx = Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    idx.add(pod("a", "1", namespace="x"))
    idx.update(pod("a", "2", namespace="x"))
    idx.add(pod("a", "1", namespace="y"))
    assert [o["metadata"]["resourceVersion"] for o in idx.by_index(NAMESPACE_INDEX, "x")] == ["2"]
    idx.delete(pod("a", "2", namespace="x"))
    assert idx.by_index(NAMESPACE_INDEX, "x") == [] and idx.list_index_func_values(NAMESPACE_INDEX) == ["y"]
    # a custom key function may not encode the namespace: then the index is recomputed
    by_name = Indexer(lambda o: o["metadata"]["name"], {NAMESPACE_INDEX: meta_namespace_index_func})
    by_name.add(pod("a", "1", namespace="x"))
    by_name.update(pod("a", "2", namespace="y"))
    assert by_name.index_keys(NAMESPACE_INDEX, "y") == ["a"] and by_name.index_keys(NAMESPACE_INDEX, "x") == []


def test_listener_delivers_everything_appended_while_it_runs():
    got: list[str] = []
    done = threading.Event()
    n = 2000

    class Handler:
        def on_add(self, obj, is_in_initial_list):
            got.append(obj["metadata"]["name"])
            if len(got) == n:
                done.set()

        def on_update(self, old, new):
            self.on_add(new, False)

        def on_delete(self, obj):
            pass

    listener = ProcessorListener(Handler(), 0, 0, 0.0, lambda: True, name="t")
    listener.start()
    try:
        for i in range(n):  # no pauses: exercises the waiting/notify hand-off under contention
            listener.add(ADD_NOTIFICATION if i % 2 else UPDATE_NOTIFICATION, pod(str(i), "1"), pod(str(i), "1") if i % 2 == 0 else False)
            if i >= n // 2 and i % 50 == 0:  # then short pauses: the handler goes back to waiting many times
                threading.Event().wait(0.001)
        assert done.wait(10)
    finally:
        listener.stop()
        assert listener.join(5)
    assert got == [str(i) for i in range(n)]


def test_a_stopped_informer_is_reclaimed_although_its_heap_was_frozen():
    """A stopped informer is a reference cycle; frozen, it would never be collected (and its cache would leak)."""
    import weakref

    lw = ListWatch(lambda o: {"metadata": {"resourceVersion": "3"}, "items": [pod("a", "1"), pod("b", "2")]},
                   lambda o: FakeWatch())
    inf = SharedIndexInformer(lw, name="pods")
    stop = threading.Event()
    t = threading.Thread(target=inf.run, args=(stop,), daemon=True)
    t.start()
    assert wait_for_cache_sync(stop, inf.has_synced)
    # the freeze follows the sync in the controller thread
    wait_for("the informer to freeze the heap after its initial sync", gc.get_freeze_count, timeout=5)
    stop.set()
    t.join(10)
    assert not t.is_alive()
    alive = weakref.ref(inf)
    del inf, t
    gc.collect()
    assert alive() is None, "the stopped informer was not reclaimed"
    assert gc.get_freeze_count() > 0, "the survivors of the full collection should be frozen again"


def test_thaw_undoes_only_the_policys_own_freeze_and_refreezes_after_the_next_full_collection(freezes):
    assert gc_policy.thaw_after_stop("x") is False  # nothing frozen by the policy yet: a user's freeze is theirs
    assert gc_policy.freeze_after_initial_sync("x") is True
    assert freezes == [1]
    assert gc_policy.thaw_after_stop("x") is True
    assert gc_policy.thaw_after_stop("x") is False  # already thawed
    gc.collect(0)  # a young collection: not yet
    assert freezes == [1]
    with gc_policy.paused_gc(True):  # a LIST in progress: not during it either
        gc.collect()
    assert freezes == [1]
    gc.collect()
    assert freezes == [1, 1]
    gc.collect()
    assert freezes == [1, 1], "the re-freeze is one-shot"
    assert gc_policy.thaw_after_stop("x") is True
