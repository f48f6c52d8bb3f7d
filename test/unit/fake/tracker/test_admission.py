"""Every write is decoded and validated before it is stored: a failed request never changes state."""

from __future__ import annotations

import re

import pytest
from fake_tracker_helpers import make_pod, make_widget, widget_crd

from apis import errors
from apis import resources as r
from apis.fake import FakeClientset, ObjectTracker
from apis.resources import GroupVersionResource

WIDGETS = GroupVersionResource("example.com", "v1", "widgets")
OWNER_REFS_X = "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.ownerReferences of type []v1.OwnerReference"


def _state(tracker: ObjectTracker) -> tuple[str, list[dict]]:
    return tracker.resource_version(), tracker.list(r.PODS)["items"]


def test_a_create_that_does_not_decode_is_a_400_and_stores_nothing(tracker: ObjectTracker) -> None:
    before = _state(tracker)
    with pytest.raises(errors.BadRequestError) as err:
        tracker.create(r.PODS, {**make_pod("x"), "metadata": {"name": 123, "namespace": "default"}})
    assert err.value.status == 400
    assert err.value.message == (
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field '
        "ObjectMeta.metadata.name of type string"
    )
    with pytest.raises(errors.BadRequestError, match=re.escape(OWNER_REFS_X)):
        tracker.create(r.PODS, make_pod("y", owner_references="x"))
    with pytest.raises(errors.BadRequestError, match="ObjectMeta.metadata.labels of type string"):
        tracker.add(make_pod("z", labels={"n": 1}))
    assert _state(tracker) == before


@pytest.mark.parametrize(
    ("patch_type", "body"),
    [
        ("merge", {"metadata": {"ownerReferences": "x"}}),
        ("json", [{"op": "add", "path": "/metadata/ownerReferences", "value": "x"}]),
        ("strategic", {"metadata": {"ownerReferences": "x"}}),
        ("apply", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "ownerReferences": "x"}}),
    ],
)
def test_a_patch_whose_result_does_not_decode_is_a_422_on_patch_and_changes_nothing(
    tracker: ObjectTracker, patch_type: str, body: object
) -> None:
    tracker.create(r.PODS, make_pod("p"))
    before = _state(tracker)
    with pytest.raises(errors.InvalidError) as err:
        tracker.patch(r.PODS, "default", "p", body, patch_type)
    (cause,) = err.value.details["causes"]
    assert (err.value.status, cause["type"], cause["field"]) == (422, "FieldValueInvalid", "patch")
    assert cause["message"].startswith('Invalid value: "{\\"apiVersion\\":\\"v1\\",\\"kind\\":\\"Pod\\"')
    assert cause["message"].endswith(": " + OWNER_REFS_X)
    assert err.value.message.startswith(' "" is invalid: patch: Invalid value: ')
    assert _state(tracker) == before
    assert tracker.patch(r.PODS, "default", "p", {"metadata": {"labels": {"a": "b"}}})["metadata"]["labels"] == {"a": "b"}
    tracker.delete(r.PODS, "default", "p")


def test_invalid_metadata_is_a_422_naming_every_problem_and_stores_nothing(tracker: ObjectTracker) -> None:
    before = _state(tracker)
    with pytest.raises(errors.InvalidError) as err:
        tracker.create(r.PODS, make_pod("Bad_Name", labels={"ok": "in valid!"}))
    assert [c["field"] for c in err.value.details["causes"]] == ["metadata.name", "metadata.labels"]
    assert err.value.message.startswith('Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase')
    assert _state(tracker) == before
    tracker.create(r.PODS, make_pod("good"))
    rv = tracker.resource_version()
    with pytest.raises(errors.InvalidError, match="metadata.labels"):
        tracker.patch(r.PODS, "default", "good", {"metadata": {"labels": {"bad key": "v"}}})
    assert tracker.resource_version() == rv


def test_generated_names_are_cut_to_fit_and_use_the_apimachinery_alphabet(tracker: ObjectTracker) -> None:
    created = tracker.create(r.CONFIGMAPS, {"metadata": {"generateName": "x" * 70}}, "default")
    name = created["metadata"]["name"]
    assert len(name) == 63 and name.startswith("x" * 58)
    assert re.fullmatch(r"[bcdfghjklmnpqrstvwxz2456789]{5}", name[58:])


def test_custom_resources_get_metadata_decoding_and_validation_with_their_schema(tracker: ObjectTracker) -> None:
    tracker.register_crd(widget_crd())
    with pytest.raises(errors.BadRequestError) as err:
        tracker.create(WIDGETS, {**make_widget("w"), "metadata": {"name": "w", "ownerReferences": "x"}}, "default")
    assert err.value.message == (
        'Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal string into Go struct field '
        "ObjectMeta.ownerReferences of type []v1.OwnerReference"
    )
    with pytest.raises(errors.InvalidError) as err:
        tracker.create(WIDGETS, make_widget("Bad_Widget", size=99), "default")
    assert [c["field"] for c in err.value.details["causes"]] == ["metadata.name", "spec.size"]
    assert tracker.list(WIDGETS)["items"] == []


def test_fake_clientset_validates_names_and_types_but_not_namespaces() -> None:
    cs = FakeClientset()
    cms = cs.core_v1().config_maps("nowhere")
    assert cms.create({"metadata": {"name": "fine"}})["metadata"]["namespace"] == "nowhere"
    with pytest.raises(errors.InvalidError, match='ConfigMap "UPPER_case" is invalid: metadata.name'):
        cms.create({"metadata": {"name": "UPPER_case"}})
    with pytest.raises(errors.BadRequestError, match="ConfigMap in version"):
        cms.create({"metadata": {"name": "typed"}, "data": {"k": 1}})
