"""Server-side dry run (``dry_run=True``, the sandbox's ``dryRun=All``): every write path checks everything and
answers what the write would, but nothing is committed (no resourceVersion, no watch event, no garbage
collection, no name or uid reserved)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_tracker_helpers import make_pod, make_widget, owner_ref, widget_crd

from apis import errors
from apis import resources as r
from apis.fake import ObjectTracker
from apis.watch import ListOptions

WIDGETS = r.GroupVersionResource("example.com", "v1", "widgets")
SNAPSHOT_GVRS = (r.CONFIGMAPS, r.DEPLOYMENTS, r.PODS, r.CUSTOM_RESOURCE_DEFINITIONS)


def _deployment(name: str = "d", replicas: int = 1) -> dict:
    return {"metadata": {"name": name}, "spec": {"replicas": replicas}}


def _configmap(name: str, **metadata: object) -> dict:
    return {"metadata": {"name": name, **metadata}, "data": {"k": "v"}}


def _snapshot(tracker: ObjectTracker) -> tuple[str, dict]:
    return tracker.resource_version(), {gvr: tracker.list(gvr)["items"] for gvr in SNAPSHOT_GVRS}


@pytest.fixture
def unchanged(tracker: ObjectTracker) -> Iterator[None]:
    """Asserts that the test body's (dry-run) writes changed nothing and sent no watch event."""
    before = _snapshot(tracker)
    watches = [tracker.watch(gvr, "", ListOptions(resource_version=before[0])) for gvr in SNAPSHOT_GVRS]
    try:
        yield
        assert _snapshot(tracker) == before
        assert [w.next_event(0.05) for w in watches] == [None] * len(watches)
    finally:
        for w in watches:
            w.stop()


@pytest.fixture
def seeded(tracker: ObjectTracker) -> ObjectTracker:
    """A deployment owning a config map, a config map with a finalizer, a free config map."""
    owner = tracker.create(r.DEPLOYMENTS, _deployment(), "default")
    tracker.create(r.CONFIGMAPS, _configmap("child", ownerReferences=[owner_ref(owner)]), "default")
    tracker.create(r.CONFIGMAPS, _configmap("held", finalizers=["example.com/hold"]), "default")
    tracker.create(r.CONFIGMAPS, _configmap("free"), "default")
    return tracker


def test_dry_run_create_answers_the_would_be_object(tracker: ObjectTracker, unchanged: None) -> None:
    created = tracker.create(r.DEPLOYMENTS, _deployment(), "default", dry_run=True)
    md = created["metadata"]
    assert md["name"] == "d" and md["namespace"] == "default" and md["uid"] and md["creationTimestamp"]
    assert md["generation"] == 1 and "resourceVersion" not in md
    generated = tracker.create(r.PODS, {**make_pod("x"), "metadata": {"generateName": "web-"}}, "default", dry_run=True)
    assert generated["metadata"]["name"].startswith("web-") and generated["status"] == {"phase": "Pending"}


def test_dry_run_create_reserves_nothing(tracker: ObjectTracker) -> None:
    dry = tracker.create(r.CONFIGMAPS, _configmap("c"), "default", dry_run=True)
    real = tracker.create(r.CONFIGMAPS, _configmap("c"), "default")
    assert real["metadata"]["uid"] != dry["metadata"]["uid"]
    assert real["metadata"]["resourceVersion"] == tracker.resource_version()


def test_dry_run_create_fails_as_the_write_would(seeded: ObjectTracker, unchanged: None) -> None:
    with pytest.raises(errors.AlreadyExistsError):
        seeded.create(r.CONFIGMAPS, _configmap("free"), "default", dry_run=True)
    with pytest.raises(errors.InvalidError, match="name or generateName is required"):
        seeded.create(r.CONFIGMAPS, {"data": {}}, "default", dry_run=True)


def test_dry_run_of_a_crd_serves_nothing_and_custom_resources_are_validated(tracker: ObjectTracker) -> None:
    tracker.create(r.CUSTOM_RESOURCE_DEFINITIONS, widget_crd(), dry_run=True)
    with pytest.raises(errors.NotFoundError):
        tracker.resource_info(WIDGETS)
    tracker.create(r.CUSTOM_RESOURCE_DEFINITIONS, widget_crd())
    rv = tracker.resource_version()
    with pytest.raises(errors.InvalidError, match="spec.size"):
        tracker.create(WIDGETS, make_widget("w", size=0), "default", dry_run=True)
    assert tracker.create(WIDGETS, make_widget("w"), "default", dry_run=True)["spec"]["operator"] == ">="  # defaulted
    assert tracker.resource_version() == rv and tracker.list(WIDGETS)["items"] == []


