"""A seeded fuzz pass of issue 11's hostile request shapes against one sandbox over raw sockets: every answer is a
4xx ``Status`` (never a 500, never a hang: each exchange has a deadline), requests that are legal are served, and
at the end the sandbox still answers a plain list and its pod simulator still runs pods."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from sandbox_http import RawClient, Reply, raw_exchange, request_bytes
from testkit import billion_laughs, copy_bomb, nested_json, nested_yaml, wait_for

pytestmark = pytest.mark.integration

SEED = 11
NS = "/api/v1/namespaces/default"
CMS = f"{NS}/configmaps"
PODS = f"{NS}/pods"
TARGET = f"{CMS}/target"
APPLY = f"{TARGET}?fieldManager=fuzz"
CLIENT_ERROR = range(400, 500)


@dataclass(frozen=True)
class Shape:
    """One request shape: ``build(rng)`` gives the raw request; ``expect`` the codes it may get."""

    name: str
    build: Callable[[random.Random], bytes]
    expect: range | tuple[int, ...] = CLIENT_ERROR


def post(path: str, body: bytes | str, content_type: str | None = "application/json", method: str = "POST") -> bytes:
    return request_bytes(method, path, body.encode() if isinstance(body, str) else body, content_type)


def cm_yaml(name: str, extra: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{extra}"


def bomb(rng: random.Random) -> str:
    return "bomb:\n" + "".join(f"  {line}\n" for line in billion_laughs(rng.randint(5, 9)).splitlines())


def cm_json(name: str, **fields: object) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **fields}).encode()


def garbage_line(rng: random.Random) -> bytes:
    alphabet = bytes(range(1, 256)).replace(b"\r", b"").replace(b"\n", b"")
    return bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) + b"\r\n\r\n"


def huge_number(rng: random.Random) -> str:
    return rng.choice(["9" * rng.randint(20, 400), "-1", "1e3", "0x10", "18446744073709551616", "+-3", "١٢"])


def chunked(rng: random.Random) -> bytes:
    size_line = rng.choice([b"zz", b"-1", b"ffffffffffffffff", b"", b"5;ext=" + b"x" * 5000, b"3"])
    tail = rng.choice([b"\r\nabc", b"\r\nabcXX0\r\n\r\n", b"\r\n"])
    head = f"POST {CMS} HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    return head + size_line + tail


def steering_pod(rng: random.Random) -> bytes:
    value = rng.choice(["1e308", "inf", "-inf", "nan", "-1", "9" * 400, "soon", "0.01"])
    key = rng.choice(["start-delay-seconds", "run-seconds", "exit-code", "unknown"])
    name = f"steer-{rng.randrange(10**9)}"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": {f"sandbox.sedna.io/{key}": value}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    return post(PODS, json.dumps(pod))


def selector(rng: random.Random) -> bytes:
    tokens = ["k", "k>3", "k<1", "k=5", "k!=5", "k in (a,b)", "!k", ">", "(", "!!", "a=b=c", "x" * 70, "k notin ()", ","]
    text = ",".join(rng.choice(tokens) for _ in range(rng.randint(1, 4)))
    return request_bytes("GET", f"{CMS}?labelSelector=" + "".join(f"%{b:02X}" for b in text.encode()))


# Shapes of issue 11 items 1, 4 and 6 and malformed HTTP: each answered with a 4xx Status (legal ones served).
SHAPES = [
    Shape("yaml bomb create", lambda rng: post(CMS, cm_yaml(f"b{rng.randrange(99)}", bomb(rng)), "application/yaml")),
    Shape("yaml bomb update", lambda rng: post(TARGET, cm_yaml("target", bomb(rng)), "application/yaml", "PUT")),
    Shape("yaml bomb apply", lambda rng: post(APPLY, cm_yaml("target", bomb(rng)), "application/apply-patch+yaml", "PATCH")),
    Shape("self alias", lambda rng: post(CMS, cm_yaml("s", "x: &a [*a]\n"), "application/yaml")),
    Shape("deep yaml", lambda rng: post(CMS, cm_yaml("d", f"x: {nested_yaml(rng.randint(101, 5000))}\n"), "application/yaml")),
    Shape("deep json", lambda rng: post(CMS, cm_json("d")[:-1] + b',"x":' + nested_json(rng.randint(101, 1100)).encode() + b"}")),
    Shape("deep merge patch", lambda rng: post(TARGET, '{"metadata":{"annotations":' + nested_json(rng.randint(101, 600)) + "}}",
                                               "application/merge-patch+json", "PATCH")),
    Shape("deep apply", lambda rng: post(APPLY, f"x: {nested_yaml(rng.randint(101, 5000))}", "application/apply-patch+yaml", "PATCH")),
    Shape("copy bomb", lambda rng: post(TARGET, json.dumps(copy_bomb(rng.randint(25, 40), "/data")), "application/json-patch+json", "PATCH")),
    Shape("too many ops", lambda rng: post(TARGET, json.dumps([{"op": "test", "path": "/kind", "value": "ConfigMap"}] * rng.randint(10_001, 10_300)),
                                           "application/json-patch+json", "PATCH")),
    Shape("deep json patch value", lambda rng: post(TARGET, '[{"op":"add","path":"/data/x","value":' + nested_json(rng.randint(101, 300)) + "}]",
                                                    "application/json-patch+json", "PATCH")),
    Shape("huge timeoutSeconds", lambda rng: request_bytes("GET", f"{CMS}?watch=1&timeoutSeconds={huge_number(rng)}")),
    Shape("huge limit", lambda rng: request_bytes("GET", f"{CMS}?limit={huge_number(rng)}")),
    Shape("huge resourceVersion", lambda rng: request_bytes("GET", f"{CMS}?resourceVersion={'9' * rng.randint(21, 400)}")),
    Shape("bad continue", lambda rng: request_bytes("GET", f"{CMS}?limit=1&continue={rng.choice(['x', '!!!', 'eyJydiI6Ijk5OSJ9', '9' * 300])}")),
    Shape("garbage request line", garbage_line, (*CLIENT_ERROR, 505)),
    Shape("blank request line", lambda rng: b"\r\n" * rng.randint(1, 3)),
    Shape("bad version", lambda rng: f"GET /api {rng.choice(['HTTP/2.0', 'HTTP/3', 'FOO/1.1', 'HTTP/1.1.1', 'HTTP/0.9', 'HTTP/x'])}\r\n\r\n".encode(),
          (*CLIENT_ERROR, 505)),
    Shape("long request line", lambda rng: b"GET /" + b"a" * rng.randint(65_537, 80_000) + b" HTTP/1.1\r\n\r\n"),
    Shape("long header", lambda rng: b"GET /api HTTP/1.1\r\nX: " + b"a" * rng.randint(65_537, 70_000) + b"\r\n\r\n"),
    Shape("many headers", lambda rng: b"GET /api HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(rng.randint(101, 200))) + b"\r\n"),
    Shape("unknown method", lambda rng: request_bytes(rng.choice(["FROB", "BREW", "PROPFIND", "TRACE"]), PODS)),
    Shape("garbage body", lambda rng: post(CMS, bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))),
                                           rng.choice([None, "text/plain", "application/json", "application/yaml", "application/x-www-form-urlencoded",
                                                       "application/vnd.kubernetes.protobuf", "application/json; charset=utf-16", "*/*"]))),
    Shape("invalid utf-8", lambda rng: post(CMS, b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"\xff\xfe"}}',
                                            rng.choice(["application/json", "application/yaml"]))),
    Shape("infinite number", lambda rng: post(CMS, cm_json("n")[:-1] + b',"x":1e400}')),
    Shape("yaml non-json values", lambda rng: post(CMS, cm_yaml("v", rng.choice(["x: .inf\n", "x: !!binary aGk=\n", "x: !!set {a}\n", "x: 123456789012345678901234567890\n"])),
                                                   "application/yaml")),
    Shape("truncated body", lambda rng: request_bytes("POST", CMS)[:-4] + b"Content-Length: 500\r\n\r\n" + cm_json("t")[: rng.randint(0, 40)]),
    Shape("bad content-length", lambda rng: f"POST {CMS} HTTP/1.1\r\nContent-Length: {rng.choice(['abc', '-5', '1e3', ' ', '99999999999'])}\r\n\r\n".encode()),
    Shape("bad chunked body", chunked),
    Shape("bad percent-encoding", lambda rng: request_bytes("GET", "/api/v1/namespaces/%zz%/configmaps/%ff%fe"), (200, 404)),
    Shape("odd label selector", selector, (200, *CLIENT_ERROR)),
    Shape("steering pod", steering_pod, (201,)),
]
# Shapes of issue 11 items 2, 5 and 13 (field types, patch results, content types).
VALIDATION_SHAPES = [
    Shape("integer name", lambda rng: post(PODS, json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": rng.randint(1, 99)},
                                                             "spec": {"containers": [{"name": "c", "image": "i"}]}}))),
    Shape("ownerReferences string", lambda rng: post(TARGET, '{"metadata":{"ownerReferences":"x"}}', "application/merge-patch+json", "PATCH")),
    # a POST without Content-Type is JSON to kube-apiserver (its first serializer), so only text/plain is refused
    Shape("text/plain write", lambda rng: post(CMS, cm_json(f"plain{rng.randrange(99)}"), "text/plain")),
    Shape("non-string label", lambda rng: post(CMS, cm_json(f"l{rng.randrange(99)}", metadata={"name": "l", "labels": {"k": rng.randint(0, 9)}}))),
    Shape("bad base64", lambda rng: post(f"{NS}/secrets", json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                                                                      "data": {"k": rng.choice(["!!!", "abc", "a"])}}))),
    Shape("wrong field type", lambda rng: post(PODS, json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t"},
                                                                 "spec": rng.choice(["x", 5, [1], {"containers": "x"}])}))),
]


def check(reply: Reply, shape: Shape) -> None:
    assert reply.status in shape.expect, (shape.name, reply.status, reply.body[:300])
    if reply.status >= 400:
        status = json.loads(reply.body)
        assert status["kind"] == "Status" and status["code"] == reply.status, (shape.name, status)


def fuzz(sandbox, shapes: list[Shape], rounds: int) -> None:  # noqa: ANN001 - the fixture's Sandbox
    rng = random.Random(SEED)
    client = RawClient(sandbox.url, timeout=10)
    assert client.request("POST", CMS, cm_json("target", data={"a": "x" * 100})).status == 201
    for _ in range(rounds):
        for shape in shapes:
            check(raw_exchange(sandbox.url, shape.build(rng), timeout=10), shape)
    for path in (PODS, CMS, f"{NS}/secrets", "/api/v1/pods"):
        listed = client.get(path)
        assert listed.status == 200 and json.loads(listed.body)["kind"].endswith("List"), (path, listed.body[:300])
    assert client.request("POST", PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "final"},
                                         "spec": {"containers": [{"name": "c", "image": "busybox"}]}}).status == 201
    wait_for("the simulator to run a pod after the fuzz pass", lambda: client.get(f"{PODS}/final").json()["status"].get("phase"),
             check=lambda phase: phase == "Running")
    assert all(t.is_alive() for t in sandbox.kubelet._threads)


def test_fuzz_pass_every_hostile_request_gets_a_4xx_status(make_sandbox) -> None:
    fuzz(make_sandbox(), SHAPES, rounds=3)


def test_fuzz_pass_validation_shapes(make_sandbox) -> None:
    fuzz(make_sandbox(), VALIDATION_SHAPES, rounds=3)
