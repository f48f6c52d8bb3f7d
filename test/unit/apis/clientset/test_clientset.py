"""The real clientset's verbs against a local stub API server: paths, methods, bodies, headers, errors."""

from __future__ import annotations

import gzip
import socket

import orjson
import pytest

from apis import errors
from apis import resources as r
from apis.clientset import (
    ApiConnectionError,
    ApiConnectionRefusedError,
    ApiConnectionTimeoutError,
    Clientset,
    ResponseDecodeError,
    is_connection_refused,
)

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "default"}, "spec": {}}
POD_PATH = "/api/v1/namespaces/default/pods"


def test_get_builds_the_core_path_and_sends_auth_and_user_agent(stub, cs):
    stub.json("GET", f"{POD_PATH}/p1", 200, POD)
    assert cs.core_v1().pods("default").get("p1") == POD
    req = stub.last()
    assert req.headers["authorization"] == "Bearer secret-token"
    assert req.headers["user-agent"].startswith("sedna-controlplane/")
    assert req.headers["accept"] == "application/json"


def test_group_and_cluster_scoped_paths(stub, cs):
    stub.json("GET", "/apis/sedna.io/v1alpha1/namespaces/ns1/incrementallearningjobs/j", 200, {"kind": "X"})
    stub.json("GET", "/api/v1/nodes/n1", 200, {"kind": "Node"})
    stub.json("GET", "/apis/apps/v1/deployments", 200, {"kind": "DeploymentList", "items": []})
    assert cs.sedna_v1alpha1().incremental_learning_jobs("ns1").get("j") == {"kind": "X"}
    assert cs.core_v1().nodes().get("n1") == {"kind": "Node"}
    assert cs.apps_v1().deployments("").list()["items"] == []


def test_a_server_address_with_a_path_prefixes_every_request(stub):
    """An API server behind a path (a proxy's /k8s/clusters/c-1) gets that path on every request line."""
    prefix = "/k8s/clusters/c-1"
    stub.json("GET", f"{prefix}{POD_PATH}/p1", 200, POD)
    stub.json("GET", f"{prefix}{POD_PATH}", 200, {"kind": "PodList", "metadata": {"resourceVersion": "5"}, "items": []})
    client = Clientset.from_url(stub.url + prefix + "/", token="t", connect_timeout=5, request_timeout=5)
    try:
        assert client.core_v1().pods("default").get("p1") == POD
        assert client.core_v1().pods("default").list(limit=1)["items"] == []
        assert stub.last().path == f"{prefix}{POD_PATH}" and stub.last().query == {"limit": "1"}
    finally:
        client.close()


def test_cluster_scoped_resource_refuses_a_namespace(cs):
    with pytest.raises(ValueError, match="cluster-scoped"):
        cs.resource(r.NODES, "default")


def test_unknown_resource_is_a_key_error(cs):
    with pytest.raises(KeyError, match="unknown resource"):
        cs.resource(r.GroupVersionResource("nope.io", "v1", "things"))


def test_names_that_would_change_the_path_are_refused(cs):
    pods = cs.core_v1().pods("default")
    for bad in ("", "..", "a/b"):
        with pytest.raises(ValueError):
            pods.get(bad)
    with pytest.raises(ValueError, match="namespace is required"):
        cs.core_v1().pods("").get("p1")


def test_list_sends_options_and_returns_the_list_as_sent(stub, cs):
    body = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "42", "continue": "tok"},
            "items": [POD]}
    stub.json("GET", "/api/v1/pods", 200, body)
    got = cs.core_v1().pods().list(resource_version="0", limit=500, label_selector="app=a", field_selector="x=y")
    assert got == body
    assert stub.last().query == {"resourceVersion": "0", "limit": "500", "labelSelector": "app=a",
                                 "fieldSelector": "x=y"}


