"""Hostile requests get the 4xx Status kube-apiserver would give, fast, and change nothing (issue 11, items 1, 4, 6):
YAML alias bombs and deep documents on every YAML/JSON entry point, JSON patch bombs, out-of-range query numbers,
malformed request lines, headers and bodies."""

from __future__ import annotations

import json
import socket
from urllib.parse import quote, urlsplit

import pytest
from sandbox_http import RawClient, Reply, raw_exchange
from testkit import billion_laughs, copy_bomb, minimal_crd, nested_json, nested_yaml
from testkit.rawhttp import exchange, statuses

from apis.limits import MAX_DEPTH
from sandbox.apiserver import SANDBOX_TOKEN

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False)]

CMS = "/api/v1/namespaces/default/configmaps"
YAML = "application/yaml"


def assert_status(reply: Reply, code: int, reason: str | None = None, contains: str = "") -> dict:
    assert reply.status == code, (reply.status, reply.body[:300])
    assert reply.headers.get("content-type") == "application/json", reply.headers
    status = json.loads(reply.body)
    assert status["kind"] == "Status" and status["status"] == "Failure" and status["code"] == code, status
    if reason is not None:
        assert status.get("reason") == reason, status
    assert contains in status["message"], status
    return status


def configmap_yaml(name: str, extra: str = "") -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{extra}"


def bomb_field(levels: int) -> str:
    """A ``bomb:`` field holding ``billion_laughs(levels)`` (indented under it)."""
    return "bomb:\n" + "".join(f"  {line}\n" for line in billion_laughs(levels).splitlines())


@pytest.mark.parametrize("levels", [6, 9])
def test_yaml_alias_bomb_is_400_on_create_update_and_apply(sandbox, levels: int) -> None:
    c = RawClient(sandbox.url)
    body = configmap_yaml("bomb", bomb_field(levels))
    assert len(body) < 700
    assert_status(c.request("POST", CMS, body, content_type=YAML), 400, "BadRequest", "excessive aliasing")
    assert c.request("POST", CMS, configmap_yaml("bomb"), content_type=YAML).status == 201
    assert_status(c.request("PUT", f"{CMS}/bomb", body, content_type=YAML), 400, "BadRequest", "excessive aliasing")
    apply = "/api/v1/namespaces/default/configmaps/bomb?fieldManager=t"
    reply = c.request("PATCH", apply, body, content_type="application/apply-patch+yaml")
    assert_status(reply, 400, "BadRequest", "excessive aliasing")
    assert "bomb" not in c.get(f"{CMS}/bomb").json()


def test_deep_documents_are_400(sandbox) -> None:
    c = RawClient(sandbox.url)
    deep_yaml = configmap_yaml("deep", f"x: {nested_yaml(5000)}\n")
    assert_status(c.request("POST", CMS, deep_yaml, content_type=YAML), 400, "BadRequest", "nests deeper")
    deep_json = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":' + nested_json(300) + "}"
    assert_status(c.request("POST", CMS, deep_json), 400, "BadRequest", "nests deeper")
    assert c.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "deep"}}).status == 201
    patch = '{"metadata":{"annotations":' + nested_json(300) + "}}"
    reply = c.request("PATCH", f"{CMS}/deep", patch, content_type="application/merge-patch+json")
    assert_status(reply, 400, "BadRequest", "nests deeper")
    reply = c.request("PATCH", f"{CMS}/deep?fieldManager=t", f"x: {nested_yaml(5000)}", content_type="application/apply-patch+yaml")
    assert_status(reply, 400, "BadRequest", "nests deeper")


def test_json_patch_bombs_are_stopped(sandbox) -> None:
    c = RawClient(sandbox.url, timeout=10)
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"}, "data": {"a": "x" * 100}}
    created = c.request("POST", CMS, obj).json()
    jp = "application/json-patch+json"
    reply = c.request("PATCH", f"{CMS}/p", copy_bomb(30, "/data"), content_type=jp)
    assert_status(reply, 422, "Invalid", "accumulated size increase of copy")
    too_many = [{"op": "test", "path": "/data/a", "value": "x" * 100}] * 10_001
    assert_status(c.request("PATCH", f"{CMS}/p", too_many, content_type=jp), 413, "RequestEntityTooLarge", "10000")
    assert c.get(f"{CMS}/p").json() == created


