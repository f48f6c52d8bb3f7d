"""kube-apiserver 1.30–1.32 rules on create and update: a resourceVersion on create is refused (500) unless it does
not parse or is "0"; ``metadata.generation`` exists per kind and custom resources bump it per status subresource."""

from __future__ import annotations

import pytest
from fake_tracker_helpers import make_pod, make_widget, widget_crd

from apis import errors
from apis import resources as r
from apis.fake import FakeClientset, ObjectTracker

WIDGETS = r.GroupVersionResource("example.com", "v1", "widgets")
RV_MESSAGE = "resourceVersion should not be set on objects to be created"


def _cm(name: str, rv: str | None = None) -> dict:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}
    if rv is not None:
        obj["metadata"]["resourceVersion"] = rv
    return obj


@pytest.mark.parametrize("rv", ["1", "999", "007", "18446744073709551615"])
def test_create_with_a_resource_version_is_refused_with_500(tracker: ObjectTracker, rv: str) -> None:
    before = tracker.resource_version()
    with pytest.raises(errors.ApiError) as caught:
        tracker.create(r.CONFIGMAPS, _cm("c", rv), "default")
    assert (caught.value.status, caught.value.reason, caught.value.message) == (500, "", RV_MESSAGE)
    assert tracker.resource_version() == before  # nothing written
    with pytest.raises(errors.NotFoundError):
        tracker.get(r.CONFIGMAPS, "default", "c")


@pytest.mark.parametrize("rv", ["", "0", "-1", "abc", " 5", "+5", "18446744073709551616"])
def test_create_ignores_a_resource_version_that_is_zero_or_does_not_parse(tracker: ObjectTracker, rv: str) -> None:
    created = tracker.create(r.CONFIGMAPS, _cm("c", rv), "default")
    assert created["metadata"]["resourceVersion"] == tracker.resource_version() != rv


def test_add_seeding_and_apply_that_creates_drop_the_resource_version(tracker: ObjectTracker) -> None:
    seeded = tracker.add({**_cm("seeded", "42"), "metadata": {"name": "seeded", "resourceVersion": "42"}})
    assert seeded["metadata"]["resourceVersion"] == tracker.resource_version()
    # kube-apiserver creates an applied object through its update path, which clears the resourceVersion
    applied = tracker.patch_with_outcome(r.CONFIGMAPS, "default", "applied", _cm("applied", "42"), "apply")
    assert applied.created and applied.object["metadata"]["resourceVersion"] == tracker.resource_version()


def test_fake_clientset_create_of_a_cached_copy_fails_like_the_server() -> None:
    cs = FakeClientset()
    cms = cs.core_v1().config_maps("default")
    cached = cms.create(_cm("c"))
    cms.delete("c")
    with pytest.raises(errors.InternalError, match=RV_MESSAGE):
        cms.create(cached)  # re-creating a copy of a cached object: clear metadata.resourceVersion first
    del cached["metadata"]["resourceVersion"]
    assert cms.create(cached)["metadata"]["name"] == "c"


@pytest.mark.parametrize(
    ("gvr", "obj", "namespace"),
    [
        (r.PODS, make_pod("p"), "default"),
        (r.LEASES, {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}}, "default"),
        (r.EVENTS, {"metadata": {"name": "e"}, "reason": "Started", "involvedObject": {"kind": "Pod"}}, "default"),
        (r.CONFIGMAPS, {"metadata": {"name": "c"}, "data": {"k": "v"}}, "default"),
        (r.SECRETS, {"metadata": {"name": "s"}, "data": {}}, "default"),
        (r.SERVICES, {"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}}, "default"),
        (r.NODES, {"metadata": {"name": "n"}, "spec": {"unschedulable": False}}, ""),
        (r.NAMESPACES, {"metadata": {"name": "ns"}, "spec": {"finalizers": ["kubernetes"]}}, ""),
        (r.HORIZONTAL_POD_AUTOSCALERS, {"metadata": {"name": "h"}, "spec": {"maxReplicas": 3}}, "default"),
    ],
)
def test_kinds_without_generation_never_get_one(tracker: ObjectTracker, gvr, obj: dict, namespace: str) -> None:
    obj = {**obj, "metadata": {**obj["metadata"], "generation": 7}}
    created = tracker.create(gvr, obj, namespace)
    assert "generation" not in created["metadata"]
    if "spec" in created:
        created["spec"]["changed"] = True
    else:
        created["metadata"]["labels"] = {"changed": "yes"}
    updated = tracker.update(gvr, created, namespace)
    assert "generation" not in updated["metadata"]


def test_deployments_and_crds_have_generation_even_without_a_spec(tracker: ObjectTracker) -> None:
    dep = tracker.create(r.DEPLOYMENTS, {"metadata": {"name": "d"}}, "default")
    assert dep["metadata"]["generation"] == 1
    dep["spec"] = {"replicas": 2}
    assert tracker.update(r.DEPLOYMENTS, dep)["metadata"]["generation"] == 2
    crd = tracker.create(r.CUSTOM_RESOURCE_DEFINITIONS, widget_crd())
    assert crd["metadata"]["generation"] == 1


def test_marking_for_deletion_bumps_generation_only_where_there_is_one(tracker: ObjectTracker) -> None:
    tracker.create(r.DEPLOYMENTS, {"metadata": {"name": "d", "finalizers": ["x/y"]}, "spec": {}}, "default")
    assert tracker.delete(r.DEPLOYMENTS, "default", "d")["metadata"]["generation"] == 2


def test_custom_resource_without_status_subresource_bumps_generation_on_status_change(tracker: ObjectTracker) -> None:
    tracker.create(r.CUSTOM_RESOURCE_DEFINITIONS, widget_crd(status=False))
    w = tracker.create(WIDGETS, make_widget("w"), "default")
    assert w["metadata"]["generation"] == 1
    w["metadata"]["labels"] = {"only": "metadata"}
    w = tracker.update(WIDGETS, w)
    assert w["metadata"]["generation"] == 1
    w["status"] = {"phase": "Running"}
    w = tracker.update(WIDGETS, w)
    assert w["status"] == {"phase": "Running"} and w["metadata"]["generation"] == 2
    w = tracker.patch(WIDGETS, "default", "w", {"status": {"phase": "Done"}})
    assert w["metadata"]["generation"] == 3
    with pytest.raises(errors.NotFoundError):
        tracker.update(WIDGETS, w, subresource="status")


def test_custom_resource_with_status_subresource_bumps_generation_on_spec_only(tracker: ObjectTracker) -> None:
    tracker.create(r.CUSTOM_RESOURCE_DEFINITIONS, widget_crd(status=True))
    w = tracker.create(WIDGETS, make_widget("w"), "default")
    w["status"] = {"phase": "Running"}
    st = tracker.update(WIDGETS, w, subresource="status")
    assert st["status"] == {"phase": "Running"} and st["metadata"]["generation"] == 1
    st["status"] = {"phase": "Ignored"}
    main = tracker.update(WIDGETS, st)  # status through the main resource is ignored: no change at all
    assert main["status"] == {"phase": "Running"} and main["metadata"]["generation"] == 1
    main["spec"]["size"] = 5
    assert tracker.update(WIDGETS, main)["metadata"]["generation"] == 2