def test_list_decodes_a_gzip_answer(stub, cs):
    body = {"kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": [POD] * 50}
    stub.on("GET", POD_PATH, lambda req, resp: resp.send_bytes(
        200, gzip.compress(orjson.dumps(body)), headers={"Content-Encoding": "gzip"}))
    assert cs.core_v1().pods("default").list() == body
    assert "gzip" in stub.last().headers["accept-encoding"]


def test_create_posts_to_the_objects_namespace(stub, cs):
    stub.json("POST", POD_PATH, 201, POD)
    assert cs.core_v1().pods().create(POD) == POD
    req = stub.last()
    assert req.json() == POD
    assert req.headers["content-type"] == "application/json"


def test_create_namespace_mismatch_is_a_bad_request(cs):
    with pytest.raises(errors.BadRequestError, match="does not match"):
        cs.core_v1().pods("other").create(POD)


def test_update_and_update_status_put(stub, cs):
    stub.json("PUT", f"{POD_PATH}/p1", 200, POD)
    stub.json("PUT", f"{POD_PATH}/p1/status", 200, POD)
    pods = cs.core_v1().pods("default")
    pods.update(POD)
    assert stub.last().path == f"{POD_PATH}/p1"
    pods.update_status(POD)
    assert (stub.last().method, stub.last().path) == ("PUT", f"{POD_PATH}/p1/status")
    with pytest.raises(ValueError, match="no metadata.name"):
        pods.update({"metadata": {}})


@pytest.mark.parametrize(
    ("patch_type", "body", "content_type"),
    [
        ("merge", {"metadata": {"labels": {"a": "b"}}}, "application/merge-patch+json"),
        ("strategic", {"spec": {}}, "application/strategic-merge-patch+json"),
        ("json", [{"op": "add", "path": "/metadata/labels/a", "value": "b"}], "application/json-patch+json"),
    ],
)
def test_patch_content_types(stub, cs, patch_type, body, content_type):
    stub.json("PATCH", f"{POD_PATH}/p1", 200, POD)
    cs.core_v1().pods("default").patch("p1", body, patch_type=patch_type)
    req = stub.last()
    assert req.headers["content-type"] == content_type
    assert req.json() == body
    assert req.query == {}


def test_apply_patch_sends_field_manager_and_force(stub, cs):
    stub.json("PATCH", f"{POD_PATH}/p1/status", 200, POD)
    pods = cs.core_v1().pods("default")
    pods.patch("p1", {"status": {}}, patch_type="apply", subresource="status")
    assert stub.last().headers["content-type"] == "application/apply-patch+yaml"
    assert stub.last().query == {"fieldManager": "sedna-controlplane"}
    pods.patch("p1", {"status": {}}, patch_type="apply", subresource="status", field_manager="gm", force=True)
    assert stub.last().query == {"fieldManager": "gm", "force": "true"}


def test_patch_rejects_bad_input(cs):
    pods = cs.core_v1().pods("default")
    with pytest.raises(ValueError, match="unknown patch_type"):
        pods.patch("p1", {}, patch_type="xml")
    with pytest.raises(ValueError, match="list of operations"):
        pods.patch("p1", {"op": "add"}, patch_type="json")
    with pytest.raises(ValueError, match="force"):
        pods.patch("p1", {}, force=True)


def test_delete_sends_delete_options(stub, cs):
    stub.json("DELETE", f"{POD_PATH}/p1", 200, {"kind": "Status", "status": "Success"})
    got = cs.core_v1().pods("default").delete(
        "p1", propagation_policy="Foreground", preconditions={"uid": "u1", "resourceVersion": "7"})
    assert got["status"] == "Success"
    assert stub.last().json() == {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground",
                                  "preconditions": {"uid": "u1", "resourceVersion": "7"}}


def test_delete_rejects_bad_options(cs):
    pods = cs.core_v1().pods("default")
    with pytest.raises(ValueError, match="propagation_policy"):
        pods.delete("p1", propagation_policy="Cascade")
    with pytest.raises(ValueError, match="precondition"):
        pods.delete("p1", preconditions={"generation": 1})


