"""Creating and deleting CRDs does not grow the process: a resource that only a CRD made known leaves the
process-wide registry when the last tracker serving it deletes its CRD (issue 11 item 7)."""

from __future__ import annotations

from testkit import minimal_crd

from apis import resources as r
from apis.fake import ObjectTracker
from apis.fake.tracker import registry


def crd(plural: str) -> dict:
    return minimal_crd("churn.example.com", plural, plural.capitalize())


def test_crd_churn_leaves_nothing_behind(tracker: ObjectTracker) -> None:
    before = len(r.all_resources())
    for i in range(50):
        tracker.create(r.CUSTOM_RESOURCE_DEFINITIONS, crd(f"things{i}"))
        tracker.create(r.GroupVersionResource("churn.example.com", "v1", f"things{i}"), {
            "apiVersion": "churn.example.com/v1", "kind": f"Things{i}", "metadata": {"name": "x", "namespace": "default"}})
        tracker.delete(r.CUSTOM_RESOURCE_DEFINITIONS, "", f"things{i}.churn.example.com")
    assert len(r.all_resources()) == before
    assert not [g for g in registry._CRD_ONLY_GVRS if g.group == "churn.example.com"]
    assert not tracker._registry._unserved


def test_a_resource_stays_known_while_another_tracker_serves_it(tracker: ObjectTracker) -> None:
    other = ObjectTracker()
    gvr = r.GroupVersionResource("churn.example.com", "v1", "shared")
    tracker.create(r.CUSTOM_RESOURCE_DEFINITIONS, crd("shared"))
    other.create(r.CUSTOM_RESOURCE_DEFINITIONS, crd("shared"))
    tracker.register_crd(crd("shared"))  # idempotent: counted once per tracker
    tracker.delete(r.CUSTOM_RESOURCE_DEFINITIONS, "", "shared.churn.example.com")
    assert other.resource_info(gvr).kind == "Shared" and r.lookup(gvr).kind == "Shared"
    other.delete(r.CUSTOM_RESOURCE_DEFINITIONS, "", "shared.churn.example.com")
    assert gvr not in {i.gvr for i in r.all_resources()}
