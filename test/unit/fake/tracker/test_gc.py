"""Garbage collection through ownerReferences: background, foreground, orphan, recursion, dangling owners."""

from __future__ import annotations

import pytest
from fake_tracker_helpers import make_pod, owner_ref

from apis import errors
from apis import resources as r
from apis.fake import ObjectTracker
from apis.watch import ListOptions


def _deployment(tracker: ObjectTracker, name: str = "d") -> dict:
    return tracker.create(r.DEPLOYMENTS, {"metadata": {"name": name}, "spec": {"replicas": 1}}, "default")


def _configmap(tracker: ObjectTracker, name: str, owners: list[dict], finalizers: list[str] | None = None) -> dict:
    md: dict = {"name": name, "ownerReferences": owners}
    if finalizers:
        md["finalizers"] = finalizers
    return tracker.create(r.CONFIGMAPS, {"metadata": md, "data": {}}, "default")


def _names(tracker: ObjectTracker, gvr: r.GroupVersionResource) -> list[str]:
    return [o["metadata"]["name"] for o in tracker.list(gvr, "default")["items"]]


def test_background_deletes_dependents_recursively(tracker: ObjectTracker) -> None:
    owner = _deployment(tracker)
    child = _configmap(tracker, "child", [owner_ref(owner)])
    tracker.create(r.PODS, make_pod("grandchild", owner_references=[owner_ref(child)]), "default")
    tracker.create(r.PODS, make_pod("unrelated"), "default")
    tracker.delete(r.DEPLOYMENTS, "default", "d")
    assert _names(tracker, r.CONFIGMAPS) == []
    assert _names(tracker, r.PODS) == ["unrelated"]


def test_dependent_with_a_live_second_owner_only_loses_the_reference(tracker: ObjectTracker) -> None:
    a, b = _deployment(tracker, "a"), _deployment(tracker, "b")
    _configmap(tracker, "shared", [owner_ref(a), {**owner_ref(b), "controller": False}])
    tracker.delete(r.DEPLOYMENTS, "default", "a")
    shared = tracker.get(r.CONFIGMAPS, "default", "shared")
    assert [ref["name"] for ref in shared["metadata"]["ownerReferences"]] == ["b"]


def test_orphan_keeps_dependents_without_the_reference(tracker: ObjectTracker) -> None:
    owner = _deployment(tracker)
    tracker.create(r.PODS, make_pod("p", owner_references=[owner_ref(owner)]), "default")
    tracker.delete(r.DEPLOYMENTS, "default", "d", propagation_policy="Orphan")
    pod = tracker.get(r.PODS, "default", "p")
    assert "ownerReferences" not in pod["metadata"]
    with pytest.raises(errors.NotFoundError):
        tracker.get(r.DEPLOYMENTS, "default", "d")


def test_foreground_deletes_dependents_first(tracker: ObjectTracker) -> None:
    owner = _deployment(tracker)
    child = _configmap(tracker, "child", [owner_ref(owner)])
    tracker.create(r.PODS, make_pod("grandchild", owner_references=[owner_ref(child)]), "default")
    watch = tracker.watch(r.PODS, "", ListOptions(resource_version=tracker.resource_version()))
    watch_owner = tracker.watch(r.DEPLOYMENTS, "", ListOptions(resource_version=tracker.resource_version()))
    try:
        answer = tracker.delete(r.DEPLOYMENTS, "default", "d", propagation_policy="Foreground")
        assert "foregroundDeletion" in answer["metadata"]["finalizers"]
        assert answer["metadata"]["deletionTimestamp"]
        assert _names(tracker, r.CONFIGMAPS) == [] and _names(tracker, r.PODS) == []
        with pytest.raises(errors.NotFoundError):
            tracker.get(r.DEPLOYMENTS, "default", "d")
        pod_deleted = watch.next_event(1)
        owner_events = [watch_owner.next_event(1), watch_owner.next_event(1)]
        assert pod_deleted is not None and pod_deleted.type == "DELETED"
        assert [e.type for e in owner_events if e] == ["MODIFIED", "DELETED"]
        # the owner went after its (grand)dependents
        assert int(owner_events[1].object["metadata"]["resourceVersion"]) > int(pod_deleted.object["metadata"]["resourceVersion"])
    finally:
        watch.stop()
        watch_owner.stop()


def test_foreground_waits_for_blocking_dependent_with_finalizer(tracker: ObjectTracker) -> None:
    owner = _deployment(tracker)
    _configmap(tracker, "slow", [owner_ref(owner, block=True)], finalizers=["example.com/hold"])
    tracker.delete(r.DEPLOYMENTS, "default", "d", propagation_policy="Foreground")
    waiting = tracker.get(r.DEPLOYMENTS, "default", "d")
    assert waiting["metadata"]["finalizers"] == ["foregroundDeletion"]
    slow = tracker.get(r.CONFIGMAPS, "default", "slow")
    assert slow["metadata"]["deletionTimestamp"]
    slow["metadata"]["finalizers"] = []
    tracker.update(r.CONFIGMAPS, slow)
    with pytest.raises(errors.NotFoundError):
        tracker.get(r.CONFIGMAPS, "default", "slow")
    with pytest.raises(errors.NotFoundError):
        tracker.get(r.DEPLOYMENTS, "default", "d")


def test_background_owner_with_finalizer_keeps_dependents_until_removed(tracker: ObjectTracker) -> None:
    owner = tracker.create(
        r.DEPLOYMENTS, {"metadata": {"name": "d", "finalizers": ["x/y"]}, "spec": {}}, "default"
    )
    _configmap(tracker, "child", [owner_ref(owner)])
    tracker.delete(r.DEPLOYMENTS, "default", "d")
    assert _names(tracker, r.CONFIGMAPS) == ["child"]
    current = tracker.get(r.DEPLOYMENTS, "default", "d")
    current["metadata"]["finalizers"] = []
    tracker.update(r.DEPLOYMENTS, current)
    assert _names(tracker, r.CONFIGMAPS) == []


def test_seeded_dangling_owner_is_collected_after_a_delete(tracker: ObjectTracker) -> None:
    ghost = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "ghost", "uid": "no-such-uid"}
    tracker.add(make_pod("orphaned", owner_references=[ghost]))
    tracker.create(r.PODS, make_pod("other"), "default")
    assert _names(tracker, r.PODS) == ["orphaned", "other"]  # seeding does not collect (owners may come later)
    tracker.delete(r.PODS, "default", "other")
    assert _names(tracker, r.PODS) == []


def test_delete_collection_with_selector(tracker: ObjectTracker) -> None:
    for i in range(4):
        tracker.create(r.PODS, make_pod(f"p{i}", labels={"parity": "even" if i % 2 == 0 else "odd"}), "default")
    tracker.create(r.PODS, make_pod("elsewhere", namespace="other", labels={"parity": "even"}), "other")
    tracker.delete_collection(r.PODS, "default", ListOptions(label_selector="parity=even"))
    assert _names(tracker, r.PODS) == ["p1", "p3"]
    assert tracker.get(r.PODS, "other", "elsewhere")