def test_huge_query_numbers_are_400(sandbox) -> None:
    c = RawClient(sandbox.url)
    for query in ("watch=1&timeoutSeconds=" + "9" * 400, "limit=" + "9" * 400, "timeoutSeconds=9223372036854775808"):
        assert_status(c.get(f"{CMS}?{query}"), 400, "BadRequest", "out of the int64 range")
    for rv in ("9" * 400, "18446744073709551616", "-1"):  # etcd3 resourceVersions are uint64
        assert_status(c.get(f"{CMS}?resourceVersion={rv}"), 400, "BadRequest", "resourceVersion")
        assert_status(c.get(f"{CMS}?watch=1&resourceVersion={rv}"), 400, "BadRequest", "resourceVersion")
    c.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w"}})
    events = c.watch_events(f"{CMS}?watch=1&timeoutSeconds=9223372036854775807", limit=1)  # int64 max is valid
    assert [e["type"] for e in events] == ["ADDED"]


def test_label_selector_on_a_non_string_label_value_never_fails(sandbox) -> None:
    c = RawClient(sandbox.url)
    c.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "l", "labels": {"k": 5}}})
    for selector in ("k>3", "k<9", "k=5", "k!=5", "k in (5)", "k"):
        reply = c.get(f"{CMS}?labelSelector={quote(selector)}")
        assert reply.status == 200, (selector, reply.body[:200])


@pytest.mark.parametrize(
    "request_bytes, code, contains",
    [
        (b"GARBAGE\r\n\r\n", 400, "Bad request syntax"),
        (b"\r\n\r\n", 400, "malformed HTTP request"),
        (b"GET /api HTTP/2.0\r\n\r\n", 505, "Invalid HTTP version"),
        (b"GET /api HTTP/1.1.1\r\n\r\n", 400, "Bad request version"),
        (b"GET /api\r\n\r\n", 400, "malformed HTTP request"),
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414, ""),
        (b"GET /api HTTP/1.1\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n", 431, "Line too long"),
        (b"GET /api HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(150)) + b"\r\n", 431, "Too many headers"),
        # a header line that is not "Name: value" is refused, as Go's server does (it used to drop every header after it)
        (b"GET /api HTTP/1.1\r\nHost: x\r\nno colon here\r\nAccept: */*\r\n\r\n", 400, "malformed header line"),
        (b"GET /api HTTP/1.1\r\nHost : x\r\n\r\n", 400, "malformed header line"),
        (b"FROB /api/v1/pods HTTP/1.1\r\nHost: x\r\n\r\n", 405, "FROB"),
        (b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nContent-Length: abc\r\n\r\n", 400, "Content-Length"),
        (b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nContent-Length: -5\r\n\r\n", 400, "Content-Length"),
        (b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", 413, "limit is 3145728"),
        (b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"a\":", 400, "unexpected EOF"),
        (b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "chunk size"),
        (b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nfffffffff\r\n", 413, "limit"),
        (b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{}", 400, "unexpected EOF"),
        (b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n", 400, "CRLF"),
        (b"GET http://[::1/api HTTP/1.1\r\n\r\n", 400, "request target"),
    ],
)
def test_malformed_http_gets_a_status(sandbox, request_bytes: bytes, code: int, contains: str) -> None:
    reply = raw_exchange(sandbox.url, request_bytes)
    assert_status(reply, code, contains=contains)
    assert reply.headers.get("connection") == "close"
    assert RawClient(sandbox.url).get(CMS).status == 200  # still serving


def test_a_well_formed_chunked_body_still_works(sandbox) -> None:
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "chunky"}}).encode()
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:10], body[10:])) + b"0\r\nX-T: 1\r\n\r\n"
    head = b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nContent-Type: application/json\r\n"
    reply = raw_exchange(sandbox.url, head + b"Transfer-Encoding: chunked\r\n\r\n" + chunked)
    assert reply.status == 201, reply.body


