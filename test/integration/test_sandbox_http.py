"""The sandbox API server's HTTP surface, spoken raw: routing, errors, bodies, patches, deletes, watch streams."""

from __future__ import annotations

import json
import threading
import time

import pytest
import yaml
from sandbox_http import RawClient
from testkit import wait_for

from apis.resources import CONFIGMAPS, DEPLOYMENTS, PODS

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False)]

CM_PATH = "/api/v1/namespaces/default/configmaps"
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


@pytest.fixture
def http(sandbox) -> RawClient:
    return RawClient(sandbox.url)


def _status(reply, code: int) -> dict:
    assert reply.status == code, reply.body
    body = reply.json()
    assert body["kind"] == "Status" and body["code"] == code and body["status"] == "Failure"
    return body


def test_health_version_and_discovery(http: RawClient, sandbox) -> None:
    for path in ("/healthz", "/livez", "/readyz", "/readyz/ping"):
        reply = http.get(path)
        assert (reply.status, reply.body) == (200, b"ok")
    assert http.get("/version").json()["gitVersion"].endswith("-sandbox")
    api = http.get("/api").json()
    assert api["versions"] == ["v1"] and api["serverAddressByClientCIDRs"][0]["serverAddress"].endswith(
        str(sandbox.server.port)
    )
    apps = http.get("/apis/apps").json()
    assert apps["kind"] == "APIGroup" and apps["preferredVersion"]["groupVersion"] == "apps/v1"
    deployments = {r["name"]: r for r in http.get("/apis/apps/v1").json()["resources"]}
    assert deployments["deployments"]["verbs"] == sorted(deployments["deployments"]["verbs"])
    assert deployments["deployments/status"]["verbs"] == ["get", "patch", "update"]
    assert deployments["deployments/scale"]["kind"] == "Scale"
    assert "pods/exec" not in {r["name"] for r in http.get("/api/v1").json()["resources"]}  # only served ones
    v2 = http.get("/openapi/v2", Accept="application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
    assert v2.status == 200 and v2.headers["content-type"].endswith("+protobuf") and v2.body.startswith(b"\n\x032.0")
    assert http.get("/openapi/v2").json()["swagger"] == "2.0"
    assert "apis/apps/v1" in http.get("/openapi/v3").json()["paths"]
    _status(http.get("/openapi/v3/apis/nope/v1"), 404)


def test_routing_errors(http: RawClient) -> None:
    assert _status(http.get("/nope"), 404)["message"] == "the server could not find the requested resource"
    _status(http.get("/api/v1/widgets"), 404)
    _status(http.get("/apis/nope.example.com/v1"), 404)
    _status(http.get("/api/v1/namespaces/default/nodes"), 404)  # cluster-scoped under a namespace
    _status(http.get("/api/v1/pods/p1"), 404)  # namespaced object without a namespace
    _status(http.get("/api/v1/namespaces/default/pods/p1/exec"), 404)
    _status(http.request("PUT", CM_PATH, {}), 405)
    _status(http.request("POST", "/api/v1/pods", {}), 405)
    _status(http.request("DELETE", "/api/v1/namespaces/default/pods/p1/status"), 405)


def test_bad_bodies(http: RawClient) -> None:
    assert "malformed JSON" in _status(http.request("POST", CM_PATH, b"{not json"), 400)["message"]
    assert "must be a JSON object" in _status(http.request("POST", CM_PATH, b"[1, 2]"), 400)["message"]
    assert "empty" in _status(http.request("POST", CM_PATH, b""), 400)["message"]
    wrong_kind = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}
    assert "kind" in _status(http.request("POST", CM_PATH, wrong_kind), 400)["message"]
    assert "limit" in _status(http.get(CM_PATH + "?limit=abc"), 400)["message"]
    assert "labelSelector" in _status(http.get(CM_PATH + "?labelSelector=a%20in%20("), 400)["message"]
    http.request("POST", CM_PATH, {"metadata": {"name": "cm"}})
    mismatch = {"metadata": {"name": "other"}}
    assert "does not match the name on the URL" in _status(http.request("PUT", CM_PATH + "/cm", mismatch), 400)["message"]
    _status(http.request("PATCH", CM_PATH + "/cm", {"data": {}}, content_type="text/plain"), 415)
    _status(http.request("PATCH", CM_PATH + "/cm", b"{oops", content_type="application/merge-patch+json"), 400)


