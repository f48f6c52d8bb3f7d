"""The official ``kubernetes`` package as a client of the sandbox API server, over real HTTP."""

from __future__ import annotations

import json

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException
from testkit import wait_for

from apis.resources import CONFIGMAPS, PODS

pytestmark = pytest.mark.integration

GADGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "shortNames": ["gd"]},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 1}}},
                            "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
                        },
                    }
                },
            }
        ],
    },
}


def _pod(name: str, **annotations: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "demo"}, "annotations": annotations},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }


def _status(exc: ApiException) -> dict:
    """The Kubernetes Status body of a failed call."""
    body = json.loads(exc.body)
    assert body["kind"] == "Status" and body["code"] == exc.status
    return body


def test_version_and_discovery(api: client.ApiClient) -> None:
    info = client.VersionApi(api).get_code()
    assert info.git_version.endswith("-sandbox") and info.major == "1"
    groups = {g.name for g in client.ApisApi(api).get_api_versions().groups}
    assert {"apps", "apiextensions.k8s.io", "coordination.k8s.io", "sedna.io"} <= groups
    core = client.CoreV1Api(api).get_api_resources()
    by_name = {r.name: r for r in core.resources}
    assert by_name["pods"].namespaced and by_name["pods"].kind == "Pod" and "po" in by_name["pods"].short_names
    assert "pods/status" in by_name and not by_name["nodes"].namespaced


def test_pod_crud_patch_delete_and_simulated_lifecycle(api: client.ApiClient, sandbox) -> None:
    v1 = client.CoreV1Api(api)
    created = v1.create_namespaced_pod("default", _pod("web"))
    assert created.metadata.uid and created.metadata.resource_version and created.metadata.creation_timestamp

    running = wait_for("the condition", lambda: (p := v1.read_namespaced_pod("web", "default")).status.phase == "Running" and p)
    assert running.spec.node_name == "sandbox-node"
    assert running.status.pod_ip and running.status.container_statuses[0].state.running.started_at

    listed = v1.list_namespaced_pod("default", label_selector="app=demo")
    assert [p.metadata.name for p in listed.items] == ["web"]
    assert v1.list_namespaced_pod("default", label_selector="app=other").items == []
    assert [p.metadata.name for p in v1.list_pod_for_all_namespaces(field_selector="metadata.name=web").items] == ["web"]

    patched = v1.patch_namespaced_pod("web", "default", {"metadata": {"labels": {"tier": "front"}}})
    assert patched.metadata.labels == {"app": "demo", "tier": "front"}

    # A client-set terminal phase through pods/status is kept (the simulator never fights it).
    v1.patch_namespaced_pod_status("web", "default", {"status": {"phase": "Failed", "reason": "Evicted"}})
    # the simulator handles events in order: once a pod created now runs, it has seen the patch
    v1.create_namespaced_pod("default", _pod("marker"))
    wait_for("the marker to run", lambda: v1.read_namespaced_pod("marker", "default").status.phase == "Running")
    assert v1.read_namespaced_pod_status("web", "default").status.phase == "Failed"

    deleted = v1.delete_namespaced_pod("web", "default", body=client.V1DeleteOptions(propagation_policy="Background"))
    assert deleted.metadata.name == "web"
    with pytest.raises(ApiException) as exc:
        v1.read_namespaced_pod("web", "default")
    assert exc.value.status == 404 and _status(exc.value)["message"] == 'pods "web" not found'


