"""CRDs: registration through the tracker makes a kind usable; CRs are pruned, defaulted and validated (422)."""

from __future__ import annotations

import pytest
from fake_tracker_helpers import make_widget, widget_crd

from apis import errors
from apis import resources as r
from apis.fake import ObjectTracker
from apis.watch import ListOptions

WIDGETS = r.GroupVersionResource("example.com", "v1", "widgets")


@pytest.fixture
def with_crd(tracker: ObjectTracker) -> ObjectTracker:
    tracker.create(r.CUSTOM_RESOURCE_DEFINITIONS, widget_crd())
    return tracker


def test_register_crd_serves_each_served_version(tracker: ObjectTracker) -> None:
    infos = tracker.register_crd(widget_crd())
    assert [(i.gvr, i.kind, i.namespaced, i.singular, i.short_names, i.has_status) for i in infos] == [
        (WIDGETS, "Widget", True, "widget", ("wd",), True)
    ]
    assert tracker.resource_info(WIDGETS).kind == "Widget"
    assert r.lookup(WIDGETS).kind == "Widget"  # registered process-wide for clients too
    assert WIDGETS in {i.gvr for i in tracker.served_resources()}
    with pytest.raises(errors.NotFoundError):
        tracker.resource_info(r.GroupVersionResource("example.com", "v0", "widgets"))  # not served
    assert tracker.register_crd(widget_crd()) == infos  # idempotent


def test_creating_a_crd_object_registers_it_and_sets_status(tracker: ObjectTracker) -> None:
    other = ObjectTracker()
    crd = tracker.create(r.CUSTOM_RESOURCE_DEFINITIONS, widget_crd(scope="Cluster", status=False))
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions == {"Established": "True", "NamesAccepted": "True"}
    assert crd["status"]["acceptedNames"]["kind"] == "Widget"
    assert crd["status"]["storedVersions"] == ["v1"]
    info = tracker.resource_info(WIDGETS)
    assert not info.namespaced and not info.has_status
    w = tracker.create(WIDGETS, {**make_widget("w1"), "metadata": {"name": "w1"}})
    assert w["metadata"]["generation"] == 1 and "namespace" not in w["metadata"]
    with pytest.raises(errors.NotFoundError):
        other.resource_info(WIDGETS)  # another tracker has not registered it


def test_invalid_crd_is_rejected(tracker: ObjectTracker) -> None:
    crd = widget_crd()
    crd["metadata"]["name"] = "wrong.example.com"
    del crd["spec"]["group"]
    with pytest.raises(errors.InvalidError) as exc:
        tracker.create(r.CUSTOM_RESOURCE_DEFINITIONS, crd)
    assert {c["field"] for c in exc.value.causes} == {"spec.group"}
    crd = widget_crd()
    crd["metadata"]["name"] = "wrong.example.com"
    with pytest.raises(errors.InvalidError, match="metadata.name"):
        tracker.create(r.CUSTOM_RESOURCE_DEFINITIONS, crd)


def test_cr_is_pruned_and_defaulted_and_has_no_status_unless_given(with_crd: ObjectTracker) -> None:
    obj = make_widget("w", unknown="dropped")
    obj["extra"] = "dropped too"
    w = with_crd.create(WIDGETS, obj, "default")
    assert w["spec"] == {"size": 3, "operator": ">="}
    assert "extra" not in w and "status" not in w
    assert w["metadata"]["uid"] and w["metadata"]["generation"] == 1
    given = with_crd.create(WIDGETS, {**make_widget("s"), "status": {"phase": "Ready"}}, "default")
    assert given["status"] == {"phase": "Ready"}


