"""The sandbox API server refuses over HTTP what a cluster refuses, with kube-apiserver's answers (issue 43): an object
etcd would not store (500, no reason, ``etcdserver: request is too large``), ConfigMap or Secret data over 1 MiB (422
``FieldValueTooLong``), a request body over 3 MiB (413 ``Request entity too large: limit is 3145728``); and our
clientset turns each into the error a controller tests for."""

from __future__ import annotations

import json

import pytest
from sandbox_http import RawClient

from apis import errors

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False)]

MIB = 1024 * 1024
PODS = "/api/v1/namespaces/default/pods"
CMS = "/api/v1/namespaces/default/configmaps"


def pod(name: str, env_bytes: int) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "E", "value": "x" * env_bytes}]}]}}


def test_an_object_over_etcds_limit_is_refused_as_kube_apiserver_refuses_it(sandbox) -> None:
    c = RawClient(sandbox.url, timeout=30)
    reply = c.request("POST", PODS, pod("big", 2 * MIB))  # under the 3 MiB body limit, over etcd's 1.5 MiB
    assert reply.status == 500
    assert json.loads(reply.body) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                      "message": "etcdserver: request is too large", "code": 500}
    assert c.get(f"{PODS}/big").status == 404
    assert c.request("POST", f"{PODS}?dryRun=All", pod("big", 2 * MIB)).status == 201  # a dry run never reaches etcd
    with pytest.raises(errors.ApiError) as exc:
        sandbox.clientset().core_v1().pods("default").create(pod("big", 2 * MIB))
    assert errors.is_internal_error(exc.value) and exc.value.message == "etcdserver: request is too large"


def test_configmap_data_over_1_mib_is_invalid(sandbox) -> None:
    c = RawClient(sandbox.url, timeout=30)
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "two-mib"}, "data": {"a": "x" * 2 * MIB}}
    reply = c.request("POST", CMS, body)
    assert reply.status == 422
    status = json.loads(reply.body)
    assert (status["reason"], status["message"]) == (
        "Invalid", 'ConfigMap "two-mib" is invalid: []: Too long: may not be more than 1048576 bytes')
    assert status["details"]["causes"] == [{"reason": "FieldValueTooLong", "field": "[]",
                                            "message": "Too long: may not be more than 1048576 bytes"}]
    assert c.get(f"{CMS}/two-mib").status == 404


def test_a_body_over_3_mib_is_413(sandbox) -> None:
    """Answered from the headers, before the body is read (our clientset returns that answer; the raw exchanges are in
    test_sandbox_hostile_requests)."""
    big = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x" * 3 * MIB}}
    with pytest.raises(errors.ApiError) as exc:
        sandbox.clientset().core_v1().config_maps("default").create(big)
    assert (exc.value.status, exc.value.reason, exc.value.message) == (
        413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")
