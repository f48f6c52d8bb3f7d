"""Port of client-go tools/cache/delta_fifo_test.go (release-1.32)."""

from __future__ import annotations

import threading

import pytest
from informer_test_helpers import LiteralListerGetter, known, mk

from informers import (
    ADDED,
    DELETED,
    REPLACED,
    SYNC,
    UPDATED,
    DeletedFinalStateUnknown,
    Delta,
    DeltaFIFO,
    Deltas,
    FIFOClosedError,
    ObjectKeyError,
    RequeueError,
)


def pop(f: DeltaFIFO) -> Deltas:
    return f.pop(lambda d, initial: None)



def test_delta_types_compare_equal_to_strings():
    assert ADDED == "Added" and UPDATED == "Updated" and DELETED == "Deleted"
    assert REPLACED == "Replaced" and SYNC == "Sync"
    assert str(SYNC) == "Sync"
    assert Delta("Added", 1) == Delta(ADDED, 1)


def test_basic():
    f = DeltaFIFO()
    n = 50
    results: list = []

    def produce(start):
        for i in range(start, start + n):
            f.add(mk(f"a{i}", i))

    t1 = threading.Thread(target=produce, args=(0,))
    t2 = threading.Thread(target=produce, args=(1000,))
    t1.start(), t2.start()
    for _ in range(2 * n):
        d = pop(f)
        assert len(d) == 1 and d[0].type == ADDED
        results.append(d.newest().object["val"])
    t1.join(5), t2.join(5)
    assert sorted(results) == list(range(n)) + list(range(1000, 1000 + n))


def test_requeue_on_pop():
    f = DeltaFIFO()
    f.add(mk("foo", 10))

    def requeue(d, initial):
        assert d[0].object == mk("foo", 10)
        raise RequeueError()

    assert pop_with(f, requeue)[0].object == mk("foo", 10)
    assert f.get_by_key("foo")[1]

    err = ValueError("test error")

    def requeue_err(d, initial):
        raise RequeueError(err)

    with pytest.raises(ValueError, match="test error"):
        f.pop(requeue_err)
    assert f.get_by_key("foo")[1]

    def fail(d, initial):
        raise RuntimeError("dropped")

    with pytest.raises(RuntimeError):
        f.pop(fail)
    assert not f.get_by_key("foo")[1]


def pop_with(f, fn):
    return f.pop(fn)


def test_add_update():
    f = DeltaFIFO()
    f.add(mk("foo", 10))
    f.update(mk("foo", 12))
    f.delete(mk("foo", 15))
    assert f.list() == [mk("foo", 15)]
    assert f.list_keys() == ["foo"]
    got = pop(f)
    assert got == [Delta(ADDED, mk("foo", 10)), Delta(UPDATED, mk("foo", 12)), Delta(DELETED, mk("foo", 15))]
    assert f.get_by_key("foo") == (None, False)


def test_transformer():
    calls = []

    def transform(obj):
        if isinstance(obj, DeletedFinalStateUnknown):
            raise AssertionError("tombstones must not be transformed")
        calls.append(obj["metadata"]["name"])
        return dict(obj, val=obj["val"] + 1)

    k = known(mk("foo", 10), mk("bar", 11))
    f = DeltaFIFO(known_objects=k, transformer=transform, emit_delta_type_replaced=True)
    f.add(mk("foo", 10))
    f.update(mk("foo", 11))
    f.replace([mk("baz", 1)], "")  # bar vanishes -> tombstone, not transformed
    assert pop(f) == [Delta(ADDED, mk("foo", 11)), Delta(UPDATED, mk("foo", 12)),
                      Delta(DELETED, DeletedFinalStateUnknown("foo", mk("foo", 12)))]
    assert pop(f) == [Delta(REPLACED, mk("baz", 2))]
    assert pop(f) == [Delta(DELETED, DeletedFinalStateUnknown("bar", mk("bar", 11)))]
    calls.clear()
    f.resync()  # Sync deltas carry already-transformed objects
    assert calls == []
    assert pop(f)[0].type == SYNC


