"""Garbage collection of objects created (or updated) with references to owners that do not exist."""

from __future__ import annotations

from fake_tracker_helpers import make_pod, owner_ref

from apis import resources as r
from apis.fake import ObjectTracker
from apis.watch import ADDED, DELETED, MODIFIED, ListOptions


def _ghost(name: str = "ghost", uid: str = "no-such-uid", controller: bool = True) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": uid, "controller": controller}


def _deployment(tracker: ObjectTracker, name: str) -> dict:
    return tracker.create(r.DEPLOYMENTS, {"metadata": {"name": name}, "spec": {"replicas": 1}}, "default")


def _pod_events(tracker: ObjectTracker, since: str) -> list[tuple[str, str]]:
    """(type, name) of every pod event after ``since`` that is already in the history."""
    w = tracker.watch(r.PODS, "default", ListOptions(resource_version=since))
    events = []
    try:
        while (event := w.next_event(timeout=0)) is not None:
            events.append((event.type, event.object["metadata"]["name"]))
    finally:
        w.stop()
    return events


def _pod_names(tracker: ObjectTracker) -> list[str]:
    return [p["metadata"]["name"] for p in tracker.list(r.PODS, "default")["items"]]


def test_create_with_only_absent_owners_is_collected_with_added_then_deleted(tracker: ObjectTracker) -> None:
    tracker.create(r.CONFIGMAPS, {"metadata": {"name": "unrelated"}}, "default")  # RV "0" would mean "initial list"
    start = tracker.resource_version()
    created = tracker.create(r.PODS, make_pod("orphan", owner_references=[_ghost(), _ghost("other", "uid-2", controller=False)]))
    assert created["metadata"]["uid"]  # the create itself succeeds, as on a real server
    assert _pod_names(tracker) == []
    assert _pod_events(tracker, start) == [(ADDED, "orphan"), (DELETED, "orphan")]


def test_uid_mismatch_with_a_same_name_owner_counts_as_absent(tracker: ObjectTracker) -> None:
    owner = _deployment(tracker, "d")
    stale = {**owner_ref(owner), "uid": "uid-of-an-earlier-d"}
    tracker.create(r.PODS, make_pod("stale", owner_references=[stale]))
    tracker.create(r.PODS, make_pod("live", owner_references=[owner_ref(owner)]))
    assert _pod_names(tracker) == ["live"]
    assert tracker.get(r.DEPLOYMENTS, "default", "d")  # the same-name object is untouched


def test_one_live_owner_keeps_the_object_and_drops_only_dangling_references(tracker: ObjectTracker) -> None:
    owner = _deployment(tracker, "d")
    start = tracker.resource_version()
    tracker.create(r.PODS, make_pod("shared", owner_references=[_ghost(), owner_ref(owner, controller=False)]))
    pod = tracker.get(r.PODS, "default", "shared")
    assert [ref["name"] for ref in pod["metadata"]["ownerReferences"]] == ["d"]
    assert _pod_events(tracker, start) == [(ADDED, "shared"), (MODIFIED, "shared")]


def test_update_adding_an_absent_owner_collects_the_object(tracker: ObjectTracker) -> None:
    pod = tracker.create(r.PODS, make_pod("p"))
    pod["metadata"]["labels"] = {"unchanged": "owners"}
    tracker.update(r.PODS, pod)
    assert _pod_names(tracker) == ["p"]
    current = tracker.get(r.PODS, "default", "p")
    current["metadata"]["ownerReferences"] = [_ghost()]
    tracker.update(r.PODS, current)
    assert _pod_names(tracker) == []


def test_apply_creating_an_object_with_an_absent_owner_collects_it(tracker: ObjectTracker) -> None:
    doc = make_pod("applied", owner_references=[_ghost()])
    outcome = tracker.patch_with_outcome(r.PODS, "default", "applied", doc, "apply")
    assert outcome.created
    assert _pod_names(tracker) == []


def test_collected_object_with_finalizers_is_only_marked(tracker: ObjectTracker) -> None:
    tracker.create(r.PODS, make_pod("held", owner_references=[_ghost()], finalizers=["example.com/hold"]))
    pod = tracker.get(r.PODS, "default", "held")
    assert pod["metadata"]["deletionTimestamp"]
