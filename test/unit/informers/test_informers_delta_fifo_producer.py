"""DeltaFIFO.set_producer_process: a producer processes the item it queued itself when the consumer idles (ours;
client-go's DeltaFIFO has no such path, so everything here must match what ``pop`` would have done)."""

from __future__ import annotations

import threading

from informer_test_helpers import known, mk
from testkit.wait import wait_for

from informers import (
    ADDED,
    DELETED,
    UPDATED,
    DeltaFIFO,
    FIFOClosedError,
    RequeueError,
)

# -- set_producer_process: a producer processes its item itself when the consumer idles -----------------------------


def _idle_consumer(f: DeltaFIFO, process) -> tuple[threading.Thread, list]:
    """A thread blocked in ``pop`` (returns once it is waiting); the list collects what its pops returned."""
    popped: list = []

    def consume() -> None:
        while True:
            try:
                popped.append(f.pop(process))
            except FIFOClosedError:
                return
            except Exception as e:  # what pop raised for a failed process
                popped.append(e)

    t = threading.Thread(target=consume, daemon=True)
    t.start()
    wait_for("the consumer to wait in pop", lambda: f._waiters, timeout=5)
    assert f._waiters == 1
    return t, popped


def test_producer_processes_in_its_own_thread_when_the_consumer_idles():
    f = DeltaFIFO(known_objects=known(mk("a", 2)))  # the deletion must be of a known object to be queued
    seen: list[tuple[str, list[str], str]] = []

    def process(deltas, initial):
        seen.append((deltas.key, [d.type for d in deltas], threading.current_thread().name))

    f.set_producer_process(process)
    t, popped = _idle_consumer(f, process)
    f.add(mk("a", 1))
    f.update(mk("a", 2))
    f.delete(mk("a", 2))
    me = threading.current_thread().name
    assert seen == [("a", [ADDED], me), ("a", [UPDATED], me), ("a", [DELETED], me)]
    assert len(f) == 0 and f.list_keys() == []
    f.close()
    t.join(5)
    assert popped == []  # the consumer never had to wake


def test_producer_does_not_jump_the_queue():
    f = DeltaFIFO()
    order: list[str] = []
    process = lambda deltas, initial: order.append(deltas.key)  # noqa: E731
    f.set_producer_process(process)
    f.add(mk("a", 1))  # nobody waits in pop: queued
    f.add(mk("b", 1))
    assert order == [] and f.list_keys() == ["a", "b"]
    t, popped = _idle_consumer(f, process)  # drains a and b, then idles
    wait_for("the consumer to drain a and b and wait again", lambda: len(order) == 2 and f._waiters, timeout=5)
    f.add(mk("c", 1))
    assert order == ["a", "b", "c"]
    f.close()
    t.join(5)
    assert [d.key for d in popped] == ["a", "b"]


def test_producer_process_requeue_hands_the_item_to_the_consumer():
    f = DeltaFIFO()
    calls: list[str] = []

    def process(deltas, initial):
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            raise RequeueError()

    f.set_producer_process(process)
    t, popped = _idle_consumer(f, process)
    f.add(mk("a", 1))
    wait_for("the consumer to pop the requeued a", lambda: popped, timeout=5)
    assert [d.key for d in popped] == ["a"]
    assert calls[0] == threading.current_thread().name and calls[1] == t.name
    f.close()
    t.join(5)


def test_producer_process_error_goes_to_on_error_and_the_item_is_dropped():
    f = DeltaFIFO()
    errors: list[BaseException] = []
    keys: list[str] = []

    def on_error(err: BaseException, key: str) -> None:
        errors.append(err)
        keys.append(key)

    def process(deltas, initial):
        raise ValueError(f"cannot process {deltas.key}")

    f.set_producer_process(process, on_error)
    t, popped = _idle_consumer(f, process)
    f.add(mk("a", 1))
    assert [str(e) for e in errors] == ["cannot process a"]
    assert f.list_keys() == [] and popped == []

    def requeue_with_error(deltas, initial):
        raise RequeueError(KeyError("again"))

    f.set_producer_process(requeue_with_error, on_error)
    f.add(mk("b", 1))  # pop would requeue b and raise KeyError: the producer reports it, the consumer gets b
    assert isinstance(errors[-1], KeyError) and keys == ["a", "b"]
    wait_for("the consumer to pop the requeued b", lambda: popped, timeout=5)
    assert [str(e) for e in popped] == ["cannot process b"]  # the consumer's own process ran on the requeued b
    f.close()
    t.join(5)


def test_producer_process_off_and_after_close():
    f = DeltaFIFO()
    seen: list[str] = []
    process = lambda deltas, initial: seen.append(threading.current_thread().name)  # noqa: E731
    f.set_producer_process(process)
    f.set_producer_process(None)
    t, popped = _idle_consumer(f, process)
    f.add(mk("a", 1))
    wait_for("the consumer to pop a", lambda: popped, timeout=5)
    assert seen == [t.name]
    f.close()
    t.join(5)
    f.set_producer_process(process)
    f.add(mk("b", 1))  # closed: queued, not processed (pop drains it)
    assert seen == [t.name] and f.list_keys() == ["b"]


def test_producer_processes_the_transformed_object():
    def transform(obj):
        return {**obj, "transformed": True}

    f = DeltaFIFO(transformer=transform)
    seen: list = []

    def process(deltas, initial):
        seen.append((deltas.key, [(d.type, d.object.get("transformed")) for d in deltas],
                     threading.current_thread().name))

    f.set_producer_process(process)
    t, popped = _idle_consumer(f, process)
    f.add(mk("a", 1))
    f.update(mk("a", 2))
    me = threading.current_thread().name
    assert seen == [("a", [(ADDED, True)], me), ("a", [(UPDATED, True)], me)]
    f.close()
    t.join(5)
    assert popped == []


def test_producer_process_one_replaces_process_for_a_single_upsert():
    f = DeltaFIFO(known_objects=known(mk("a", 2)))
    calls: list = []

    def process(deltas, initial):
        calls.append(("process", deltas.key, [d.type for d in deltas]))

    def process_one(key, obj, initial):
        calls.append(("one", key, obj["val"], initial))

    f.set_producer_process(process, None, process_one)
    t, popped = _idle_consumer(f, process)
    f.add(mk("a", 1))
    f.update(mk("a", 2))
    f.delete(mk("a", 2))  # not an upsert: process gets the Deltas
    assert calls == [("one", "a", 1, False), ("one", "a", 2, False), ("process", "a", [DELETED])]
    f.set_producer_process(None, None, process_one)  # off: process_one goes with process
    assert f._producer_process_one is None
    f.close()
    t.join(5)
    assert popped == []


def test_producer_process_one_errors_and_requeues_as_pop():
    f = DeltaFIFO()
    errors: list = []
    consumed: list = []

    def process(deltas, initial):
        consumed.append((deltas.key, [(d.type, d.object["val"]) for d in deltas]))

    def failing_one(key, obj, initial):
        if key == "a":
            raise ValueError("cannot")
        raise RequeueError()

    f.set_producer_process(process, lambda err, key: errors.append((str(err), key)), failing_one)
    t, popped = _idle_consumer(f, process)
    f.add(mk("a", 1))  # dropped, reported
    f.update(mk("b", 3))  # requeued whole: the consumer's process gets it as a Deltas
    wait_for("the consumer to process the requeued b", lambda: consumed, timeout=5)
    assert errors == [("cannot", "a")]
    assert consumed == [("b", [(UPDATED, 3)])]
    f.close()
    t.join(5)