def test_create_conflict_and_not_found_errors(api: client.ApiClient) -> None:
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_config_map("default", {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    with pytest.raises(ApiException) as exc:
        v1.create_namespaced_config_map("default", {"metadata": {"name": "cm"}})
    assert exc.value.status == 409 and _status(exc.value)["reason"] == "AlreadyExists"
    stale = v1.read_namespaced_config_map("cm", "default")
    v1.replace_namespaced_config_map("cm", "default", {"metadata": {"name": "cm"}, "data": {"a": "2"}})
    stale.data = {"a": "3"}
    with pytest.raises(ApiException) as exc:
        v1.replace_namespaced_config_map("cm", "default", stale)
    assert exc.value.status == 409 and "the object has been modified" in _status(exc.value)["message"]


def test_watch_replays_from_resource_version_and_ends_at_timeout(api: client.ApiClient) -> None:
    v1 = client.CoreV1Api(api)
    start_rv = v1.list_namespaced_config_map("default").metadata.resource_version
    v1.create_namespaced_config_map("default", {"metadata": {"name": "one"}})
    v1.patch_namespaced_config_map("one", "default", {"data": {"k": "v"}})
    v1.delete_namespaced_config_map("one", "default")

    w = watch.Watch()
    seen = []
    # timeout_seconds makes the server end the stream; the client then returns (bounded).
    for event in w.stream(v1.list_namespaced_config_map, "default", resource_version=start_rv, timeout_seconds=1):
        seen.append((event["type"], event["object"].metadata.name))
    assert seen == [("ADDED", "one"), ("MODIFIED", "one"), ("DELETED", "one")]


def test_watch_sees_live_events_with_label_selector(api: client.ApiClient, sandbox) -> None:
    v1 = client.CoreV1Api(api)
    rv = v1.list_namespaced_pod("default").metadata.resource_version
    sandbox.tracker.create(PODS, _pod("other") | {"metadata": {"name": "other", "labels": {"app": "x"}}}, "default")
    sandbox.tracker.create(PODS, _pod("mine"), "default")
    w = watch.Watch()
    names = set()
    for event in w.stream(
        v1.list_namespaced_pod, "default", label_selector="app=demo", resource_version=rv, timeout_seconds=2
    ):
        assert event["object"].metadata.labels["app"] == "demo"
        names.add(event["object"].metadata.name)
        if event["type"] == "MODIFIED" and event["object"].status.phase == "Running":
            w.stop()
    assert names == {"mine"}


@pytest.mark.sandbox(watch_history=3, kubelet=False)
def test_watch_from_expired_resource_version_gets_410(api: client.ApiClient, sandbox) -> None:
    v1 = client.CoreV1Api(api)
    old_rv = v1.list_namespaced_config_map("default").metadata.resource_version
    for i in range(6):
        sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": f"cm-{i}"}}, "default")
    w = watch.Watch()
    # The server answers the watch with one ERROR event (Status 410 Expired); the client raises it.
    with pytest.raises(ApiException) as exc:
        for _ in w.stream(v1.list_namespaced_config_map, "default", resource_version=old_rv, timeout_seconds=2):
            pass
    assert exc.value.status == 410
    assert "too old resource version" in exc.value.reason


def test_pagination_with_limit_and_continue(api: client.ApiClient, sandbox) -> None:
    v1 = client.CoreV1Api(api)
    for i in range(5):
        sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": f"page-{i}"}}, "default")
    names, token, pages = [], None, 0
    while True:
        page = v1.list_namespaced_config_map("default", limit=2, _continue=token)
        pages += 1
        names += [cm.metadata.name for cm in page.items]
        token = page.metadata._continue
        if not token:
            break
        assert page.metadata.remaining_item_count is None or page.metadata.remaining_item_count > 0
    assert names == [f"page-{i}" for i in range(5)] and pages == 3


def test_crd_then_custom_objects_with_status_subresource(api: client.ApiClient) -> None:
    ext = client.ApiextensionsV1Api(api)
    crd = ext.create_custom_resource_definition(GADGET_CRD)
    assert crd.metadata.name == "gadgets.example.com"
    established = ext.read_custom_resource_definition("gadgets.example.com")
    assert any(c.type == "Established" and c.status == "True" for c in established.status.conditions)

    groups = {g.name for g in client.ApisApi(api).get_api_versions().groups}
    assert "example.com" in groups

    co = client.CustomObjectsApi(api)
    body = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g1"}, "spec": {"size": 2}}
    created = co.create_namespaced_custom_object("example.com", "v1", "default", "gadgets", body)
    assert created["metadata"]["generation"] == 1

    # The status subresource only changes status; the main resource ignores status.
    with_status = dict(created, status={"phase": "Ready"})
    after_main = co.replace_namespaced_custom_object("example.com", "v1", "default", "gadgets", "g1", with_status)
    assert "status" not in after_main or after_main["status"].get("phase") != "Ready"
    co.patch_namespaced_custom_object_status(
        "example.com", "v1", "default", "gadgets", "g1", {"status": {"phase": "Ready"}}
    )
    got = co.get_namespaced_custom_object("example.com", "v1", "default", "gadgets", "g1")
    assert got["status"] == {"phase": "Ready"} and got["spec"] == {"size": 2}

    co.patch_namespaced_custom_object("example.com", "v1", "default", "gadgets", "g1", {"spec": {"size": 4}})
    got = co.get_namespaced_custom_object("example.com", "v1", "default", "gadgets", "g1")
    assert got["spec"]["size"] == 4 and got["metadata"]["generation"] == 2

    with pytest.raises(ApiException) as exc:
        co.create_namespaced_custom_object(
            "example.com", "v1", "default", "gadgets", dict(body, metadata={"name": "bad"}, spec={"size": 0})
        )
    assert exc.value.status == 422 and "spec.size" in _status(exc.value)["message"]

    listed = co.list_namespaced_custom_object("example.com", "v1", "default", "gadgets")
    assert [o["metadata"]["name"] for o in listed["items"]] == ["g1"]
    co.delete_namespaced_custom_object("example.com", "v1", "default", "gadgets", "g1")
    assert co.list_namespaced_custom_object("example.com", "v1", "default", "gadgets")["items"] == []


def test_deployment_gets_pods_and_status(api: client.ApiClient) -> None:
    apps = client.AppsV1Api(api)
    labels = {"app": "dep"}
    apps.create_namespaced_deployment(
        "default",
        {
            "metadata": {"name": "dep"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
            },
        },
    )
    status = wait_for("the condition",
        lambda: (s := apps.read_namespaced_deployment_status("dep", "default").status) and s.ready_replicas == 2 and s
    )
    assert status.available_replicas == 2 and status.observed_generation == 1
    pods = client.CoreV1Api(api).list_namespaced_pod("default", label_selector="app=dep").items
    [rs] = apps.list_namespaced_replica_set("default", label_selector="app=dep").items
    assert rs.metadata.owner_references[0].kind == "Deployment" and rs.status.available_replicas == 2
    assert len(pods) == 2 and all(p.metadata.owner_references[0].uid == rs.metadata.uid for p in pods)