def test_create_yaml_generate_name_and_patch_types(http: RawClient) -> None:
    created = http.request("POST", CM_PATH, "metadata:\n  generateName: gen-\ndata: {a: '1'}\n", "application/yaml")
    assert created.status == 201
    name = created.json()["metadata"]["name"]
    assert name.startswith("gen-") and len(name) == len("gen-") + 5
    path = f"{CM_PATH}/{name}"

    merged = http.request("PATCH", path, {"data": {"b": "2"}}, "application/merge-patch+json").json()
    assert merged["data"] == {"a": "1", "b": "2"}
    ops = [{"op": "replace", "path": "/data/a", "value": "x"}, {"op": "remove", "path": "/data/b"}]
    assert http.request("PATCH", path, ops, "application/json-patch+json").json()["data"] == {"a": "x"}
    smp = http.request("PATCH", path, {"metadata": {"labels": {"l": "1"}}}, "application/strategic-merge-patch+json")
    assert smp.json()["metadata"]["labels"] == {"l": "1"}

    applied_yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: v\n"
    missing_manager = http.request("PATCH", f"{CM_PATH}/applied", applied_yaml, "application/apply-patch+yaml")
    assert "fieldManager" in _status(missing_manager, 400)["message"]
    applied = http.request(
        "PATCH", f"{CM_PATH}/applied?fieldManager=test", applied_yaml, "application/apply-patch+yaml"
    )
    assert applied.status in (200, 201) and applied.json()["data"] == {"k": "v"}


def test_delete_options_and_collection(http: RawClient, sandbox) -> None:
    for i in range(3):
        sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": f"cm-{i}", "labels": {"n": str(i)}}}, "default")
    _status(http.request("DELETE", f"{CM_PATH}/cm-0?propagationPolicy=Sideways"), 400)
    wrong_uid = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "not-the-uid"}}
    assert "Precondition failed" in _status(http.request("DELETE", f"{CM_PATH}/cm-0", wrong_uid), 409)["message"]
    deleted = http.request("DELETE", f"{CM_PATH}/cm-0", {"propagationPolicy": "Foreground"})
    assert deleted.status == 200 and deleted.json()["status"] == "Success"
    assert deleted.json()["details"]["name"] == "cm-0"

    pod = {"metadata": {"name": "p", "finalizers": ["example.com/hold"]}, "spec": {"containers": [{"name": "c"}]}}
    sandbox.tracker.create(PODS, pod, "default")
    pending = http.request("DELETE", "/api/v1/namespaces/default/pods/p")
    assert pending.status == 200 and pending.json()["metadata"]["deletionTimestamp"]  # 202 needs orphanDependents=false

    reply = http.request("DELETE", CM_PATH + "?labelSelector=n%3D1")
    assert reply.status == 200 and reply.json()["kind"] == "ConfigMapList"  # the deleted items, as kube answers
    assert [cm["metadata"]["name"] for cm in reply.json()["items"]] == ["cm-1"]
    names = [cm["metadata"]["name"] for cm in http.get(CM_PATH).json()["items"]]
    assert names == ["cm-2"]


@pytest.mark.parametrize(
    ("method", "path", "body", "content_type", "options_kind"),
    [
        ("POST", CM_PATH, {"metadata": {"name": "new"}}, "application/json", "CreateOptions"),
        ("PUT", f"{CM_PATH}/cm", {"metadata": {"name": "cm"}}, "application/json", "UpdateOptions"),
        ("PATCH", f"{CM_PATH}/cm", {"data": {}}, "application/merge-patch+json", "PatchOptions"),
        ("DELETE", f"{CM_PATH}/cm", None, "application/json", "DeleteOptions"),
        ("DELETE", CM_PATH, None, "application/json", "DeleteOptions"),
    ],
)
def test_a_dry_run_value_other_than_all_is_a_422(
    http: RawClient, sandbox, method: str, path: str, body, content_type: str, options_kind: str
) -> None:
    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "cm"}}, "default")
    rv = sandbox.tracker.resource_version()
    reply = http.request(method, f"{path}?dryRun=All&dryRun=Some", body, content_type)
    status = _status(reply, 422)
    assert status["message"] == (
        f'{options_kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{{"All", "Some"}}: '
        'supported values: "All"'
    )
    assert status["details"]["causes"][0]["field"] == "dryRun"
    assert sandbox.tracker.resource_version() == rv
    assert http.get(f"{CM_PATH}?dryRun=whatever").status == 200  # reads ignore it


