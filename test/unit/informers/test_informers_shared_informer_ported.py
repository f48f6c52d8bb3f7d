"""More ports of client-go tools/cache shared_informer_test.go (release-1.32): watch disruption, state, handlers
added while active; plus the resync/update decision for objects that are dict subclasses."""

from __future__ import annotations

import threading

from informer_test_helpers import (
    FakeClock,
    RecordingHandler,
    Source,
    pod,
    start,
    status,
    stop_and_join,
)
from testkit import wait_for

from informers import DeletedFinalStateUnknown, SharedIndexInformer, wait_for_cache_sync
from informers.backoff import Backoff
from informers.processor import ProcessorListener, SharedProcessor
from informers.shared_informer import is_resync


class Listener(RecordingHandler):
    """Records a tombstone delete as ("delete-tombstone", key, last known rv)."""

    def on_delete(self, obj):
        if isinstance(obj, DeletedFinalStateUnknown):
            self._rec(("delete-tombstone", obj.key, obj.obj["metadata"]["resourceVersion"]))
        else:
            self._rec(("delete", obj["metadata"]["name"]))


class View(dict):
    """A dict subclass, e.g. a typed view returned by a transform."""


def test_is_sync_needs_metadata_on_both_and_equal_rvs():
    assert is_resync(pod("a", "1"), pod("a", "1"))
    assert is_resync(View(pod("a", "1")), View(pod("a", "1")))
    assert not is_resync(View(pod("a", "1")), View(pod("a", "2")))
    assert not is_resync(pod("a", "1"), View(pod("a", "2")))
    assert not is_resync(object(), object())  # no object metadata: never a resync
    assert not is_resync({"metadata": "bad"}, {"metadata": "bad"})


def test_updates_of_dict_subclass_objects_reach_non_resyncing_handlers():
    src = Source(pod("a", "1"))
    clock = FakeClock()
    inf = SharedIndexInformer(src.lw, reflector_options={"clock": clock, "backoff": Backoff(clock=clock)})
    inf.set_transform(View)
    listener = Listener()
    inf.add_event_handler(listener)
    stop = threading.Event()
    t = start(inf, stop)
    assert wait_for_cache_sync(stop, inf.has_synced)
    wait_for("len(src.watches) == 1", lambda: len(src.watches) == 1)
    src.watches[0].modify(pod("a", "2"))
    wait_for("len(listener.snapshot()) == 2", lambda: len(listener.snapshot()) == 2)
    assert listener.snapshot() == [("add", "a", True), ("update", "a", "2")]
    assert type(inf.get_indexer().get_by_key("ns/a")[0]) is View
    stop_and_join(stop, t)


def test_shared_informer_watch_disruption():
    """Port of TestSharedInformerWatchDisruption, plus an object deleted while the watch was down."""
    src = Source(pod("pod1", "1"), pod("pod2", "2"), pod("gone", "3"))
    clock = FakeClock(start=0.0)
    inf = SharedIndexInformer(src.lw, 1.0, clock=clock,
                              reflector_options={"clock": clock, "backoff": Backoff(clock=clock)})
    no_resync, resync = Listener(), Listener()
    inf.add_event_handler(no_resync, 0)
    inf.add_event_handler(resync, 1.0)
    stop = threading.Event()
    t = start(inf, stop)
    initial = {("add", "pod1", True), ("add", "pod2", True), ("add", "gone", True)}
    wait_for("set(no_resync.snapshot()) == initial and set(resync.snapshot()) == initial", lambda: set(no_resync.snapshot()) == initial and set(resync.snapshot()) == initial)
    wait_for("len(src.watches) == 1", lambda: len(src.watches) == 1)

    # changes the watch never delivers: seen only by the relist
    src.objs = [pod("pod1", "1"), pod("pod2", "4"), pod("pod3", "5")]
    src.rv = "20"

    # the resync timer fires: only the resyncing listener is marked as syncing, and gets the cache re-delivered
    clock.t += 1.0
    resynced = {("update", "pod1", "1"), ("update", "pod2", "2"), ("update", "gone", "3")}
    wait_for("set(resync.snapshot()[3:]) == resynced", lambda: set(resync.snapshot()[3:]) == resynced)
    assert no_resync.snapshot()[3:] == []

    # the connection is lost (too-old watch): back off, relist, Replace
    src.watches[0].error(status(410, "Expired", "too old resource version"))
    changes = [("update", "pod2", "4"), ("add", "pod3", False), ("delete-tombstone", "ns/gone", "3")]
    wait_for("len(no_resync.snapshot()) == 3 + len(changes)", lambda: len(no_resync.snapshot()) == 3 + len(changes))
    wait_for("len(resync.snapshot()) == 6 + 1 + len(changes)", lambda: len(resync.snapshot()) == 6 + 1 + len(changes))
    assert src.lists == 2
    assert no_resync.snapshot()[3:] == changes  # the unchanged pod1 is not re-delivered to it
    assert resync.snapshot()[6:] == [("update", "pod1", "1"), *changes]  # but is to the resyncing listener
    assert sorted(inf.get_indexer().list_keys()) == ["ns/pod1", "ns/pod2", "ns/pod3"]
    stop_and_join(stop, t)


