"""NamespaceLifecycle admission on the sandbox, on by default as on kube-apiserver: objects only in namespaces that
exist and are not terminating; ``default``, ``kube-system``, ``kube-public`` may not be deleted. Spoken raw over
HTTP, with the official client and with kubectl; the lenient mode and the CLI flags too."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from sandbox_http import RawClient
from testkit import REPO
from testkit.kubectl import MAIN_KUBECTL, Kubectl

from apis.resources import CONFIGMAPS

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False)]


def _cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}


def _ns(name: str, **metadata: object) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, **metadata}}


@pytest.fixture
def http(sandbox) -> RawClient:
    return RawClient(sandbox.url)


def test_the_four_default_namespaces_exist(http: RawClient) -> None:
    names = {ns["metadata"]["name"] for ns in http.get("/api/v1/namespaces").json()["items"]}
    assert names == {"default", "kube-system", "kube-public", "kube-node-lease"}
    for ns in names:
        assert http.request("POST", f"/api/v1/namespaces/{ns}/configmaps", _cm("here")).status == 201


def test_create_in_a_missing_namespace_is_404_until_it_is_created(http: RawClient) -> None:
    missing = http.request("POST", "/api/v1/namespaces/nowhere/configmaps", _cm("a"))
    assert missing.status == 404, missing.body
    body = missing.json()
    assert (body["reason"], body["message"]) == ("NotFound", 'namespaces "nowhere" not found')
    assert (body["details"]["name"], body["details"]["kind"]) == ("nowhere", "namespaces")
    applied = http.request(
        "PATCH", "/api/v1/namespaces/nowhere/configmaps/a?fieldManager=t", _cm("a"), content_type="application/apply-patch+yaml"
    )
    assert applied.status == 404 and applied.json()["message"] == 'namespaces "nowhere" not found', applied.body

    assert http.request("POST", "/api/v1/namespaces", _ns("nowhere")).status == 201
    assert http.request("POST", "/api/v1/namespaces/nowhere/configmaps", _cm("a")).status == 201


def test_writes_to_an_object_left_in_a_missing_namespace_are_404(sandbox, http: RawClient) -> None:
    sandbox.tracker.create(CONFIGMAPS, _cm("stray"), "gone")  # seeded behind the server's back
    path = "/api/v1/namespaces/gone/configmaps/stray"
    assert http.get(path).status == 200
    for method, body, ctype in [
        ("PUT", _cm("stray"), "application/json"),
        ("PATCH", {"data": {"k": "w"}}, "application/merge-patch+json"),
    ]:
        reply = http.request(method, path, body, content_type=ctype)
        assert reply.status == 404 and reply.json()["message"] == 'namespaces "gone" not found', (method, reply.body)
    assert http.request("DELETE", path).status == 200  # deletion is always allowed


def test_create_in_a_terminating_namespace_is_403(http: RawClient) -> None:
    assert http.request("POST", "/api/v1/namespaces", _ns("leaving", finalizers=["example.com/hold"])).status == 201
    assert http.request("DELETE", "/api/v1/namespaces/leaving").status == 200
    reply = http.request("POST", "/api/v1/namespaces/leaving/configmaps", _cm("a"))
    assert reply.status == 403, reply.body
    body = reply.json()
    assert body["reason"] == "Forbidden"
    assert body["message"] == (
        'configmaps "a" is forbidden: unable to create new content in namespace leaving because it is being terminated'
    )
    assert body["details"]["causes"] == [
        {"reason": "NamespaceTerminating", "message": "namespace leaving is being terminated", "field": "metadata.namespace"}
    ]


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
def test_immortal_namespaces_may_not_be_deleted(http: RawClient, name: str) -> None:
    reply = http.request("DELETE", f"/api/v1/namespaces/{name}")
    assert reply.status == 403, reply.body
    assert reply.json()["message"] == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
    assert http.get(f"/api/v1/namespaces/{name}").status == 200


def test_kube_node_lease_and_others_may_be_deleted(http: RawClient) -> None:
    assert http.request("DELETE", "/api/v1/namespaces/kube-node-lease").status == 200


@pytest.mark.sandbox(kubelet=False, namespace_lifecycle=False)
def test_lenient_mode_creates_anywhere_and_deletes_anything(http: RawClient) -> None:
    assert http.request("POST", "/api/v1/namespaces/nowhere/configmaps", _cm("a")).status == 201
    assert http.get("/api/v1/namespaces/nowhere/configmaps/a").status == 200
    assert http.request("DELETE", "/api/v1/namespaces/kube-public").status == 200


def test_official_client_gets_the_404_then_creates_after_the_namespace(api) -> None:
    core = client.CoreV1Api(api)
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm1"), data={"k": "v"})
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("team-a", body)
    assert err.value.status == 404 and 'namespaces \\"team-a\\" not found' in err.value.body
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team-a")))
    assert core.create_namespaced_config_map("team-a", body).metadata.namespace == "team-a"


@pytest.mark.skipif(MAIN_KUBECTL is None, reason="no kubectl")
def test_kubectl_says_the_namespace_is_not_found(sandbox, tmp_path: Path) -> None:
    k = Kubectl(MAIN_KUBECTL, sandbox.kubeconfig, tmp_path / "cache")
    failed = k("create", "configmap", "cm1", "--from-literal=k=v", "-n", "team-b", check=False)
    assert failed.returncode != 0 and 'namespaces "team-b" not found' in failed.stderr
    k("create", "namespace", "team-b")
    k("create", "configmap", "cm1", "--from-literal=k=v", "-n", "team-b")
    assert k("get", "configmap", "cm1", "-n", "team-b", "-o", "name").stdout.strip() == "configmap/cm1"
    refused = k("delete", "namespace", "default", check=False)
    assert refused.returncode != 0 and "this namespace may not be deleted" in refused.stderr


@pytest.mark.parametrize(("flags", "expected"), [([], 404), (["--namespace-lifecycle"], 404), (["--no-namespace-lifecycle"], 201)])
def test_cli_flags(flags: list[str], expected: int) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "--port", "0", "--no-kubelet", *flags],
        cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = proc.stdout.readline()  # bounded: printed once listening, or the process exits
        assert line.startswith("listening on "), proc.stderr.read() if proc.poll() is not None else line
        reply = RawClient(line.split()[-1]).request("POST", "/api/v1/namespaces/nowhere/configmaps", _cm("a"))
        assert reply.status == expected, reply.body
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(timeout=10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