def test_enqueueing_no_lister():
    f = DeltaFIFO()
    f.add(mk("foo", 10))
    f.update(mk("bar", 15))
    f.delete(mk("baz", 20))  # unknown and not queued: ignored
    assert f.list_keys() == ["foo", "bar"]
    assert pop(f) == [Delta(ADDED, mk("foo", 10))]
    assert pop(f) == [Delta(UPDATED, mk("bar", 15))]
    assert f.list_keys() == []


def test_enqueueing_with_lister():
    f = DeltaFIFO(known_objects=known(mk("foo", 5), mk("bar", 6), mk("baz", 7)))
    f.add(mk("foo", 10))
    f.update(mk("bar", 15))
    f.delete(mk("baz", 20))  # known: queued
    f.delete(mk("qux", 1))  # unknown: ignored
    expected = [10, 15, 20]
    for v in expected:
        assert pop(f).newest().object["val"] == v


def test_delete_existing_non_propagated():
    f = DeltaFIFO()
    f.add(mk("foo", 5))
    f.delete(mk("foo", 6))
    assert pop(f) == [Delta(ADDED, mk("foo", 5)), Delta(DELETED, mk("foo", 6))]


def test_only_two_consecutive_deletes_collapse():
    f = DeltaFIFO(known_objects=known(mk("foo", 1)))
    f.delete(mk("foo", 2))
    f.delete(DeletedFinalStateUnknown("foo", mk("foo", 3)))
    assert f.get_by_key("foo")[0] == [Delta(DELETED, mk("foo", 2))]  # the real object wins over a tombstone
    f2 = DeltaFIFO(known_objects=known(mk("foo", 1)))
    f2.delete(DeletedFinalStateUnknown("foo", mk("foo", 3)))
    f2.delete(mk("foo", 4))
    assert f2.get_by_key("foo")[0] == [Delta(DELETED, mk("foo", 4))]  # a tombstone gives way to the newer one
    f3 = DeltaFIFO()
    f3.add(mk("foo", 1))
    f3.add(mk("foo", 1))
    f3.update(mk("foo", 1))
    assert len(f3.get_by_key("foo")[0]) == 3  # nothing else collapses


def test_replace_with_delete_delta_in():
    f = DeltaFIFO(known_objects=known(mk("foo", 5)))
    f.delete(mk("foo", 10))
    f.replace([mk("foo", 6)], "")
    assert pop(f) == [Delta(DELETED, mk("foo", 10)), Delta(SYNC, mk("foo", 6))]


def test_replace_makes_deletions_for_objects_only_in_queue():
    f = DeltaFIFO(known_objects=known(), emit_delta_type_replaced=True)
    f.add(mk("foo", 1))
    f.add(mk("bar", 2))
    f.replace([mk("bar", 3)], "")
    assert pop(f) == [Delta(ADDED, mk("foo", 1)), Delta(DELETED, DeletedFinalStateUnknown("foo", mk("foo", 1)))]
    assert pop(f) == [Delta(ADDED, mk("bar", 2)), Delta(REPLACED, mk("bar", 3))]