def test_state_shared_informer():
    """Port of TestStateSharedInformer: started / stopped transitions."""
    src = Source(pod("pod1", "1"))
    clock = FakeClock()
    inf = SharedIndexInformer(src.lw, 1.0, reflector_options={"clock": clock, "backoff": Backoff(clock=clock)})
    listener = Listener()
    reg = inf.add_event_handler(listener, 0)
    assert not inf.has_started() and not inf.is_stopped()
    stop = threading.Event()
    t = start(inf, stop)
    wait_for("listener.snapshot() == [('add', 'pod1', True)]", lambda: listener.snapshot() == [("add", "pod1", True)])
    assert inf.has_started() and not inf.is_stopped()
    wait_for("reg.has_synced", reg.has_synced)
    stop_and_join(stop, t)
    assert inf.is_stopped() and inf.has_started()


def test_blocked_handler_registered_before_start_is_not_synced_while_the_informer_is():
    src = Source(pod("pod1", "1"), pod("pod2", "1"))
    clock = FakeClock()
    inf = SharedIndexInformer(src.lw, reflector_options={"clock": clock, "backoff": Backoff(clock=clock)})
    gate = threading.Event()
    blocked = Listener(gate=gate)
    reg = inf.add_event_handler(blocked)
    assert not reg.has_synced()
    stop = threading.Event()
    t = start(inf, stop)
    try:
        assert wait_for_cache_sync(stop, inf.has_synced)
        assert inf.has_synced() and not reg.has_synced()  # its initial adds are still being handled
    finally:
        gate.set()
    wait_for("reg.has_synced", reg.has_synced)
    assert sorted(blocked.snapshot()) == [("add", "pod1", True), ("add", "pod2", True)]
    stop_and_join(stop, t)


def test_add_while_active():
    """Port of TestAddWhileActive."""
    src = Source()
    clock = FakeClock()
    inf = SharedIndexInformer(src.lw, 0, reflector_options={"clock": clock, "backoff": Backoff(clock=clock)})
    listener1 = Listener()
    handle1 = inf.add_event_handler(listener1)
    assert not handle1.has_synced()  # synced before run?
    stop = threading.Event()
    t = start(inf, stop)
    wait_for("len(src.watches) == 1", lambda: len(src.watches) == 1)
    src.watches[0].add(pod("pod1", "11"))
    wait_for("listener1.snapshot() == [('add', 'pod1', False)]", lambda: listener1.snapshot() == [("add", "pod1", False)])
    assert handle1.has_synced()

    gate = threading.Event()
    listener2 = Listener(gate=gate)  # observed before it has synced
    try:
        handle2 = inf.add_event_handler(listener2)
        assert not handle2.has_synced()  # synced before processing anything?
    finally:
        gate.set()
    src.watches[0].add(pod("pod2", "12"))
    wait_for("listener2.snapshot() == [('add', 'pod1', True), ('add', 'pod2', False)]", lambda: listener2.snapshot() == [("add", "pod1", True), ("add", "pod2", False)])
    assert handle2.has_synced()
    assert handle1 in inf._processor.listeners() and handle2 in inf._processor.listeners()
    wait_for("listener1.snapshot() == [('add', 'pod1', False), ('add', 'pod2', False)]", lambda: listener1.snapshot() == [("add", "pod1", False), ("add", "pod2", False)])
    stop_and_join(stop, t)


def test_processor_stop_gives_all_listener_joins_one_deadline(monkeypatch):
    import informers.processor as processor_module

    fake_now = [100.0]

    class FakeTime:
        @staticmethod
        def monotonic():
            return fake_now[0]

    monkeypatch.setattr(processor_module, "time", FakeTime)
    processor = SharedProcessor(FakeClock())
    timeouts = []

    class StuckListener(ProcessorListener):
        def join(self, timeout=None):  # its handler never returns: the whole timeout passes
            timeouts.append(timeout)
            fake_now[0] += timeout
            return False

    for _ in range(3):
        processor.add_listener(StuckListener(Listener(), 0, 0, 0.0, lambda: True))
    processor.stop(join_timeout=5.0)
    assert timeouts == [5.0, 0.0, 0.0]  # what is left of one deadline, not 5 s each