def test_delete_collection_sends_selector_and_options(stub, cs):
    stub.json("DELETE", POD_PATH, 200, {"kind": "Status", "status": "Success"})
    assert cs.core_v1().pods("default").delete_collection(label_selector="app=a", propagation_policy="Background") is None
    req = stub.last()
    assert req.query == {"labelSelector": "app=a"}
    assert req.json()["propagationPolicy"] == "Background"


def test_not_found_is_typed_with_the_status_message(stub, cs):
    stub.on("GET", f"{POD_PATH}/gone", lambda req, resp: resp.send_status(404, "NotFound", 'pods "gone" not found'))
    with pytest.raises(errors.NotFoundError) as info:
        cs.core_v1().pods("default").get("gone")
    assert str(info.value) == 'pods "gone" not found'
    assert errors.is_not_found(info.value)


@pytest.mark.parametrize(("reason", "cls"), [("AlreadyExists", errors.AlreadyExistsError),
                                             ("Conflict", errors.ConflictError)])
def test_409_is_typed_by_reason(stub, cs, reason, cls):
    stub.on("POST", POD_PATH, lambda req, resp: resp.send_status(409, reason, "x"))
    with pytest.raises(cls) as info:
        cs.core_v1().pods("default").create(POD)
    assert type(info.value) is cls


def test_error_without_status_body_keeps_the_text(stub, cs):
    stub.on("GET", f"{POD_PATH}/p1", lambda req, resp: resp.send_bytes(503, b"upstream down", "text/plain"))
    with pytest.raises(errors.ServiceUnavailableError, match="upstream down"):
        cs.core_v1().pods("default").get("p1")


def test_a_2xx_answer_that_is_not_json_is_a_decode_error(stub, cs):
    stub.on("GET", f"{POD_PATH}/p1", lambda req, resp: resp.send_bytes(200, b"<html>", "text/html"))
    with pytest.raises(ResponseDecodeError, match="not JSON"):
        cs.core_v1().pods("default").get("p1")


def test_a_2xx_json_answer_that_is_not_an_object_is_a_decode_error(stub, cs):
    stub.on("GET", f"{POD_PATH}/p1", lambda req, resp: resp.send_bytes(200, b"[1, 2]", "application/json"))
    with pytest.raises(ResponseDecodeError, match="not an object but list"):
        cs.core_v1().pods("default").get("p1")


def _refused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_connection_refused_is_the_builtin_connection_refused_error():
    with Clientset.from_url(f"http://127.0.0.1:{_refused_port()}", connect_timeout=5) as client:
        for call in (lambda: client.core_v1().pods("default").get("p1"), lambda: client.core_v1().pods().watch()):
            with pytest.raises(ConnectionRefusedError) as info:
                call()
            assert isinstance(info.value, ApiConnectionRefusedError)
            assert isinstance(info.value, ApiConnectionError)
            assert is_connection_refused(info.value)
            assert "connection refused" in str(info.value)


def test_a_slow_answer_hits_the_read_timeout(stub):
    gate = stub.gate()

    def slow(req, resp):
        gate.wait(10)
        resp.send_json(200, {})

    stub.on("GET", f"{POD_PATH}/p1", slow)
    with Clientset.from_url(stub.url, request_timeout=0.2) as client:
        with pytest.raises(ApiConnectionTimeoutError, match="read timeout") as info:
            client.core_v1().pods("default").get("p1")
    assert isinstance(info.value, TimeoutError)
    gate.set()


def test_bad_addresses_and_timeouts_are_refused():
    with pytest.raises(ValueError, match="invalid API server address"):
        Clientset.from_url("localhost:6443")
    with pytest.raises(ValueError, match="positive"):
        Clientset.from_url("http://127.0.0.1:1", request_timeout=0)


def test_keep_alive_connections_are_reused(stub, cs):
    stub.json("GET", f"{POD_PATH}/p1", 200, POD)
    pods = cs.core_v1().pods("default")
    for _ in range(5):
        pods.get("p1")
    pool = cs.transport._requests
    assert pool.connections_opened == 1
    assert pool.requests_sent == 5