def test_replace_makes_deletions():
    def fresh():
        return DeltaFIFO(known_objects=known(mk("foo", 5), mk("bar", 6), mk("baz", 7)))

    f = fresh()
    f.delete(mk("baz", 10))
    f.replace([mk("foo", 5)], "0")
    assert [pop(f) for _ in range(3)] == [
        [Delta(DELETED, mk("baz", 10))],
        [Delta(SYNC, mk("foo", 5))],
        [Delta(DELETED, DeletedFinalStateUnknown("bar", mk("bar", 6)))],
    ]

    f = fresh()
    f.add(mk("baz", 10))
    f.replace([mk("foo", 5)], "0")
    assert [pop(f) for _ in range(3)] == [
        [Delta(ADDED, mk("baz", 10)), Delta(DELETED, DeletedFinalStateUnknown("baz", mk("baz", 10)))],
        [Delta(SYNC, mk("foo", 5))],
        [Delta(DELETED, DeletedFinalStateUnknown("bar", mk("bar", 6)))],
    ]

    f = fresh()
    f.delete(mk("bar", 6))
    f.add(mk("bar", 100))
    f.replace([mk("foo", 5)], "0")
    assert [pop(f) for _ in range(3)] == [
        [Delta(DELETED, mk("bar", 6)), Delta(ADDED, mk("bar", 100)),
         Delta(DELETED, DeletedFinalStateUnknown("bar", mk("bar", 100)))],
        [Delta(SYNC, mk("foo", 5))],
        [Delta(DELETED, DeletedFinalStateUnknown("baz", mk("baz", 7)))],
    ]

    f = fresh()
    f.replace([mk("bar", 100), mk("foo", 5)], "0")
    f.replace([mk("foo", 5)], "0")
    assert [pop(f) for _ in range(3)] == [
        [Delta(SYNC, mk("bar", 100)), Delta(DELETED, DeletedFinalStateUnknown("bar", mk("bar", 100)))],
        [Delta(SYNC, mk("foo", 5)), Delta(SYNC, mk("foo", 5))],
        [Delta(DELETED, DeletedFinalStateUnknown("baz", mk("baz", 7)))],
    ]

    f = DeltaFIFO()  # no known objects
    f.add(mk("baz", 10))
    f.replace([mk("foo", 5)], "0")
    assert [pop(f) for _ in range(2)] == [
        [Delta(ADDED, mk("baz", 10)), Delta(DELETED, DeletedFinalStateUnknown("baz", mk("baz", 10)))],
        [Delta(SYNC, mk("foo", 5))],
    ]


def test_replace_makes_deletions_replaced():
    f = DeltaFIFO(known_objects=known(mk("foo", 5), mk("bar", 6), mk("baz", 7)), emit_delta_type_replaced=True)
    f.delete(mk("baz", 10))
    f.replace([mk("foo", 6)], "0")
    assert [pop(f) for _ in range(3)] == [
        [Delta(DELETED, mk("baz", 10))],
        [Delta(REPLACED, mk("foo", 6))],
        [Delta(DELETED, DeletedFinalStateUnknown("bar", mk("bar", 6)))],
    ]


def test_replace_tombstone_without_known_object():
    class Broken(LiteralListerGetter):
        def get_by_key(self, key):
            raise RuntimeError("boom")

    f = DeltaFIFO(known_objects=Broken(lambda: [mk("gone", 1)]))
    f.replace([], "0")
    assert pop(f) == [Delta(DELETED, DeletedFinalStateUnknown("gone", None))]


def test_replace_delta_type():
    f = DeltaFIFO(known_objects=known(mk("foo", 5)))
    f.replace([mk("foo", 5)], "0")
    assert pop(f) == [Delta(SYNC, mk("foo", 5))]
    f = DeltaFIFO(known_objects=known(mk("foo", 5)), emit_delta_type_replaced=True)
    f.replace([mk("foo", 5)], "0")
    assert pop(f) == [Delta(REPLACED, mk("foo", 5))]


def test_add_replace():
    f = DeltaFIFO()
    f.add(mk("foo", 10))
    f.replace([mk("foo", 15)], "0")
    got: list = []

    def take():
        got.append(pop(f))

    t = threading.Thread(target=take)
    t.start()
    t.join(5)
    assert got == [[Delta(ADDED, mk("foo", 10)), Delta(SYNC, mk("foo", 15))]]
    assert f.get_by_key("foo") == (None, False)


def test_resync_non_existing():
    f = DeltaFIFO(known_objects=known(mk("foo", 5)))
    f.delete(mk("foo", 10))
    f.resync()
    assert f.get_by_key("foo")[0] == [Delta(DELETED, mk("foo", 10))]


