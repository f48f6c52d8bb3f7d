"""What the tracker stores is bounded: JSON patch bombs are stopped while they apply (kube-apiserver's operation
and copy limits), and no object it is given or a patch produces may be deeper, larger or less JSON than a request
body could carry. A refused write changes nothing."""

from __future__ import annotations

import pytest
from fake_tracker_helpers import make_pod

from apis import errors
from apis import resources as r
from apis.fake import ObjectTracker
from apis.fake.tracker.limits import MAX_OBJECT_BYTES
from apis.fake.tracker.patch import MAX_JSON_PATCH_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS, json_patch
from apis.limits import MAX_DEPTH


def nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def test_copy_bomb_stops_at_the_copy_limit_with_422() -> None:
    doc = {"spec": {"a": "x" * 100}}
    ops = [{"op": "copy", "from": "/spec", "path": f"/spec/c{i}"} for i in range(30)]  # 2**30 × 100 bytes unbounded
    with pytest.raises(errors.InvalidError) as exc:
        json_patch(doc, ops)
    assert exc.value.status == 422
    assert "accumulated size increase of copy" in exc.value.message
    assert str(MAX_JSON_PATCH_COPY_BYTES) in exc.value.message


def test_more_operations_than_kube_allows_is_413() -> None:
    ops = [{"op": "test", "path": "/a", "value": 1}] * (MAX_JSON_PATCH_OPERATIONS + 1)
    with pytest.raises(errors.ApiError) as exc:
        json_patch({"a": 1}, ops)
    assert exc.value.status == 413 and exc.value.reason == "RequestEntityTooLarge"
    assert f"is {MAX_JSON_PATCH_OPERATIONS}, got {MAX_JSON_PATCH_OPERATIONS + 1}" in exc.value.message
    json_patch({"a": 1}, ops[:MAX_JSON_PATCH_OPERATIONS])  # the limit itself is fine


def test_patch_bomb_through_the_tracker_changes_nothing(tracker: ObjectTracker) -> None:
    created = tracker.create(r.PODS, make_pod("p", spec={"containers": [{"name": "c", "image": "x" * 100}]}))
    ops = [{"op": "copy", "from": "/spec", "path": f"/spec/c{i}"} for i in range(30)]
    with pytest.raises(errors.InvalidError):
        tracker.patch(r.PODS, "default", "p", ops, "json")
    assert tracker.get(r.PODS, "default", "p") == created


def test_a_patch_result_deeper_than_a_document_may_be_is_422(tracker: ObjectTracker) -> None:
    tracker.create(r.PODS, make_pod("p"))
    half = nested(MAX_DEPTH - 5)
    ops = [{"op": "add", "path": "/spec/x", "value": half}, {"op": "copy", "from": "/spec/x", "path": "/spec/x" + "/a" * (MAX_DEPTH - 7) + "/b"}]
    with pytest.raises(errors.InvalidError) as exc:
        tracker.patch(r.PODS, "default", "p", ops, "json")
    assert exc.value.status == 422 and "nests deeper" in exc.value.message


def test_an_object_grown_past_the_size_limit_by_patches_is_413(tracker: ObjectTracker) -> None:
    # data, not annotations: those are capped at 256 KiB by the metadata validation before the size bound
    tracker.create(r.CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}})
    chunk = "x" * (MAX_OBJECT_BYTES // 2)
    tracker.patch(r.CONFIGMAPS, "default", "c", {"data": {"a": chunk}})
    with pytest.raises(errors.ApiError) as exc:
        tracker.patch(r.CONFIGMAPS, "default", "c", {"data": {"b": chunk}})
    assert exc.value.status == 413 and exc.value.reason == "RequestEntityTooLarge"
    assert "b" not in tracker.get(r.CONFIGMAPS, "default", "c")["data"]


@pytest.mark.parametrize(
    "extra, status",
    [
        ({"spec": nested(MAX_DEPTH + 5)}, 400),
        ({"spec": {"n": 2**70}}, 400),
        ({"spec": {"n": float("inf")}}, 400),
        ({"data": {"k": "x" * (MAX_OBJECT_BYTES + 1)}}, 413),
    ],
)
def test_create_and_update_refuse_objects_out_of_bounds(tracker: ObjectTracker, extra: dict, status: int) -> None:
    with pytest.raises(errors.ApiError) as exc:
        tracker.create(r.CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}, **extra})
    assert exc.value.status == status
    stored = tracker.create(r.CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}})
    with pytest.raises(errors.ApiError) as exc:
        tracker.update(r.CONFIGMAPS, {**stored, **extra})
    assert exc.value.status == status
    assert tracker.get(r.CONFIGMAPS, "default", "c") == stored
