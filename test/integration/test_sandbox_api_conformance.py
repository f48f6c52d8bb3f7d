"""Where the sandbox API server must answer as kube-apiserver does (list-option validation, delete collection,
watch stream lifecycle), spoken raw over HTTP."""

from __future__ import annotations

import json
import socket
import threading

import pytest
from sandbox_http import RawClient
from testkit import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False)]

CM_PATH = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
def http(sandbox) -> RawClient:
    return RawClient(sandbox.url)


def _cm(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}}


def _invalid_list_options(reply) -> str:
    assert reply.status == 422, reply.body
    body = reply.json()
    assert (body["kind"], body["reason"], body["code"]) == ("Status", "Invalid", 422)
    assert body["details"]["kind"] == "ListOptions" and body["details"]["group"] == "meta.k8s.io"
    assert body["message"].startswith('ListOptions.meta.k8s.io "" is invalid: ')
    return body["message"]


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("resourceVersionMatch=NotOlderThan", "resourceVersionMatch is forbidden unless resourceVersion is provided"),
        ("resourceVersionMatch=Exact&resourceVersion=0", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
        ("resourceVersionMatch=Newest&resourceVersion=1", 'Unsupported value: "Newest"'),
        ("sendInitialEvents=true", "sendInitialEvents is forbidden for list"),
        ("watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=1",
         "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"),
        ("watch=1&sendInitialEvents=true", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
        ("watch=1&sendInitialEvents=true&resourceVersionMatch=Exact", 'Unsupported value: "Exact"'),
    ],
)
def test_invalid_list_option_combinations_are_422_list_options(http: RawClient, query: str, detail: str) -> None:
    assert detail in _invalid_list_options(http.get(f"{CM_PATH}?{query}&timeoutSeconds=1"))


def test_delete_collection_validates_its_list_options(http: RawClient) -> None:
    assert http.request("POST", CM_PATH, _cm("kept")).status == 201
    _invalid_list_options(http.request("DELETE", f"{CM_PATH}?resourceVersionMatch=Exact"))
    assert http.get(f"{CM_PATH}/kept").status == 200


