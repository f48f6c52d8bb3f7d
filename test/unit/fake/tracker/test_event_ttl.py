"""Events expire ``event_ttl`` seconds after their last write, as kube-apiserver's ``--event-ttl`` leases make etcd
delete them: watchers get DELETED, lists stop showing them, other kinds are never touched (issue 11 item 7)."""

from __future__ import annotations

import pytest

from apis import resources as r
from apis.fake import ObjectTracker
from apis.watch import ListOptions


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def event(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Test",
        "message": "m",
    }


def configmap(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def names(tracker: ObjectTracker, gvr=r.EVENTS) -> list[str]:  # noqa: ANN001
    return [o["metadata"]["name"] for o in tracker.list(gvr, "default")["items"]]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def tracker(clock: FakeClock) -> ObjectTracker:
    return ObjectTracker(event_ttl=60, clock=clock)


def test_events_expire_after_their_ttl_with_a_deleted_watch_event(tracker: ObjectTracker, clock: FakeClock) -> None:
    created = tracker.create(r.EVENTS, event("e1"), "default")
    tracker.create(r.CONFIGMAPS, configmap("cm"), "default")
    watch = tracker.watch(r.EVENTS, "default", ListOptions(resource_version=created["metadata"]["resourceVersion"]))
    clock.now += 59
    assert tracker.expire_events() == 0 and names(tracker) == ["e1"]
    clock.now += 2
    assert tracker.expire_events() == 1
    assert names(tracker) == [] and names(tracker, r.CONFIGMAPS) == ["cm"]
    deleted = watch.next_event(timeout=1)
    watch.stop()
    assert deleted is not None and deleted.type == "DELETED" and deleted.object["metadata"]["name"] == "e1"
    assert int(deleted.object["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    assert tracker.resource_version() == deleted.object["metadata"]["resourceVersion"]


def test_a_write_renews_the_lease_and_any_write_expires_due_events(tracker: ObjectTracker, clock: FakeClock) -> None:
    tracker.create(r.EVENTS, event("old"), "default")
    renewed = tracker.create(r.EVENTS, event("renewed"), "default")
    clock.now += 50
    renewed["count"] = 2
    tracker.update(r.EVENTS, renewed, "default")  # a new lease: 60 s from now
    clock.now += 20
    tracker.create(r.CONFIGMAPS, configmap("trigger"), "default")  # any write sweeps what is due first
    assert names(tracker) == ["renewed"]
    clock.now += 41
    renewed = tracker.get(r.EVENTS, "default", "renewed")
    renewed["count"] = 3
    tracker.update(r.EVENTS, renewed, "default")  # the object being written is never expired under it
    assert names(tracker) == ["renewed"]


def test_expiry_state_is_bounded_by_the_stored_events(tracker: ObjectTracker, clock: FakeClock) -> None:
    for i in range(50):
        tracker.create(r.EVENTS, event(f"e{i}"), "default")
    for i in range(40):
        tracker.delete(r.EVENTS, "default", f"e{i}")
    assert len(tracker._event_expiry) == 10
    clock.now += 61
    assert tracker.expire_events() == 10 and len(tracker._event_expiry) == 0 and names(tracker) == []


def test_a_zero_ttl_keeps_events(clock: FakeClock) -> None:
    tracker = ObjectTracker(event_ttl=0, clock=clock)
    tracker.create(r.EVENTS, event("kept"), "default")
    clock.now += 10**9
    assert tracker.expire_events() == 0 and names(tracker) == ["kept"]
    with pytest.raises(ValueError):
        ObjectTracker(event_ttl=-1)