def test_a_refused_body_still_gets_its_answer_while_the_client_sends(sandbox) -> None:
    body = b"x" * (3 * 1024 * 1024 + 512 * 1024)  # over the limit: refused from the headers, never read
    head = f"POST {CMS} HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    reply = raw_exchange(sandbox.url, head + body, half_close=False)
    assert_status(reply, 413, "RequestEntityTooLarge", "limit is 3145728")


def test_an_object_at_the_depth_limit_is_served_everywhere(sandbox) -> None:
    c = RawClient(sandbox.url)
    crd = minimal_crd("example.org", "things", "Thing")
    assert c.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).status == 201
    things = "/apis/example.org/v1/namespaces/default/things"
    deep: dict = {}
    for _ in range(MAX_DEPTH - 2):  # the object and its spec are two levels
        deep = {"a": deep}
    thing = {"apiVersion": "example.org/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": deep}
    created = c.request("POST", things, thing)
    assert created.status == 201, created.body[:200]
    assert c.get(f"{things}/t").json()["spec"] == deep
    assert c.get(things).json()["items"][0]["spec"] == deep
    assert c.get(things, Accept="application/json;as=Table;v=v1;g=meta.k8s.io").status == 200
    assert [e["type"] for e in c.watch_events(f"{things}?watch=1", limit=1)] == ["ADDED"]
    merge = c.request("PATCH", f"{things}/t", {"metadata": {"labels": {"k": "v"}}}, content_type="application/merge-patch+json")
    assert merge.status == 200
    too_deep = c.request("PATCH", f"{things}/t", {"spec": {"b": {"c": deep}}}, content_type="application/merge-patch+json")
    assert_status(too_deep, 400, "BadRequest", "nests deeper")  # the patch itself is too deep
    grow = [{"op": "add", "path": "/spec/a/b", "value": {"c": deep["a"]["a"]}}]  # a patch within bounds, its result not
    assert_status(c.request("PATCH", f"{things}/t", grow, content_type="application/json-patch+json"), 422, "Invalid", "nests deeper")


def test_an_idle_keep_alive_connection_is_closed_after_the_idle_timeout(sandbox, monkeypatch) -> None:
    """The kernel keeps the idle timeout (SO_RCVTIMEO): once it runs out the server closes the connection, which the
    client sees as the end of the stream after its answer."""
    monkeypatch.setattr("sandbox.apiserver.handler.IDLE_TIMEOUT_SECONDS", 1)
    host, port = urlsplit(sandbox.url).hostname, urlsplit(sandbox.url).port
    with socket.create_connection((host, port), timeout=30) as conn:
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        received = b""
        while data := conn.recv(65536):  # a connection left open would time out here (30 s) and fail the test
            received += data
    assert received.startswith(b"HTTP/1.1 200") and received.endswith(b"\r\n\r\nok")


def test_two_different_content_lengths_are_400_and_close_nothing_smuggled_behind(sandbox) -> None:
    """Issue 38 item 5: the sandbox read the first ``Content-Length`` and took the bytes after it as a second
    request, so a DELETE without a token passed behind an authenticated request (framed by a proxy with the other
    length). Go's server answers 400 and closes (RFC 9112 §6.3)."""
    c = RawClient(sandbox.url)
    assert c.request("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "victim"}}).status == 201
    smuggled = f"DELETE {CMS}/victim HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    head = (f"POST {CMS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {SANDBOX_TOKEN}\r\n"
            f"Content-Type: application/json\r\nContent-Length: 0\r\nContent-Length: {len(smuggled)}\r\n\r\n")
    answer = exchange(urlsplit(sandbox.url).port or 0, head.encode() + smuggled)  # until the server closes
    assert statuses(answer) == [400], answer
    assert b"multiple Content-Length headers" in answer and b"\r\nConnection: close\r\n" in answer
    assert c.get(f"{CMS}/victim").status == 200  # the DELETE behind it was never read


def test_repeated_equal_content_lengths_count_once(sandbox) -> None:
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "twice"}}).encode()
    head = f"POST {CMS} HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    reply = raw_exchange(sandbox.url, (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
    assert reply.status == 201, reply.body