def test_resync():
    f = DeltaFIFO(known_objects=known(mk("foo", 5)))
    f.resync()
    assert f.get_by_key("foo")[0] == [Delta(SYNC, mk("foo", 5))]
    assert DeltaFIFO().resync() is None  # no known objects: nothing to do


def test_update_resync_race():
    f = DeltaFIFO(known_objects=known(mk("foo", 5)))
    f.update(mk("foo", 6))
    f.resync()  # a pending update is newer than the cache: no Sync
    assert pop(f) == [Delta(UPDATED, mk("foo", 6))]


def test_has_synced_correct_on_deletion():
    f = DeltaFIFO(known_objects=known(mk("foo", 5), mk("bar", 6), mk("baz", 7)))
    f.replace([mk("foo", 5)], "0")
    expected = [[Delta(SYNC, mk("foo", 5))],
                [Delta(DELETED, DeletedFinalStateUnknown("bar", mk("bar", 6)))],
                [Delta(DELETED, DeletedFinalStateUnknown("baz", mk("baz", 7)))]]
    for e in expected:
        assert not f.has_synced()
        assert pop(f) == e
    assert f.has_synced()


@pytest.mark.parametrize(
    "actions,synced",
    [
        ([], False),
        ([lambda f: f.add(mk("a", 1))], True),
        ([lambda f: f.replace([], "0")], True),
        ([lambda f: f.replace([mk("a", 1), mk("b", 2)], "0")], False),
        ([lambda f: f.replace([mk("a", 1), mk("b", 2)], "0"), pop], False),
        ([lambda f: f.replace([mk("a", 1), mk("b", 2)], "0"), pop, pop], True),
        ([lambda f: f.replace([mk("a", 1), mk("a", 2)], "0"), pop], True),  # duplicate keys count once
    ],
)
def test_has_synced(actions, synced):
    f = DeltaFIFO()
    for a in actions:
        a(f)
    assert f.has_synced() is synced


def test_is_in_initial_list_flag():
    f = DeltaFIFO()
    f.replace([mk("a", 1), mk("b", 2)], "0")
    flags = []
    f.add(mk("c", 3))
    for _ in range(3):
        f.pop(lambda d, initial: flags.append(initial))
    assert flags == [True, True, False]


def test_detect_line_jumpers():
    f = DeltaFIFO()
    f.add(mk("foo", 10))
    f.add(mk("bar", 1))
    f.add(mk("foo", 11))
    f.add(mk("foo", 13))
    f.add(mk("zab", 30))
    assert pop(f).newest().object["val"] == 13
    f.add(mk("foo", 14))  # ensure foo does not jump ahead of bar / zab
    assert pop(f).newest().object["val"] == 1
    assert pop(f).newest().object["val"] == 30
    assert pop(f).newest().object["val"] == 14


def test_add_if_not_present():
    f = DeltaFIFO()
    f.add(mk("b", 3))
    b3 = pop(f)
    f.add(mk("c", 4))
    f.add_if_not_present(b3)
    f.add(mk("b", 5))  # appended to b's queued deltas, b keeps its place
    assert pop(f) == [Delta(ADDED, mk("c", 4))]
    assert pop(f) == [Delta(ADDED, mk("b", 3)), Delta(ADDED, mk("b", 5))]
    with pytest.raises(TypeError):
        f.add_if_not_present(mk("x", 1))


def test_key_of():
    f = DeltaFIFO()
    table = [
        (mk("A"), "A"),
        (DeletedFinalStateUnknown("B", mk("B")), "B"),
        (Deltas([Delta(ADDED, mk("C"))]), "C"),
        (Deltas([Delta(ADDED, mk("D")), Delta(DELETED, DeletedFinalStateUnknown("D", mk("D")))]), "D"),
        (mk("E", namespace="ns"), "ns/E"),
    ]
    for obj, key in table:
        assert f.key_of(obj) == key
    with pytest.raises(ObjectKeyError, match="0 length Deltas"):
        f.key_of(Deltas())
    with pytest.raises(ObjectKeyError, match="no meta"):
        f.key_of(42)


