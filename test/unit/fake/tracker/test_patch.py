"""Patches: JSON merge (RFC 7386), JSON patch (RFC 6902), strategic merge, apply — as functions and through the tracker."""

from __future__ import annotations

import pytest
from fake_tracker_helpers import make_pod

from apis import errors
from apis import resources as r
from apis.fake import ObjectTracker
from apis.fake.tracker.patch import decode_patch, json_patch, merge_patch, strategic_merge_patch


def test_merge_patch_rfc7386_examples() -> None:
    target = {"a": "b", "c": {"d": "e", "f": "g"}, "list": [1, 2]}
    patch = {"a": "z", "c": {"f": None}, "list": [3], "new": {"x": None, "y": 1}}
    assert merge_patch(target, patch) == {"a": "z", "c": {"d": "e"}, "list": [3], "new": {"y": 1}}
    assert target["c"] == {"d": "e", "f": "g"}  # not modified
    assert merge_patch({"a": 1}, ["whole"]) == ["whole"]


def test_json_patch_operations() -> None:
    doc = {"foo": ["bar", "baz"], "obj": {"a/b": 1, "m~n": 2}, "num": 1}
    ops = [
        {"op": "add", "path": "/foo/1", "value": "qux"},
        {"op": "add", "path": "/foo/-", "value": "end"},
        {"op": "remove", "path": "/obj/a~1b"},
        {"op": "replace", "path": "/obj/m~0n", "value": 3},
        {"op": "copy", "from": "/foo/0", "path": "/first"},
        {"op": "move", "from": "/num", "path": "/moved"},
        {"op": "test", "path": "/moved", "value": 1},
        {"op": "test", "path": "/foo", "value": ["bar", "qux", "baz", "end"]},
    ]
    assert json_patch(doc, ops) == {
        "foo": ["bar", "qux", "baz", "end"],
        "obj": {"m~n": 3},
        "first": "bar",
        "moved": 1,
    }
    assert doc["foo"] == ["bar", "baz"]


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "test", "path": "/a", "value": 2}],
        [{"op": "test", "path": "/a", "value": True}],  # 1 is not true in JSON
        [{"op": "test", "path": "/missing", "value": 1}],
        [{"op": "replace", "path": "/missing", "value": 1}],
        [{"op": "remove", "path": "/list/5"}],
        [{"op": "add", "path": "/no/such/parent", "value": 1}],
        [{"op": "move", "from": "/b", "path": "/b/c"}],
    ],
)
def test_json_patch_failures_are_422(ops: list) -> None:
    with pytest.raises(errors.InvalidError) as exc:
        json_patch({"a": 1, "b": {}, "list": []}, ops)
    assert exc.value.status == 422


@pytest.mark.parametrize(
    "ops",
    [{"op": "add"}, [{"op": "frobnicate", "path": "/a"}], [{"op": "add", "path": "a", "value": 1}], [{"op": "add", "path": "/a"}]],
)
def test_malformed_json_patch_is_400(ops: object) -> None:
    with pytest.raises(errors.BadRequestError):
        json_patch({"a": 1}, ops)