def test_cr_validation_names_each_bad_field(with_crd: ObjectTracker) -> None:
    bad = make_widget("bad", size=0, operator="~", label="UPPER")
    with pytest.raises(errors.InvalidError) as exc:
        with_crd.create(WIDGETS, bad, "default")
    err = exc.value
    assert err.status == 422 and errors.is_invalid(err)
    fields = {c["field"]: c["type"] for c in err.causes}
    assert fields == {"spec.size": "FieldValueInvalid", "spec.operator": "FieldValueNotSupported", "spec.label": "FieldValueInvalid"}
    assert err.message.startswith('Widget.example.com "bad" is invalid: ')
    assert 'spec.operator: Unsupported value: "~": supported values: ">=", ">", "<"' in err.message
    missing = make_widget("missing")
    del missing["spec"]["size"]
    with pytest.raises(errors.InvalidError, match="spec.size: Required value"):
        with_crd.create(WIDGETS, missing, "default")


def test_cr_updates_are_validated_and_status_rules_apply(with_crd: ObjectTracker) -> None:
    w = with_crd.create(WIDGETS, make_widget("w"), "default")
    w["spec"]["size"] = 11
    with pytest.raises(errors.InvalidError, match="spec.size"):
        with_crd.update(WIDGETS, w)
    w["spec"]["size"] = 4
    w["status"] = {"ignored": True}
    w = with_crd.update(WIDGETS, w)
    assert w["metadata"]["generation"] == 2 and "status" not in w
    w["status"] = {"phase": "Done"}
    w["spec"]["size"] = 9
    st = with_crd.update(WIDGETS, w, subresource="status")
    assert st["status"] == {"phase": "Done"} and st["spec"]["size"] == 4 and st["metadata"]["generation"] == 2
    with pytest.raises(errors.ApiError) as exc:
        with_crd.patch(WIDGETS, "default", "w", {"spec": {"size": 5}}, "strategic")
    assert exc.value.status == 415  # like kube-apiserver: no strategic merge patch for custom resources
    assert with_crd.patch(WIDGETS, "default", "w", {"spec": {"size": 5}})["spec"]["size"] == 5


def test_a_put_of_a_cr_or_crd_needs_a_resource_version(with_crd: ObjectTracker) -> None:
    # their strategies do not allow unconditional updates: the generic store's 422, named by the resource
    w = with_crd.create(WIDGETS, make_widget("w"), "default")
    crd = with_crd.get(r.CUSTOM_RESOURCE_DEFINITIONS, "", "widgets.example.com")
    w["spec"]["size"] = 4
    for gvr, obj, rv, sub in ((WIDGETS, w, None, None), (WIDGETS, w, "", "status"), (r.CUSTOM_RESOURCE_DEFINITIONS, crd, "0", None)):
        obj["metadata"]["resourceVersion"] = rv
        with pytest.raises(errors.InvalidError) as exc:
            with_crd.update(gvr, obj, subresource=sub)
        assert exc.value.message == (
            f'{gvr.resource}.{gvr.group} "{obj["metadata"]["name"]}" is invalid: '
            "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
        )
    assert with_crd.get(WIDGETS, "default", "w")["spec"]["size"] == 3
    assert with_crd.patch(WIDGETS, "default", "w", {"spec": {"size": 4}})["spec"]["size"] == 4  # patches need none


def test_deleting_the_crd_drops_its_objects_and_stops_serving(with_crd: ObjectTracker) -> None:
    with_crd.create(WIDGETS, make_widget("w"), "default")
    watch = with_crd.watch(WIDGETS, "", ListOptions(resource_version=with_crd.resource_version()))
    try:
        with_crd.delete(r.CUSTOM_RESOURCE_DEFINITIONS, "", "widgets.example.com")
        ev = watch.next_event(2.0)
        assert ev is not None and ev.type == "DELETED" and ev.object["metadata"]["name"] == "w"
    finally:
        watch.stop()
    with pytest.raises(errors.NotFoundError, match="could not find the requested resource"):
        with_crd.list(WIDGETS)
    assert WIDGETS not in {i.gvr for i in with_crd.served_resources()}
    with_crd.create(r.CUSTOM_RESOURCE_DEFINITIONS, widget_crd())  # registering again serves it again, empty
    assert with_crd.list(WIDGETS)["items"] == []


def test_seeding_a_cr_by_kind_after_registration(with_crd: ObjectTracker) -> None:
    seeded = with_crd.add(make_widget("seed"))
    assert seeded["kind"] == "Widget" and seeded["spec"]["operator"] == ">="