def test_dry_run_update_answers_the_would_be_object_at_the_current_version(seeded: ObjectTracker, unchanged: None) -> None:
    current = seeded.get(r.DEPLOYMENTS, "default", "d")
    changed = {**current, "spec": {"replicas": 3}}
    updated = seeded.update(r.DEPLOYMENTS, changed, "default", dry_run=True)
    assert updated["spec"]["replicas"] == 3 and updated["metadata"]["generation"] == 2
    assert updated["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]
    status = seeded.update(r.DEPLOYMENTS, {**current, "status": {"replicas": 1}}, "default", "status", dry_run=True)
    assert status["status"] == {"replicas": 1} and status["metadata"]["generation"] == 1


def test_dry_run_update_fails_as_the_write_would(seeded: ObjectTracker, unchanged: None) -> None:
    current = seeded.get(r.CONFIGMAPS, "default", "free")
    stale = {**current, "metadata": {**current["metadata"], "resourceVersion": "1"}, "data": {"k": "w"}}
    with pytest.raises(errors.ConflictError):
        seeded.update(r.CONFIGMAPS, stale, "default", dry_run=True)
    with pytest.raises(errors.NotFoundError):
        seeded.update(r.CONFIGMAPS, _configmap("missing"), "default", dry_run=True)
    bad_label = {**current, "metadata": {**current["metadata"], "labels": {"a": "-bad-"}}}
    with pytest.raises(errors.InvalidError, match="metadata.labels"):
        seeded.update(r.CONFIGMAPS, bad_label, "default", dry_run=True)


def test_dry_run_update_that_drops_an_owner_collects_nothing(seeded: ObjectTracker, unchanged: None) -> None:
    child = seeded.get(r.CONFIGMAPS, "default", "child")
    dangling = {**child["metadata"]["ownerReferences"][0], "uid": "gone", "name": "gone"}
    orphaned = {**child, "metadata": {**child["metadata"], "ownerReferences": [dangling]}}
    assert seeded.update(r.CONFIGMAPS, orphaned, "default", dry_run=True)["metadata"]["ownerReferences"] == [dangling]


@pytest.mark.parametrize(
    ("patch_type", "body"),
    [
        ("merge", {"spec": {"replicas": 4}}),
        ("json", [{"op": "replace", "path": "/spec/replicas", "value": 4}]),
        ("strategic", {"spec": {"replicas": 4}}),
        ("apply", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 4}}),
    ],
)
def test_dry_run_patch(seeded: ObjectTracker, unchanged: None, patch_type: str, body: object) -> None:
    outcome = seeded.patch_with_outcome(r.DEPLOYMENTS, "default", "d", body, patch_type, dry_run=True)
    assert not outcome.created and outcome.object["spec"]["replicas"] == 4
    assert outcome.object["metadata"]["generation"] == 2


def test_dry_run_apply_that_would_create(tracker: ObjectTracker, unchanged: None) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "new"}, "data": {"a": "b"}}
    outcome = tracker.patch_with_outcome(r.CONFIGMAPS, "default", "new", body, "apply", dry_run=True)
    assert outcome.created and outcome.object["data"] == {"a": "b"} and outcome.object["metadata"]["uid"]
    with pytest.raises(errors.NotFoundError):
        tracker.patch(r.CONFIGMAPS, "default", "new", {"data": {}}, "merge", dry_run=True)


def test_dry_run_delete_answers_the_object_and_collects_nothing(seeded: ObjectTracker, unchanged: None) -> None:
    current = seeded.get(r.DEPLOYMENTS, "default", "d")
    for policy in (None, "Background", "Orphan"):
        assert seeded.delete(r.DEPLOYMENTS, "default", "d", policy, dry_run=True) == current
    foreground = seeded.delete(r.DEPLOYMENTS, "default", "d", "Foreground", dry_run=True)
    assert foreground["metadata"]["finalizers"] == ["foregroundDeletion"] and foreground["metadata"]["deletionTimestamp"]
    held = seeded.delete(r.CONFIGMAPS, "default", "held", dry_run=True)
    assert held["metadata"]["deletionTimestamp"] and held["metadata"]["finalizers"] == ["example.com/hold"]
    seeded.delete_collection(r.CONFIGMAPS, "default", dry_run=True)


def test_dry_run_delete_fails_as_the_delete_would(seeded: ObjectTracker, unchanged: None) -> None:
    with pytest.raises(errors.NotFoundError):
        seeded.delete(r.CONFIGMAPS, "default", "missing", dry_run=True)
    with pytest.raises(errors.ConflictError):
        seeded.delete(r.CONFIGMAPS, "default", "free", preconditions={"uid": "other"}, dry_run=True)
