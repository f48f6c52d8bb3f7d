"""A kept-alive request to the sandbox must not stall: every response leaves in one write on a TCP_NODELAY socket.

Without that, Nagle's algorithm holds the second write of a response until the client's delayed ACK, and every
request on a kept-alive connection takes about 40 ms. Correctness, not a benchmark: the bound is the median of
many requests and is generous (a stall is 40 ms; loopback round trips are well under 1 ms).
"""

from __future__ import annotations

import http.client
import statistics
import time
from collections.abc import Callable

import pytest
from kubernetes import client, config

from apis.clientset import Clientset

pytestmark = pytest.mark.integration

ROUNDS = 40
BOUND_SECONDS = 0.015


def median_seconds(call: Callable[[], object]) -> float:
    call()  # connect, warm up
    samples = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def test_raw_http_get_list_patch_on_one_connection_do_not_stall(sandbox):
    conn = http.client.HTTPConnection("127.0.0.1", sandbox.server.port, timeout=5)
    conn.request("POST", "/api/v1/namespaces/default/configmaps", body=b'{"metadata":{"name":"cm"}}',
                 headers={"Content-Type": "application/json"})
    created = conn.getresponse()
    assert created.status == 201, created.read()
    created.read()

    def request(method: str, path: str, body: bytes | None = None, content_type: str = "") -> Callable[[], object]:
        def call() -> object:
            conn.request(method, path, body=body, headers={"Content-Type": content_type} if content_type else {})
            response = conn.getresponse()
            data = response.read()
            assert response.status == 200, data
            return data
        return call

    for name, call in {
        "GET": request("GET", "/api/v1/namespaces/default/configmaps/cm"),
        "LIST": request("GET", "/api/v1/namespaces/default/configmaps"),
        "PATCH": request("PATCH", "/api/v1/namespaces/default/configmaps/cm", b'{"data":{"k":"v"}}',
                         "application/merge-patch+json"),
        "error": lambda: conn.request("GET", "/api/v1/namespaces/default/configmaps/missing")
        or conn.getresponse().read(),
    }.items():
        assert median_seconds(call) < BOUND_SECONDS, f"{name} on a kept-alive connection stalls"
    conn.close()


def test_our_clientset_does_not_stall(sandbox):
    cs = Clientset.from_kubeconfig(sandbox.kubeconfig)
    try:
        cms = cs.core_v1().config_maps("default")
        cms.create({"metadata": {"name": "cm"}})
        assert median_seconds(lambda: cms.get("cm")) < BOUND_SECONDS
        assert median_seconds(lambda: cms.patch("cm", {"data": {"k": "v"}})) < BOUND_SECONDS
    finally:
        cs.close()


def test_the_official_client_does_not_stall(sandbox):
    cfg = client.Configuration()
    config.load_kube_config(config_file=sandbox.kubeconfig, client_configuration=cfg)
    with client.ApiClient(cfg) as api_client:
        core = client.CoreV1Api(api_client)
        core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}})
        assert median_seconds(lambda: core.read_namespaced_config_map("cm", "default")) < BOUND_SECONDS
        assert median_seconds(lambda: core.list_namespaced_config_map("default")) < BOUND_SECONDS