def test_valid_resource_version_match_combinations_are_served(http: RawClient) -> None:
    created = http.request("POST", CM_PATH, _cm("a"))
    assert created.status == 201
    rv = created.json()["metadata"]["resourceVersion"]
    for query in (f"resourceVersionMatch=Exact&resourceVersion={rv}", "resourceVersionMatch=NotOlderThan&resourceVersion=0"):
        reply = http.get(f"{CM_PATH}?{query}")
        assert reply.status == 200, (query, reply.body)
        assert [i["metadata"]["name"] for i in reply.json()["items"]] == ["a"]
    events = http.watch_events(f"{CM_PATH}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                               "&allowWatchBookmarks=true&timeoutSeconds=1")
    assert [e["type"] for e in events][:2] == ["ADDED", "BOOKMARK"]


def test_delete_collection_honours_propagation_policy_and_answers_the_deleted_list(http: RawClient) -> None:
    owner = http.request("POST", CM_PATH, _cm("owner", role="owner")).json()
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    dependent = _cm("dependent")
    dependent["metadata"]["ownerReferences"] = [ref]
    assert http.request("POST", CM_PATH, dependent).status == 201

    reply = http.request("DELETE", f"{CM_PATH}?labelSelector=role%3Downer&propagationPolicy=Orphan")
    assert reply.status == 200, reply.body
    body = reply.json()
    assert (body["kind"], body["apiVersion"]) == ("ConfigMapList", "v1")
    assert [i["metadata"]["name"] for i in body["items"]] == ["owner"]

    wait_for("the owner to be deleted", lambda: http.get(f"{CM_PATH}/owner").status == 404, timeout=5)
    survivor = http.get(f"{CM_PATH}/dependent")
    assert survivor.status == 200, "Orphan must leave the dependent in place"
    assert not survivor.json()["metadata"].get("ownerReferences")


def test_delete_collection_across_all_namespaces_is_not_a_route(http: RawClient) -> None:
    assert http.request("POST", CM_PATH, _cm("kept")).status == 201
    reply = http.request("DELETE", "/api/v1/configmaps")
    assert reply.status == 405, reply.body
    assert reply.json()["reason"] == "MethodNotAllowed"
    assert http.get(f"{CM_PATH}/kept").status == 200


def _raw_watch(sandbox, query: str) -> socket.socket:
    sock = socket.create_connection((sandbox.server.host, sandbox.server.port), timeout=5)
    sock.sendall(f"GET {CM_PATH}?watch=1&{query} HTTP/1.1\r\nHost: sandbox\r\n\r\n".encode())
    return sock


@pytest.mark.parametrize("query", ["", "allowWatchBookmarks=true", "resourceVersion=999999"])
def test_a_client_that_disconnects_ends_its_watch(sandbox, query: str) -> None:
    sock = _raw_watch(sandbox, query)
    try:
        assert sock.recv(12).startswith(b"HTTP/1.1 200")
        wait_for("sandbox.server.open_watches == 1", lambda: sandbox.server.open_watches == 1)
    finally:
        sock.close()
    wait_for("the server to close the watch nobody reads", lambda: sandbox.server.open_watches == 0)


def test_many_watchers_and_writers_see_every_event_without_deadlock(http: RawClient, sandbox) -> None:
    watchers, writers, per_writer = 10, 3, 15
    expected = {f"w{w}-{i}" for w in range(writers) for i in range(per_writer)}
    seen: list[set[str]] = [set() for _ in range(watchers)]

    def watch(slot: int) -> None:
        for _, event in RawClient(sandbox.url, timeout=10).stream(f"{CM_PATH}?watch=1&timeoutSeconds=10"):
            if event is None:
                return
            seen[slot].add(event["object"]["metadata"]["name"])
            if seen[slot] >= expected:
                return

    def write(w: int) -> None:
        for i in range(per_writer):
            assert http.request("POST", CM_PATH, _cm(f"w{w}-{i}")).status == 201

    watch_threads = [threading.Thread(target=watch, args=(n,), daemon=True) for n in range(watchers)]
    for t in watch_threads:
        t.start()
    wait_for("sandbox.server.open_watches == watchers", lambda: sandbox.server.open_watches == watchers)
    write_threads = [threading.Thread(target=write, args=(w,), daemon=True) for w in range(writers)]
    for t in write_threads:
        t.start()
    for t in write_threads + watch_threads:
        t.join(15)
        assert not t.is_alive()
    assert all(s == expected for s in seen)
    wait_for("sandbox.server.open_watches == 0", lambda: sandbox.server.open_watches == 0)


DATASETS = "/apis/sedna.io/v1alpha1/namespaces/default/datasets"


def _dataset(name: str, **extra_spec: str) -> dict:
    spec = {"url": "/data/index.txt", "format": "txt", "nodeName": "edge-0", **extra_spec}
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": name}, "spec": spec}


@pytest.mark.sandbox(kubelet=False, crd_dirs=["charts/sedna/crds"])
def test_field_validation_of_custom_resources(http: RawClient) -> None:
    strict = http.request("POST", f"{DATASETS}?fieldValidation=Strict", _dataset("s", bogus="x"))
    assert strict.status == 400, strict.body
    assert strict.json()["reason"] == "BadRequest"
    assert strict.json()["message"] == (
        'Dataset in version "v1alpha1" cannot be handled as a Dataset: strict decoding error: unknown field "spec.bogus"'
    )
    assert http.get(f"{DATASETS}/s").status == 404

    warned = http.request("POST", DATASETS, _dataset("w", bogus="x"))  # no directive means Warn
    assert warned.status == 201, warned.body
    assert warned.headers.get("warning") == '299 - "unknown field \\"spec.bogus\\""'
    assert "bogus" not in warned.json()["spec"]

    updated = warned.json()
    updated["spec"]["other"] = "y"
    replaced = http.request("PUT", f"{DATASETS}/w?fieldValidation=Strict", updated)
    assert replaced.status == 400 and 'unknown field "spec.other"' in replaced.json()["message"]

    ignored = http.request("POST", f"{DATASETS}?fieldValidation=Ignore", _dataset("i", bogus="x"))
    assert ignored.status == 201 and "warning" not in ignored.headers
    assert http.request("POST", f"{DATASETS}?fieldValidation=Strict", _dataset("ok")).status == 201

    bad = http.request("POST", f"{DATASETS}?fieldValidation=Loud", _dataset("b"))
    assert bad.status == 422 and "CreateOptions" in bad.json()["message"], bad.body


def test_put_needs_the_url_name_in_the_body(http: RawClient) -> None:
    created = http.request("POST", CM_PATH, _cm("a")).json()
    nameless = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"resourceVersion": created["metadata"]["resourceVersion"]}}
    reply = http.request("PUT", f"{CM_PATH}/a", nameless)
    assert reply.status == 400, reply.body
    assert reply.json()["message"] == "the name of the object () does not match the name on the URL (a)"


