"""Watch: initial events, replay from a resourceVersion, 410 beyond history, bookmarks, selector transitions,
namespaces, slow watchers, stop()."""

from __future__ import annotations

import threading

import pytest
from fake_tracker_helpers import make_pod

from apis import errors
from apis import resources as r
from apis.fake import ObjectTracker, TrackerWatch
from apis.watch import INITIAL_EVENTS_END_ANNOTATION, ListOptions, Watch, WatchEvent

TIMEOUT = 2.0


def _drain(w: TrackerWatch, n: int) -> list[WatchEvent]:
    events = []
    for _ in range(n):
        ev = w.next_event(TIMEOUT)
        assert ev is not None, f"expected {n} events, got {len(events)}"
        events.append(ev)
    return events


def _summary(events: list[WatchEvent]) -> list[tuple[str, str]]:
    return [(e.type, e.object["metadata"]["name"]) for e in events]


@pytest.mark.parametrize("rv", [None, "", "0"])
def test_initial_events_then_live(tracker: ObjectTracker, rv: str | None) -> None:
    tracker.create(r.PODS, make_pod("b"), "default")
    tracker.create(r.PODS, make_pod("a"), "default")
    with tracker.watch(r.PODS, "", ListOptions(resource_version=rv)) as w:
        assert isinstance(w, Watch)
        assert _summary(_drain(w, 2)) == [("ADDED", "a"), ("ADDED", "b")]
        tracker.create(r.PODS, make_pod("c"), "default")
        tracker.delete(r.PODS, "default", "a")
        assert _summary(_drain(w, 2)) == [("ADDED", "c"), ("DELETED", "a")]
        assert w.next_event(0.05) is None


def test_resume_from_rv_replays_history(tracker: ObjectTracker) -> None:
    tracker.create(r.PODS, make_pod("a"), "default")
    rv = tracker.resource_version()
    pod = tracker.create(r.PODS, make_pod("b"), "default")
    pod["metadata"]["labels"] = {"x": "y"}
    tracker.update(r.PODS, pod)
    tracker.create(r.CONFIGMAPS, {"metadata": {"name": "other-kind"}}, "default")
    with tracker.watch(r.PODS, "", ListOptions(resource_version=rv)) as w:
        events = _drain(w, 2)
        assert _summary(events) == [("ADDED", "b"), ("MODIFIED", "b")]
        assert events[1].object["metadata"]["labels"] == {"x": "y"}
        assert w.next_event(0.05) is None
        tracker.delete(r.PODS, "default", "b")
        deleted = _drain(w, 1)[0]
        assert deleted.type == "DELETED"
        assert int(deleted.object["metadata"]["resourceVersion"]) == int(tracker.resource_version())


def test_too_old_rv_gives_one_410_error_event() -> None:
    tracker = ObjectTracker(watch_history=5)
    for i in range(8):
        tracker.create(r.PODS, make_pod(f"p{i}"), "default")
    w = tracker.watch(r.PODS, "", ListOptions(resource_version="1"))
    ev = w.next_event(TIMEOUT)
    assert ev is not None and ev.type == "ERROR"
    assert ev.object["code"] == 410 and ev.object["reason"] == "Expired" and ev.object["kind"] == "Status"
    assert ev.object["message"] == "too old resource version: 1 (3)"
    assert errors.is_resource_expired(errors.from_status(ev.object))
    with pytest.raises(StopIteration):
        w.next_event(TIMEOUT)
    assert w.stopped
    # the oldest retained point still works
    with tracker.watch(r.PODS, "", ListOptions(resource_version="3")) as ok:
        assert [e.object["metadata"]["name"] for e in _drain(ok, 5)] == ["p3", "p4", "p5", "p6", "p7"]