def test_dry_run_writes_answer_as_the_write_would_and_persist_nothing(http: RawClient, sandbox) -> None:
    tracker = sandbox.tracker
    held = {"metadata": {"name": "cm", "finalizers": ["example.com/hold"]}, "data": {"a": "1"}}
    tracker.create(CONFIGMAPS, held, "default")
    before = tracker.list(CONFIGMAPS)
    rv = tracker.resource_version()

    generated = {"metadata": {"generateName": "gen-"}, "data": {"b": "2"}}
    created = http.request("POST", f"{CM_PATH}?dryRun=All", generated)
    assert created.status == 201
    md = created.json()["metadata"]
    assert md["name"].startswith("gen-") and md["uid"] and md["creationTimestamp"] and "resourceVersion" not in md
    _status(http.request("POST", f"{CM_PATH}?dryRun=All", {"metadata": {"name": "cm"}}), 409)
    _status(http.request("POST", "/api/v1/namespaces/nowhere/configmaps?dryRun=All", {"metadata": {"name": "x"}}), 404)

    current = http.get(f"{CM_PATH}/cm").json()
    updated = http.request("PUT", f"{CM_PATH}/cm?dryRun=All", {**current, "data": {"a": "2"}})
    assert updated.status == 200 and updated.json()["data"] == {"a": "2"}
    assert updated.json()["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]
    stale = {**current, "metadata": {**current["metadata"], "resourceVersion": "1"}}
    _status(http.request("PUT", f"{CM_PATH}/cm?dryRun=All", stale), 409)
    patched = http.request("PATCH", f"{CM_PATH}/cm?dryRun=All", {"data": {"c": "3"}}, "application/merge-patch+json")
    assert patched.status == 200 and patched.json()["data"] == {"a": "1", "c": "3"}
    applied_yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n"
    applied = http.request(
        "PATCH", f"{CM_PATH}/applied?fieldManager=t&dryRun=All", applied_yaml, "application/apply-patch+yaml"
    )
    assert applied.status == 201 and applied.json()["metadata"]["name"] == "applied"

    deleted = http.request("DELETE", f"{CM_PATH}/cm?dryRun=All")
    assert deleted.status == 200 and deleted.json()["metadata"]["deletionTimestamp"]  # it has a finalizer
    body = {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]}
    assert http.request("DELETE", f"{CM_PATH}/cm", body).status == 200  # kubectl sends it in the body
    collection = http.request("DELETE", f"{CM_PATH}?dryRun=All")
    assert [i["metadata"]["name"] for i in collection.json()["items"]] == ["cm"]

    assert tracker.resource_version() == rv and tracker.list(CONFIGMAPS) == before


def test_dry_run_scale(http: RawClient, sandbox) -> None:
    path = "/apis/apps/v1/namespaces/default/deployments/d"
    sandbox.tracker.create(DEPLOYMENTS, {"metadata": {"name": "d"}, "spec": {"replicas": 1}}, "default")
    rv = sandbox.tracker.resource_version()
    scale = http.request("PATCH", f"{path}/scale?dryRun=All", {"spec": {"replicas": 5}}, "application/merge-patch+json")
    assert scale.status == 200 and scale.json()["spec"]["replicas"] == 5
    assert http.get(f"{path}/scale").json()["spec"]["replicas"] == 1 and sandbox.tracker.resource_version() == rv


def test_a_malformed_grace_period_is_a_400_and_deletes_nothing(http: RawClient, sandbox) -> None:
    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "keep"}}, "default")
    for query in ("gracePeriodSeconds=abc", "gracePeriodSeconds=9223372036854775808", "gracePeriodSeconds=1.5"):
        assert "gracePeriodSeconds" in _status(http.request("DELETE", f"{CM_PATH}/keep?{query}"), 400)["message"]
    for grace in ("30", 1.5, True, 2**63):
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": grace}
        assert "gracePeriodSeconds" in _status(http.request("DELETE", f"{CM_PATH}/keep", body), 400)["message"]
    assert http.get(f"{CM_PATH}/keep").status == 200
    # a negative grace period is valid (kube-apiserver's BeforeDelete reads it as 1 s)
    assert http.request("DELETE", f"{CM_PATH}/keep?gracePeriodSeconds=-1").status == 200


def test_an_unacceptable_accept_header_is_a_406(http: RawClient, sandbox) -> None:
    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "x"}}, "default")
    for accept in ("text/html", "application/yaml", "application/vnd.kubernetes.protobuf", "application/json;q=0"):
        body = _status(http.get(f"{CM_PATH}/x", Accept=accept), 406)
        assert body["reason"] == "NotAcceptable", accept
    for accept in ("", "*/*", "application/*", "application/json; charset=utf-8", TABLE_ACCEPT,
                   "application/vnd.kubernetes.protobuf, application/json", "text/html, */*;q=0.1"):
        assert http.get(f"{CM_PATH}/x", Accept=accept).status == 200, accept


def test_table_responses(http: RawClient, sandbox) -> None:
    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "t1"}}, "default")
    table = http.get(CM_PATH, Accept=TABLE_ACCEPT).json()
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]  # kube's ConfigMap printer
    assert table["rows"][0]["cells"][:2] == ["t1", 0] and table["rows"][0]["object"]["metadata"]["name"] == "t1"
    single = http.get(f"{CM_PATH}/t1", Accept=TABLE_ACCEPT).json()
    assert single["kind"] == "Table" and len(single["rows"]) == 1
    assert http.get(CM_PATH).json()["kind"] == "ConfigMapList"