def _read_chunk(reader) -> bytes:
    size = int(reader.readline().strip(), 16)
    data = reader.read(size)
    assert reader.read(2) == b"\r\n"
    return data


def test_watch_framing_one_chunk_per_event_then_terminator_and_keep_alive(http: RawClient, sandbox) -> None:
    for name in ("f1", "f2"):
        assert http.request("POST", CM_PATH, _cm(name)).status == 201
    sock = _raw_watch(sandbox, "timeoutSeconds=1&allowWatchBookmarks=false")
    reader = sock.makefile("rb")
    try:
        assert reader.readline().startswith(b"HTTP/1.1 200")
        headers = {}
        while (line := reader.readline()) not in (b"\r\n", b""):
            key, _, value = line.decode().partition(":")
            headers[key.strip().lower()] = value.strip()
        assert headers["transfer-encoding"] == "chunked" and headers["content-type"] == "application/json"
        chunks = []
        while (chunk := _read_chunk(reader)) != b"":
            chunks.append(chunk)
        assert [c.count(b"\n") for c in chunks] == [1, 1] and all(c.endswith(b"\n") for c in chunks)
        assert [json.loads(c)["object"]["metadata"]["name"] for c in chunks] == ["f1", "f2"]
        # the connection is still usable after the stream ended
        sock.sendall(f"GET {CM_PATH}/f1 HTTP/1.1\r\nHost: sandbox\r\n\r\n".encode())
        assert reader.readline().startswith(b"HTTP/1.1 200")
    finally:
        reader.close()
        sock.close()
    wait_for("sandbox.server.open_watches == 0", lambda: sandbox.server.open_watches == 0)


def test_a_burst_of_connections_is_accepted_not_dropped(sandbox) -> None:
    """Like kube-apiserver's listener, the sandbox keeps a deep accept backlog: a burst of clients (informers
    starting together) must not lose SYNs and stall for seconds in TCP retransmission."""
    clients, socks, failures = 200, [], []
    lock = threading.Lock()

    def connect() -> None:
        try:
            sock = socket.create_connection((sandbox.server.host, sandbox.server.port), timeout=5)
            sock.sendall(f"GET {CM_PATH}?watch=1 HTTP/1.1\r\nHost: sandbox\r\n\r\n".encode())
            with lock:
                socks.append(sock)
            assert sock.recv(12).startswith(b"HTTP/1.1 200")
        except OSError as exc:
            with lock:
                failures.append(repr(exc))

    threads = [threading.Thread(target=connect, daemon=True) for _ in range(clients)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(15)
        assert failures == []
        wait_for("sandbox.server.open_watches == clients", lambda: sandbox.server.open_watches == clients)
    finally:
        for sock in socks:
            sock.close()
    wait_for("sandbox.server.open_watches == 0", lambda: sandbox.server.open_watches == 0)


@pytest.mark.parametrize(
    ("query", "watches"),
    [("watch", True), ("watch=", True), ("watch=yes", True), ("watch=T", True), ("watch=False", False),
     ("watch=0&watch=1", False), ("watch=1&watch=0", True)],
)
def test_boolean_query_parameters_are_read_as_kube_apiserver_reads_them(http: RawClient, query: str, watches: bool) -> None:
    """Only absence, "0" and "false" (any case) are false; a repeated parameter counts by its first value."""
    reply = http.get(f"{CM_PATH}?{query}&timeoutSeconds=1")
    assert reply.status == 200, reply.body
    assert (reply.headers.get("transfer-encoding") == "chunked") is watches


def test_send_initial_events_one_means_true(http: RawClient) -> None:
    events = http.watch_events(f"{CM_PATH}?watch=1&sendInitialEvents=1&resourceVersionMatch=NotOlderThan"
                               "&allowWatchBookmarks=1&timeoutSeconds=1")
    assert [e["type"] for e in events][:1] == ["BOOKMARK"]
    assert events[0]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
