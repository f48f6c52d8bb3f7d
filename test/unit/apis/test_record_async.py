"""apis.record_async.AsyncEventRecorder: recording never waits on a write; order, the queue's bound and close."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
from testkit import wait_for

from apis.fake import FakeClientset
from apis.record import EventRecorder
from apis.record_async import AsyncEventRecorder
from apis.resources import EVENTS

POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "p", "namespace": "default", "uid": "u", "resourceVersion": "7", "labels": {"a": "b"}}}
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _blocked_writes(cs: FakeClientset) -> tuple[threading.Event, threading.Event]:
    """Every Event write waits for ``release``; ``entered`` is set once the first one started."""
    entered, release = threading.Event(), threading.Event()

    def slow_create(action: object) -> tuple[bool, None, None]:
        entered.set()
        release.wait(10)
        return False, None, None

    cs.prepend_reactor("create", "events", slow_create)
    return entered, release


def _events(cs: FakeClientset) -> list[dict]:
    items = cs.tracker.list(EVENTS, "default")["items"]
    return sorted(items, key=lambda e: e["metadata"]["name"])


def test_recording_returns_before_the_write_and_events_keep_the_time_they_were_recorded():
    cs = FakeClientset()
    clock = iter(T0 + timedelta(seconds=i) for i in range(10))
    rec = AsyncEventRecorder(EventRecorder(cs, "sedna-gm", now=lambda: next(clock)))
    entered, release = _blocked_writes(cs)
    rec.event(POD, "Normal", "First", "one")
    assert entered.wait(5)
    rec.event(POD, "Warning", "Second", "two")  # the first write is still waiting on the API server
    rec.event(POD, "Normal", "Third", "three")
    assert rec.pending == 3 and _events(cs) == []  # the senders' writes all wait on the API server
    release.set()
    assert rec.flush(timeout=10)
    events = sorted(_events(cs), key=lambda e: e["firstTimestamp"])
    assert [(e["reason"], e["type"], e["firstTimestamp"]) for e in events] == [
        ("First", "Normal", "2026-01-01T00:00:00Z"), ("Second", "Warning", "2026-01-01T00:00:01Z"),
        ("Third", "Normal", "2026-01-01T00:00:02Z")]  # stamped when recorded
    assert events[0]["involvedObject"] == {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": "p",
                                           "uid": "u", "resourceVersion": "7"}
    assert rec.close(timeout=5)


def test_repeats_are_aggregated_by_the_underlying_recorder():
    cs = FakeClientset()
    rec = AsyncEventRecorder(EventRecorder(cs, "sedna-gm"), senders=1)  # concurrent repeats may each create one
    for _ in range(3):
        rec.event(POD, "Normal", "Same", "again")
    assert rec.flush(timeout=10)
    assert [e["count"] for e in _events(cs)] == [3]
    rec.close()


def test_a_full_queue_slows_the_recorder_down_and_drops_only_past_its_bound():
    cs = FakeClientset()
    rec = AsyncEventRecorder(EventRecorder(cs, "sedna-gm"), max_queued=2, senders=1, max_wait=0.05)
    entered, release = _blocked_writes(cs)
    rec.event(POD, "Normal", "Writing", "taken by the sender")
    assert entered.wait(5)
    rec.event(POD, "Normal", "Queued1", "m")
    rec.event(POD, "Normal", "Queued2", "m")
    rec.event(POD, "Normal", "Dropped", "m")  # two wait already, and no room within 0.05 s
    assert rec.dropped == 1
    release.set()
    assert rec.flush(timeout=10)
    assert sorted(e["reason"] for e in _events(cs)) == ["Queued1", "Queued2", "Writing"]
    rec.close()


def test_an_event_recorded_into_a_full_queue_waits_for_room_instead_of_being_lost():
    cs = FakeClientset()
    rec = AsyncEventRecorder(EventRecorder(cs, "sedna-gm"), max_queued=1, senders=1, max_wait=10)
    entered, release = _blocked_writes(cs)
    rec.event(POD, "Normal", "Writing", "m")
    assert entered.wait(5)
    rec.event(POD, "Normal", "Queued", "m")
    waiting = threading.Thread(target=rec.event, args=(POD, "Normal", "Waited", "m"))
    waiting.start()
    waiting.join(0.1)
    assert waiting.is_alive()  # no room yet: the caller waits
    release.set()
    waiting.join(10)
    assert rec.flush(timeout=10) and rec.dropped == 0
    assert sorted(e["reason"] for e in _events(cs)) == ["Queued", "Waited", "Writing"]
    rec.close()


def test_close_writes_what_waits_within_its_bound_then_takes_nothing():
    cs = FakeClientset()
    rec = AsyncEventRecorder(EventRecorder(cs, "sedna-gm"), senders=1)
    entered, release = _blocked_writes(cs)
    rec.event(POD, "Normal", "Writing", "m")
    assert entered.wait(5)
    rec.event(POD, "Normal", "Left", "m")
    assert rec.close(timeout=0.05) is False  # the write in progress outlived the bound: the waiting one is dropped
    release.set()
    rec.event(POD, "Normal", "Late", "m")
    assert rec.dropped == 1
    wait_for("the write in progress", lambda: [e["reason"] for e in _events(cs)], check=lambda r: r == ["Writing"])

    cs2 = FakeClientset()
    rec2 = AsyncEventRecorder(EventRecorder(cs2, "sedna-gm"))
    rec2.event(POD, "Normal", "A", "m")
    rec2.event(POD, "Normal", "B", "m")
    assert rec2.close(timeout=10)  # nothing blocks: both written before it returns
    assert sorted(e["reason"] for e in _events(cs2)) == ["A", "B"]


def test_a_bad_event_type_raises_at_once():
    rec = AsyncEventRecorder(EventRecorder(FakeClientset(), "sedna-gm"))
    with pytest.raises(ValueError, match="event type"):
        rec.event(POD, "Info", "R", "m")
    with pytest.raises(ValueError, match="max_queued"):
        AsyncEventRecorder(EventRecorder(FakeClientset(), "sedna-gm"), max_queued=0)
    with pytest.raises(ValueError, match="senders"):
        AsyncEventRecorder(EventRecorder(FakeClientset(), "sedna-gm"), senders=0)
    rec.close()