def test_bookmarks_when_idle(tracker: ObjectTracker) -> None:
    tracker.bookmark_interval = 0.02
    tracker.create(r.PODS, make_pod("a"), "default")
    with tracker.watch(r.PODS, "", ListOptions(resource_version=tracker.resource_version(), allow_watch_bookmarks=True)) as w:
        ev = w.next_event(TIMEOUT)
        assert ev is not None and ev.type == "BOOKMARK"
        assert ev.object == {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": tracker.resource_version()}}
        tracker.create(r.CONFIGMAPS, {"metadata": {"name": "elsewhere"}}, "default")  # progress on another kind
        ev = w.next_event(TIMEOUT)
        assert ev is not None and ev.type == "BOOKMARK"
        assert ev.object["metadata"]["resourceVersion"] == tracker.resource_version()
    with tracker.watch(r.PODS, "", ListOptions(resource_version=tracker.resource_version())) as no_bookmarks:
        assert no_bookmarks.next_event(0.1) is None


def test_initial_events_end_bookmark(tracker: ObjectTracker) -> None:
    tracker.create(r.PODS, make_pod("a"), "default")
    opts = ListOptions(resource_version="", allow_watch_bookmarks=True, send_initial_events=True)
    with tracker.watch(r.PODS, "", opts) as w:
        added, end = _drain(w, 2)
        assert added.type == "ADDED" and end.type == "BOOKMARK"
        assert end.object["metadata"]["annotations"] == {INITIAL_EVENTS_END_ANNOTATION: "true"}


def test_send_initial_events_true_sends_the_current_state_for_any_resource_version() -> None:
    tracker = ObjectTracker(watch_history=2)
    tracker.create(r.PODS, make_pod("a"), "default")
    rv = tracker.resource_version()
    tracker.create(r.PODS, make_pod("b"), "default")
    for i in range(3):  # compact rv away: NotOlderThan still serves the current state, no 410
        tracker.create(r.CONFIGMAPS, {"metadata": {"name": f"c{i}"}}, "default")
    opts = ListOptions(resource_version=rv, resource_version_match="NotOlderThan", allow_watch_bookmarks=True,
                       send_initial_events=True)
    with tracker.watch(r.PODS, "", opts) as w:
        events = _drain(w, 3)
        assert _summary(events[:2]) == [("ADDED", "a"), ("ADDED", "b")]
        end = events[2].object["metadata"]
        assert events[2].type == "BOOKMARK" and end["annotations"] == {INITIAL_EVENTS_END_ANNOTATION: "true"}
        assert end["resourceVersion"] == tracker.resource_version()


def test_send_initial_events_false_from_now_sends_no_initial_state(tracker: ObjectTracker) -> None:
    tracker.create(r.PODS, make_pod("existing"), "default")
    opts = ListOptions(resource_version="0", resource_version_match="NotOlderThan", send_initial_events=False)
    with tracker.watch(r.PODS, "", opts) as w:
        tracker.create(r.PODS, make_pod("new"), "default")
        assert _summary(_drain(w, 1)) == [("ADDED", "new")]


def test_send_initial_events_at_a_future_resource_version_is_one_504_error(tracker: ObjectTracker) -> None:
    tracker.too_large_rv_wait = 0.05
    future = str(int(tracker.resource_version()) + 10)
    opts = ListOptions(resource_version=future, resource_version_match="NotOlderThan", send_initial_events=True)
    with tracker.watch(r.PODS, "", opts) as w:
        (ev,) = _drain(w, 1)
        assert ev.type == "ERROR" and ev.object["code"] == 504
        with pytest.raises(StopIteration):
            w.next_event(TIMEOUT)


def test_selector_transitions(tracker: ObjectTracker) -> None:
    pod = tracker.create(r.PODS, make_pod("a", labels={"app": "other"}), "default")
    with tracker.watch(r.PODS, "", ListOptions(label_selector="app=web")) as w:
        assert w.next_event(0.05) is None
        pod["metadata"]["labels"] = {"app": "web"}
        pod = tracker.update(r.PODS, pod)
        pod["metadata"]["annotations"] = {"touch": "1"}
        pod = tracker.update(r.PODS, pod)
        pod["metadata"]["labels"] = {"app": "gone"}
        pod = tracker.update(r.PODS, pod)
        events = _drain(w, 3)
        assert [e.type for e in events] == ["ADDED", "MODIFIED", "DELETED"]
        # the DELETED event carries the last matching content at the new resourceVersion
        assert events[2].object["metadata"]["labels"] == {"app": "web"}
        assert events[2].object["metadata"]["resourceVersion"] == pod["metadata"]["resourceVersion"]


def test_field_selector_transition_on_status(tracker: ObjectTracker) -> None:
    pod = tracker.create(r.PODS, make_pod("a"), "default")
    with tracker.watch(r.PODS, "", ListOptions(field_selector="status.phase=Running")) as w:
        pod["status"] = {"phase": "Running"}
        tracker.update(r.PODS, pod, subresource="status")
        assert _summary(_drain(w, 1)) == [("ADDED", "a")]


def test_namespace_filtering(tracker: ObjectTracker) -> None:
    with tracker.watch(r.PODS, "one") as one, tracker.watch(r.PODS, "") as everywhere:
        tracker.create(r.PODS, make_pod("x", namespace="two"), "two")
        tracker.create(r.PODS, make_pod("y", namespace="one"), "one")
        assert _summary(_drain(one, 1)) == [("ADDED", "y")]
        assert one.next_event(0.05) is None
        assert _summary(_drain(everywhere, 2)) == [("ADDED", "x"), ("ADDED", "y")]


def test_event_objects_are_private_copies(tracker: ObjectTracker) -> None:
    with tracker.watch(r.PODS) as w1, tracker.watch(r.PODS) as w2:
        tracker.create(r.PODS, make_pod("a"), "default")
        e1, e2 = _drain(w1, 1)[0], _drain(w2, 1)[0]
        e1.object["metadata"]["name"] = "mutated"
        assert e2.object["metadata"]["name"] == "a"
        assert tracker.get(r.PODS, "default", "a")["metadata"]["name"] == "a"


def test_slow_watcher_is_closed_while_writers_keep_going() -> None:
    tracker = ObjectTracker(watch_buffer=3)
    slow = tracker.watch(r.CONFIGMAPS, "", ListOptions(resource_version=tracker.resource_version()))
    fast = tracker.watch(r.CONFIGMAPS, "", ListOptions(resource_version=tracker.resource_version()))
    received: list[str] = []
    for i in range(20):  # writes never block although "slow" reads nothing; "fast" keeps up
        tracker.create(r.CONFIGMAPS, {"metadata": {"name": f"c{i:02d}"}}, "default")
        ev = fast.next_event(TIMEOUT)
        assert ev is not None
        received.append(ev.object["metadata"]["name"])
    assert received == [f"c{i:02d}" for i in range(20)]
    assert not fast.stopped
    buffered = []
    with pytest.raises(StopIteration):
        for _ in range(10):
            ev = slow.next_event(TIMEOUT)
            assert ev is not None
            buffered.append(ev.object["metadata"]["name"])
    assert buffered == ["c00", "c01", "c02"]
    assert slow.stopped
    fast.stop()


def test_stop_wakes_a_blocked_reader(tracker: ObjectTracker) -> None:
    w = tracker.watch(r.PODS)
    got: list[object] = []
    done = threading.Event()

    def read() -> None:
        got.extend(w)  # blocks until stopped
        done.set()

    t = threading.Thread(target=read)
    t.start()
    w.stop()
    w.stop()  # idempotent
    assert done.wait(TIMEOUT)
    t.join(timeout=TIMEOUT)
    assert got == [] and w.stopped
    tracker.create(r.PODS, make_pod("after-stop"), "default")  # a stopped watcher is simply dropped
    with pytest.raises(StopIteration):
        w.next_event(0)


def test_watch_timeout_seconds_ends_the_stream(tracker: ObjectTracker) -> None:
    w = tracker.watch(r.PODS, "", ListOptions(timeout_seconds=0.05))  # type: ignore[arg-type]
    with pytest.raises(StopIteration):
        w.next_event(TIMEOUT)


def test_close_watches_ends_streams_after_buffered_events(tracker: ObjectTracker) -> None:
    w = tracker.watch(r.PODS)
    tracker.create(r.PODS, make_pod("a"), "default")
    tracker.close_watches()
    assert _summary(_drain(w, 1)) == [("ADDED", "a")]
    with pytest.raises(StopIteration):
        w.next_event(TIMEOUT)


def test_finished_watchers_are_dropped(tracker: ObjectTracker) -> None:
    for _ in range(10):
        tracker.watch(r.PODS).stop()
    live = tracker.watch(r.PODS)
    assert tracker.open_watch_count == 1  # bounded bookkeeping is the point here
    live.stop()


def test_peek_hands_out_the_stored_object_and_a_write_replaces_it():
    from apis.fake import ObjectTracker
    from apis.resources import CONFIG_MAPS

    tracker = ObjectTracker()
    assert tracker.peek(CONFIG_MAPS, "default", "c") is None
    tracker.create(CONFIG_MAPS, {"metadata": {"name": "c"}, "data": {"k": "1"}}, "default")
    stored = tracker.peek(CONFIG_MAPS, "default", "c")
    assert stored is tracker.peek(CONFIG_MAPS, "default", "c") and stored == tracker.get(CONFIG_MAPS, "default", "c")
    assert tracker.get(CONFIG_MAPS, "default", "c") is not stored  # get copies
    tracker.patch(CONFIG_MAPS, "default", "c", {"data": {"k": "2"}}, "merge")
    assert stored["data"] == {"k": "1"}  # stored objects are never changed: a write stores a new one
    assert tracker.peek(CONFIG_MAPS, "default", "c")["data"] == {"k": "2"}


def test_next_events_takes_every_queued_event_and_can_hand_out_the_stored_objects(tracker: ObjectTracker) -> None:
    with tracker.watch(r.PODS, "default", ListOptions(resource_version="0", label_selector="app=a")) as w:
        for name in ("p1", "p2", "p3"):
            tracker.create(r.PODS, {**make_pod(name), "metadata": {"name": name, "labels": {"app": "a"}}}, "default")
        assert _summary(w.next_events(TIMEOUT, limit=1)) == [("ADDED", "p1")]
        batch = w.next_events(TIMEOUT, copy=False)
        assert _summary(batch) == [("ADDED", "p2"), ("ADDED", "p3")]
        assert batch[1].object is tracker.peek(r.PODS, "default", "p3")  # not copied
        # leaving the selector: the previous content at the new resourceVersion, the stored object untouched
        tracker.patch(r.PODS, "default", "p3", {"metadata": {"labels": {"app": "b"}}}, "merge")
        (gone,) = w.next_events(TIMEOUT, copy=False)
        stored = tracker.peek(r.PODS, "default", "p3")
        assert gone.type == "DELETED" and gone.object["metadata"]["labels"] == {"app": "a"}
        assert gone.object["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
        assert batch[1].object["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"]
        assert w.next_events(0.05) == []
        with pytest.raises(ValueError, match="limit"):
            w.next_events(TIMEOUT, limit=0)  # would take nothing and return at once, forever


def test_a_busy_reader_lets_events_gather(tracker: ObjectTracker) -> None:
    with tracker.watch(r.PODS, "default", ListOptions(resource_version="0")) as w:
        tracker.create(r.PODS, make_pod("first"), "default")
        assert _summary(w.next_events(TIMEOUT, gather=0.3)) == [("ADDED", "first")]

        def burst() -> None:
            for name in ("b1", "b2", "b3"):
                tracker.create(r.PODS, make_pod(name), "default")
                threading.Event().wait(0.02)

        writer = threading.Thread(target=burst)
        writer.start()
        # taken moments after the previous batch: the reader waits 0.3 s first, so the burst comes as one batch
        assert _summary(w.next_events(TIMEOUT, gather=0.3)) == [("ADDED", "b1"), ("ADDED", "b2"), ("ADDED", "b3")]
        writer.join()