def _pod_spec() -> dict:
    return {
        "containers": [
            {
                "name": "app",
                "image": "app:1",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                "ports": [{"containerPort": 80, "name": "http"}],
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            },
            {"name": "sidecar", "image": "side:1"},
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "tolerations": [{"key": "a"}],
    }


def test_strategic_merge_by_merge_keys() -> None:
    obj = {"metadata": {"name": "p", "finalizers": ["a"]}, "spec": _pod_spec()}
    patch = {
        "metadata": {"finalizers": ["b", "a"]},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "app:2",
                    "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}],
                    "ports": [{"containerPort": 443, "name": "https"}],
                },
                {"name": "sidecar", "$patch": "delete"},
                {"name": "new", "image": "new:1"},
            ],
            "volumes": [{"name": "cache", "emptyDir": {}}],
            "tolerations": [{"key": "b"}],  # no merge key: replaced
        },
    }
    out = strategic_merge_patch(obj, patch)
    app = out["spec"]["containers"][0]
    assert [c["name"] for c in out["spec"]["containers"]] == ["app", "new"]
    assert app["image"] == "app:2"
    assert app["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "20"}, {"name": "C", "value": "3"}]
    assert [p["containerPort"] for p in app["ports"]] == [80, 443]
    assert app["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert [v["name"] for v in out["spec"]["volumes"]] == ["data", "cache"]
    assert out["spec"]["tolerations"] == [{"key": "b"}]
    assert out["metadata"]["finalizers"] == ["a", "b"]
    assert obj["spec"]["containers"][0]["image"] == "app:1"  # input untouched


def test_strategic_merge_directives() -> None:
    obj = {"spec": {"template": {"a": 1, "b": 2}, "containers": [{"name": "x"}, {"name": "y"}], "f": ["a", "b", "c"]}}
    out = strategic_merge_patch(
        obj,
        {
            "spec": {
                "template": {"$patch": "replace", "c": 3},
                "containers": [{"name": "z", "$patch": "replace"}, {"name": "z"}],
                "$deleteFromPrimitiveList/f": ["b"],
                "$setElementOrder/containers": [{"name": "z"}],
            }
        },
    )
    assert out["spec"]["template"] == {"c": 3}
    assert out["spec"]["containers"] == [{"name": "z"}]
    assert out["spec"]["f"] == ["a", "c"]
    assert strategic_merge_patch({"a": {"b": 1}, "c": 1}, {"a": {"$patch": "delete"}}) == {"c": 1}
    with pytest.raises(errors.BadRequestError, match="merge key"):
        strategic_merge_patch(obj, {"spec": {"containers": [{"image": "no-name"}]}})


def test_strategic_merge_conditions_owner_refs_and_service_ports() -> None:
    obj = {
        "metadata": {"ownerReferences": [{"uid": "1", "name": "a"}]},
        "spec": {"ports": [{"port": 80, "protocol": "TCP"}]},
        "status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "Init", "status": "True"}]},
    }
    out = strategic_merge_patch(
        obj,
        {
            "metadata": {"ownerReferences": [{"uid": "2", "name": "b"}]},
            "spec": {"ports": [{"port": 80, "name": "http"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        },
    )
    assert [o["uid"] for o in out["metadata"]["ownerReferences"]] == ["1", "2"]
    assert out["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "name": "http"}]
    assert out["status"]["conditions"] == [{"type": "Ready", "status": "True"}, {"type": "Init", "status": "True"}]


def test_tracker_patch_types(tracker: ObjectTracker) -> None:
    tracker.create(r.PODS, make_pod("a", labels={"keep": "1", "drop": "1"}), "default")
    out = tracker.patch(r.PODS, "default", "a", b'{"metadata":{"labels":{"drop":null,"new":"1"}}}')
    assert out["metadata"]["labels"] == {"keep": "1", "new": "1"}
    out = tracker.patch(r.PODS, "default", "a", [{"op": "replace", "path": "/metadata/labels/new", "value": "2"}], "json")
    assert out["metadata"]["labels"]["new"] == "2"
    with pytest.raises(errors.InvalidError, match="test failed"):
        tracker.patch(r.PODS, "default", "a", '[{"op":"test","path":"/metadata/labels/new","value":"3"}]', "json")
    out = tracker.patch(
        r.PODS, "default", "a", {"spec": {"containers": [{"name": "main", "image": "nginx"}]}}, "strategic"
    )
    assert out["spec"]["containers"] == [{"name": "main", "image": "nginx"}]
    assert "generation" not in out["metadata"]  # pods have no generation before Kubernetes 1.33
    with pytest.raises(errors.NotFoundError, match='pods "ghost" not found'):
        tracker.patch(r.PODS, "default", "ghost", {"metadata": {}})
    with pytest.raises(errors.BadRequestError):
        tracker.patch(r.PODS, "default", "a", b"{not json")


def test_patch_with_stale_resource_version_conflicts(tracker: ObjectTracker) -> None:
    tracker.create(r.PODS, make_pod("a"), "default")
    with pytest.raises(errors.ConflictError):
        tracker.patch(r.PODS, "default", "a", {"metadata": {"resourceVersion": "0", "labels": {"a": "b"}}})


def test_patch_status_subresource(tracker: ObjectTracker) -> None:
    tracker.create(r.PODS, make_pod("a"), "default")
    out = tracker.patch(
        r.PODS, "default", "a", {"status": {"phase": "Running"}, "metadata": {"labels": {"ignored": "1"}}}, subresource="status"
    )
    assert out["status"]["phase"] == "Running" and "labels" not in out["metadata"]
    out = tracker.patch(r.PODS, "default", "a", {"status": {"phase": "Failed"}})
    assert out["status"]["phase"] == "Running"  # the main resource ignores status


def test_apply_creates_then_merges(tracker: ObjectTracker) -> None:
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: '1'\n"
    created = tracker.patch(r.CONFIGMAPS, "default", "cfg", config, "apply")
    assert created["data"] == {"a": "1"} and created["metadata"]["namespace"] == "default"
    updated = tracker.patch(r.CONFIGMAPS, "default", "cfg", {"apiVersion": "v1", "kind": "ConfigMap", "data": {"b": "2"}}, "apply")
    assert updated["data"] == {"a": "1", "b": "2"}
    with pytest.raises(errors.BadRequestError, match="apiVersion and kind"):
        tracker.patch(r.CONFIGMAPS, "default", "cfg", {"data": {}}, "apply")
    with pytest.raises(errors.ApiError) as exc:
        tracker.patch(r.CONFIGMAPS, "default", "cfg", {}, "bogus")
    assert exc.value.status == 415


@pytest.mark.parametrize("body", [b"metadata:\n  labels: {a: b}\n", bytearray(b"metadata:\n  labels: {a: b}\n")])
def test_decode_patch_reads_an_apply_yaml_body_given_as_bytes_or_bytearray(body: bytes | bytearray) -> None:
    # A bytearray used to reach PyYAML as is, which takes anything but str/bytes for a stream: AttributeError.
    assert decode_patch(body, "apply") == {"metadata": {"labels": {"a": "b"}}}


def test_json_patch_rejects_a_non_string_from_pointer() -> None:
    with pytest.raises(errors.BadRequestError, match="'path' must be a string"):
        json_patch({"a": 1}, [{"op": "copy", "from": 3, "path": "/b"}])
