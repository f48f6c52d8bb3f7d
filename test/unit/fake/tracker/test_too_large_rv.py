"""Lists and watches at a resourceVersion the tracker has not reached: wait for it, else 504 "Too large"."""

from __future__ import annotations

import threading

import pytest
from fake_tracker_helpers import make_pod

from apis import errors
from apis import resources as r
from apis.fake import ObjectTracker
from apis.watch import ERROR, ListOptions


@pytest.fixture
def impatient() -> ObjectTracker:
    tracker = ObjectTracker()
    tracker.too_large_rv_wait = 0.05
    for i in range(3):
        tracker.create(r.PODS, make_pod(f"p{i}"))
    return tracker


def _write_later(tracker: ObjectTracker, names: list[str], delay: float = 0.05) -> threading.Thread:
    def write() -> None:
        for name in names:
            tracker.create(r.PODS, make_pod(name))

    t = threading.Timer(delay, write)
    t.start()
    return t


@pytest.mark.parametrize("match", ["Exact", "NotOlderThan", None])
def test_list_at_a_future_rv_times_out_with_too_large_resource_version(impatient: ObjectTracker, match) -> None:
    current = int(impatient.resource_version())
    with pytest.raises(errors.RequestTimeoutError) as info:
        impatient.list(r.PODS, "default", ListOptions(resource_version=str(current + 5), resource_version_match=match))
    err = info.value
    assert err.status == 504 and err.reason == "Timeout"
    assert f"Too large resource version: {current + 5}, current: {current}" in err.message
    assert err.causes == [{"type": "ResourceVersionTooLarge", "message": "Too large resource version"}]
    assert errors.is_too_large_resource_version(err)


def test_list_at_a_future_rv_that_appears_in_time_is_served() -> None:
    tracker = ObjectTracker()
    tracker.too_large_rv_wait = 10.0  # generous bound: the writer below gets there long before
    tracker.create(r.PODS, make_pod("p0"))
    wanted = int(tracker.resource_version()) + 2
    writer = _write_later(tracker, ["p1", "p2", "p3"])
    try:
        listed = tracker.list(r.PODS, "default", ListOptions(resource_version=str(wanted), resource_version_match="Exact"))
    finally:
        writer.join(5)
    assert listed["metadata"]["resourceVersion"] == str(wanted)
    assert [p["metadata"]["name"] for p in listed["items"]] == ["p0", "p1", "p2"]  # the snapshot at that RV


def test_watch_at_a_future_rv_ends_with_one_too_large_error_event(impatient: ObjectTracker) -> None:
    current = int(impatient.resource_version())
    w = impatient.watch(r.PODS, "default", ListOptions(resource_version=str(current + 10), allow_watch_bookmarks=True))
    try:
        event = w.next_event(timeout=5)
        assert event is not None and event.type == ERROR
        status = event.object
        assert status["code"] == 504 and status["reason"] == "Timeout"
        assert f"Too large resource version: {current + 10}, current: {current}" in status["message"]
        assert status["details"]["causes"] == [{"type": "ResourceVersionTooLarge", "message": "Too large resource version"}]
        assert errors.is_too_large_resource_version(errors.from_status(status))
        with pytest.raises(StopIteration):
            w.next_event(timeout=1)
    finally:
        w.stop()


def test_watch_at_a_future_rv_that_is_reached_delivers_only_later_events() -> None:
    tracker = ObjectTracker()
    tracker.too_large_rv_wait = 10.0
    tracker.create(r.PODS, make_pod("p0"))
    wanted = int(tracker.resource_version()) + 2
    w = tracker.watch(r.PODS, "default", ListOptions(resource_version=str(wanted)))
    try:
        for name in ("p1", "p2", "p3", "p4"):  # p2 is written at the requested RV
            tracker.create(r.PODS, make_pod(name))
        names = []
        while (event := w.next_event(timeout=0.2)) is not None:
            names.append((event.type, event.object["metadata"]["name"]))
        assert names == [("ADDED", "p3"), ("ADDED", "p4")]
    finally:
        w.stop()


def test_watch_at_a_future_rv_reached_by_writes_of_another_resource_then_delivers_its_own() -> None:
    tracker = ObjectTracker()
    tracker.too_large_rv_wait = 0.5
    wanted = int(tracker.resource_version()) + 2
    w = tracker.watch(r.PODS, "default", ListOptions(resource_version=str(wanted)))
    try:
        for i in range(3):  # the second reaches the wanted RV: the watch waits no longer, and errs not
            tracker.create(r.CONFIGMAPS, {"metadata": {"name": f"c{i}"}}, "default")
        assert w.next_event(timeout=0.8) is None
        tracker.create(r.PODS, make_pod("after"))
        event = w.next_event(timeout=5)
        assert event is not None and (event.type, event.object["metadata"]["name"]) == ("ADDED", "after")
    finally:
        w.stop()


def test_watch_at_the_current_rv_is_not_too_large(impatient: ObjectTracker) -> None:
    w = impatient.watch(r.PODS, "default", ListOptions(resource_version=impatient.resource_version()))
    try:
        assert w.next_event(timeout=0.2) is None  # quiet, not an error
        impatient.create(r.PODS, make_pod("next"))
        event = w.next_event(timeout=5)
        assert event is not None and event.object["metadata"]["name"] == "next"
    finally:
        w.stop()
