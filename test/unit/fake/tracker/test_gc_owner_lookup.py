"""Owner lookup of the garbage collector: by the referenced kind's resource, in the dependent's namespace (cluster
-wide for cluster-scoped owners), by name and uid; references that cannot be resolved keep the dependent."""

from __future__ import annotations

from fake_tracker_helpers import make_pod, owner_ref

from apis import errors
from apis import resources as r
from apis.fake import ObjectTracker


def _exists(tracker: ObjectTracker, gvr, namespace: str, name: str) -> bool:
    try:
        tracker.get(gvr, namespace, name)
    except errors.NotFoundError:
        return False
    return True


def _deployment(tracker: ObjectTracker, name: str, namespace: str = "default") -> dict:
    return tracker.create(r.DEPLOYMENTS, {"metadata": {"name": name}, "spec": {"replicas": 1}}, namespace)


def test_namespaced_owner_in_another_namespace_is_absent(tracker: ObjectTracker) -> None:
    owner = _deployment(tracker, "owner", "other")
    tracker.create(r.PODS, make_pod("dep", owner_references=[owner_ref(owner)]), "default")
    assert not _exists(tracker, r.PODS, "default", "dep")
    same_ns = tracker.create(r.PODS, make_pod("kept", "other", owner_references=[owner_ref(owner)]), "other")
    assert _exists(tracker, r.PODS, "other", "kept") and same_ns["metadata"]["ownerReferences"]


def test_cross_namespace_reference_is_dropped_when_another_owner_is_present(tracker: ObjectTracker) -> None:
    here, there = _deployment(tracker, "here"), _deployment(tracker, "there", "other")
    tracker.create(r.PODS, make_pod("p", owner_references=[owner_ref(here), owner_ref(there, controller=False)]), "default")
    refs = tracker.get(r.PODS, "default", "p")["metadata"]["ownerReferences"]
    assert [ref["name"] for ref in refs] == ["here"]


def test_owner_is_looked_up_by_the_referenced_kind(tracker: ObjectTracker) -> None:
    owner = _deployment(tracker, "owner")
    wrong_kind = {**owner_ref(owner), "apiVersion": "v1", "kind": "ConfigMap"}  # the uid exists, as a deployment
    tracker.create(r.PODS, make_pod("p", owner_references=[wrong_kind]), "default")
    assert not _exists(tracker, r.PODS, "default", "p")


def test_cluster_scoped_owner_is_found_from_any_namespace(tracker: ObjectTracker) -> None:
    node = tracker.create(r.NODES, {"metadata": {"name": "n1"}, "spec": {}})
    tracker.create(r.PODS, make_pod("p", "team-a", owner_references=[owner_ref(node)]), "team-a")
    assert _exists(tracker, r.PODS, "team-a", "p")
    tracker.delete(r.NODES, "", "n1")
    assert not _exists(tracker, r.PODS, "team-a", "p")


def test_reference_to_a_kind_the_server_does_not_serve_keeps_the_dependent(tracker: ObjectTracker) -> None:
    unserved = {"apiVersion": "example.com/v1", "kind": "Gadget", "name": "g", "uid": "no-such-uid"}
    old_version = {"apiVersion": "apps/v1beta1", "kind": "Deployment", "name": "d", "uid": "uid-2"}
    for i, ref in enumerate((unserved, old_version)):
        tracker.create(r.PODS, make_pod(f"p{i}", owner_references=[ref]), "default")
    owner = _deployment(tracker, "gone")
    tracker.create(r.PODS, make_pod("mixed", owner_references=[unserved, owner_ref(owner)]), "default")
    tracker.delete(r.DEPLOYMENTS, "default", "gone")  # runs a collection
    for name in ("p0", "p1", "mixed"):
        assert _exists(tracker, r.PODS, "default", name), name
    # while one reference is unresolvable the collector does nothing, not even drop the dangling one
    assert len(tracker.get(r.PODS, "default", "mixed")["metadata"]["ownerReferences"]) == 2


def test_namespaced_owner_of_a_cluster_scoped_object_keeps_it(tracker: ObjectTracker) -> None:
    owner = _deployment(tracker, "owner")
    tracker.create(r.NAMESPACES, {"metadata": {"name": "ns", "ownerReferences": [owner_ref(owner)]}})
    tracker.delete(r.DEPLOYMENTS, "default", "owner")
    assert _exists(tracker, r.NAMESPACES, "", "ns")