def test_pop_should_unblock_when_closed():
    f = DeltaFIFO()
    errors: list = []

    def waiter():
        try:
            pop(f)
        except FIFOClosedError as e:
            errors.append(e)

    threads = [threading.Thread(target=waiter) for _ in range(3)]
    for t in threads:
        t.start()
    f.close()
    for t in threads:
        t.join(5)
        assert not t.is_alive()
    assert len(errors) == 3 and f.is_closed()


def test_pop_drains_after_close():
    f = DeltaFIFO()
    f.add(mk("a", 1))
    f.close()
    assert pop(f) == [Delta(ADDED, mk("a", 1))]
    with pytest.raises(FIFOClosedError):
        pop(f)


def test_process_runs_under_the_lock():
    f = DeltaFIFO()
    f.add(mk("a", 1))
    blocked = []

    def process(d, initial):
        t = threading.Thread(target=lambda: blocked.append(f._lock.acquire(timeout=0.05)))
        t.start()
        t.join(5)

    f.pop(process)
    assert blocked == [False]


def test_requeue_keeps_initial_population_decremented():
    f = DeltaFIFO()
    f.replace([mk("a", 1)], "0")

    def requeue(d, initial):
        raise RequeueError()

    f.pop(requeue)
    assert f.has_synced()  # client-go decrements before processing; the requeued item does not count again
    assert f.list_keys() == ["a"]


def _only_in_queue_cases():
    obj, obj_v2 = mk("foo", 2), mk("foo", 3)
    tomb = DeletedFinalStateUnknown("foo", obj)

    def added(f):
        f.add(obj)
        f.replace([], "0")

    def replaced(f):
        f._emit_replaced = True
        f.add(obj)
        f.replace([obj], "0")
        f.replace([], "0")

    def deleted(f):
        f.add(obj)
        f.delete(obj)
        f.replace([], "0")

    def synced(f):
        f.add(obj)
        f.replace([obj], "0")
        f.replace([obj], "0")
        f.replace([], "0")

    def two_replaces(f):  # the queued tombstone is unwrapped: no tombstone inside a tombstone
        f.add(obj)
        f.replace([], "0")
        f.replace([], "1")

    def added_deleted_added(f):
        f.add(obj)
        f.delete(obj)
        f.add(obj_v2)
        f.replace([], "0")

    return [
        (added, [Delta(ADDED, obj), Delta(DELETED, tomb)]),
        (replaced, [Delta(ADDED, obj), Delta(REPLACED, obj), Delta(DELETED, tomb)]),
        (deleted, [Delta(ADDED, obj), Delta(DELETED, obj)]),
        (synced, [Delta(ADDED, obj), Delta(SYNC, obj), Delta(SYNC, obj), Delta(DELETED, tomb)]),
        (two_replaces, [Delta(ADDED, obj), Delta(DELETED, tomb)]),
        (added_deleted_added, [Delta(ADDED, obj), Delta(DELETED, obj), Delta(ADDED, obj_v2),
                               Delta(DELETED, DeletedFinalStateUnknown("foo", obj_v2))]),
    ]


@pytest.mark.parametrize("with_known_objects", [True, False])
@pytest.mark.parametrize("operations,expected", _only_in_queue_cases(), ids=lambda v: getattr(v, "__name__", ""))
def test_replace_makes_deletions_for_objects_only_in_queue_table(operations, expected, with_known_objects):
    """Port of TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue (both FIFO flavours)."""
    f = DeltaFIFO(known_objects=known()) if with_known_objects else DeltaFIFO()
    operations(f)
    got = pop(f)
    assert list(got) == expected
    assert not isinstance(got[-1].object.obj if isinstance(got[-1].object, DeletedFinalStateUnknown) else None,
                          DeletedFinalStateUnknown)
    assert f.list_keys() == []  # no extra deltas left