def test_watch_stream_is_chunked_json_lines_and_honours_timeout(http: RawClient, sandbox) -> None:
    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "w1", "labels": {"a": "1"}}}, "default")
    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "w2", "labels": {"a": "2"}}}, "default")
    stream = http.stream(CM_PATH + "?watch=1&labelSelector=a%3D2&timeoutSeconds=1")
    resp, first = next(stream)
    assert resp.getheader("Transfer-Encoding") == "chunked" and resp.getheader("Content-Type") == "application/json"
    assert first["type"] == "ADDED" and first["object"]["metadata"]["name"] == "w2"
    assert [event for _, event in stream] == [None]  # the server ended the stream after timeoutSeconds

    rv = http.get(CM_PATH).json()["metadata"]["resourceVersion"]
    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "w3"}}, "default")
    legacy = http.watch_events(f"/api/v1/watch/namespaces/default/configmaps?resourceVersion={rv}", limit=1)
    assert legacy[0]["type"] == "ADDED" and legacy[0]["object"]["metadata"]["name"] == "w3"
    by_name = http.watch_events(f"{CM_PATH}?watch=true&fieldSelector=metadata.name%3Dw1&timeoutSeconds=1")
    assert [e["object"]["metadata"]["name"] for e in by_name] == ["w1"]


def assert_live_add_follows(sandbox, stream) -> None:
    """A ConfigMap created now arrives on ``stream`` as the next event that is not a bookmark; closes the stream."""
    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "live"}}, "default")
    for _, event in stream:
        if event["type"] != "BOOKMARK":
            break
    assert event["type"] == "ADDED" and event["object"]["metadata"]["name"] == "live"
    stream.close()


def test_watch_bookmarks_and_live_events(http: RawClient, sandbox) -> None:
    sandbox.tracker.bookmark_interval = 0.05
    rv = http.get(CM_PATH).json()["metadata"]["resourceVersion"]
    stream = http.stream(f"{CM_PATH}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=5")
    _, event = next(stream)
    assert event["type"] == "BOOKMARK" and event["object"]["metadata"]["resourceVersion"]
    assert_live_add_follows(sandbox, stream)


def test_watch_list_send_initial_events(http: RawClient, sandbox) -> None:
    rv = sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "first"}}, "default")["metadata"]["resourceVersion"]
    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "second"}}, "default")
    watch_list = f"{CM_PATH}?watch=1&resourceVersionMatch=NotOlderThan&timeoutSeconds=5"
    events = http.watch_events(f"{watch_list}&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersion={rv}", limit=3)
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in events[:2]] == [("ADDED", "first"), ("ADDED", "second")]
    assert events[2]["type"] == "BOOKMARK"
    assert events[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    sandbox.tracker.bookmark_interval = 0.05
    stream = http.stream(f"{watch_list}&sendInitialEvents=false&allowWatchBookmarks=true")
    _, event = next(stream)  # no initial state: the stream is open once the first bookmark arrives
    assert event["type"] == "BOOKMARK"
    assert_live_add_follows(sandbox, stream)


def test_stop_ends_open_watches(make_sandbox) -> None:
    box = make_sandbox(kubelet=False)
    stream = RawClient(box.url).stream(CM_PATH + "?watch=1&resourceVersion=0")
    results: list = []
    reader = threading.Thread(target=lambda: results.extend(e for _, e in stream), daemon=True)
    reader.start()
    # Once the server holds the watch open, stop the server: the stream ends cleanly and stop() returns.
    wait_for("the server to hold the watch open", lambda: box.server.open_watches == 1, timeout=5)
    box.server.stop()
    reader.join(5)
    assert not reader.is_alive() and results == [None] and box.server.open_watches == 0


def test_kubeconfig_file(sandbox) -> None:
    with open(sandbox.kubeconfig) as f:
        cfg = yaml.safe_load(f)
    assert cfg["current-context"] == "sandbox"
    assert cfg["clusters"][0]["cluster"]["server"] == sandbox.url
    assert cfg["users"][0]["user"]["token"]
    assert json.dumps(cfg)  # plain data only


def test_the_date_header_is_formatted_once_per_second(http: RawClient, monkeypatch) -> None:
    import email.utils

    formatted: list[float] = []
    real = email.utils.formatdate
    monkeypatch.setattr(email.utils, "formatdate", lambda t=None, *a, **k: formatted.append(t) or real(t, *a, **k))
    monkeypatch.setattr("sandbox.apiserver.handler._date", (0, ""))
    started = int(time.time())
    dates = {http.get("/healthz").headers["date"] for _ in range(5)}
    seconds = int(time.time()) - started + 1
    assert len(formatted) <= seconds and len(dates) <= seconds
    for date in dates:
        assert email.utils.parsedate_to_datetime(date).timestamp() >= started - 1
