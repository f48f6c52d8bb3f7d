"""The sandbox refuses what kube-apiserver refuses, with its codes, field paths and messages: names and labels
(422), bodies that do not decode into the kind's Go type (400 on create/update, 422 on ``patch``), immutable fields
(422), unsupported content types (415). A refused request never changes anything. Raw HTTP, the official client,
kubectl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from sandbox_http import RawClient
from testkit import CRDS
from testkit.kubectl import MAIN_KUBECTL, Kubectl

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False, crd_dirs=[str(CRDS)])]

PODS = "/api/v1/namespaces/default/pods"
CMS = "/api/v1/namespaces/default/configmaps"
SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"  # noqa: E501
POD_UPDATE = "pod updates may not change fields other than `spec.containers[*].image`"
requires_kubectl = pytest.mark.skipif(MAIN_KUBECTL is None, reason="no kubectl")


def _pod(name: object = "p", **metadata: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **metadata},
            "spec": {"containers": [{"name": "main", "image": "busybox"}]}}


def _cm(name: str, **metadata: object) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **metadata}, "data": {"k": "v"}}


@pytest.fixture
def http(sandbox) -> RawClient:
    return RawClient(sandbox.url)


def _status(reply, code: int, reason: str) -> dict:
    assert reply.status == code, reply.body
    body = reply.json()
    assert (body["kind"], body["status"], body["reason"], body["code"]) == ("Status", "Failure", reason, code), body
    return body


@pytest.mark.parametrize(
    ("path", "obj", "kind", "name"),
    [
        (PODS, _pod("Bad_Name"), "Pod", "Bad_Name"),
        (CMS, _cm("UPPER_case"), "ConfigMap", "UPPER_case"),
        ("/apis/sedna.io/v1alpha1/namespaces/default/models", {
            "apiVersion": "sedna.io/v1alpha1", "kind": "Model", "metadata": {"name": "Bad_Model"},
            "spec": {"url": "s3://b/m", "format": "pb"}}, "Model.sedna.io", "Bad_Model"),
    ],
)
def test_bad_names_are_422_with_apimachinerys_message(http: RawClient, path: str, obj: dict, kind: str, name: str) -> None:
    body = _status(http.request("POST", path, obj), 422, "Invalid")
    assert body["message"] == f'{kind} "{name}" is invalid: metadata.name: Invalid value: "{name}": {SUBDOMAIN}'
    assert body["details"]["causes"] == [  # a StatusCause's type is "reason" on the wire
        {"reason": "FieldValueInvalid", "message": f'Invalid value: "{name}": {SUBDOMAIN}', "field": "metadata.name"}
    ]
    assert http.get(f"{path}/{name}").status == 404


def test_bad_label_values_and_keys_are_422(http: RawClient) -> None:
    body = _status(http.request("POST", CMS, _cm("c", labels={"team": "in valid!", "bad key": "x"})), 422, "Invalid")
    assert [c["field"] for c in body["details"]["causes"]] == ["metadata.labels", "metadata.labels"]
    assert body["message"].startswith('ConfigMap "c" is invalid: metadata.labels: Invalid value: "in valid!": a valid label')
    assert http.get(f"{CMS}/c").status == 404


def test_wrongly_typed_fields_are_400_on_create_and_never_stored(http: RawClient) -> None:
    body = _status(http.request("POST", PODS, _pod(123)), 400, "BadRequest")
    assert body["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field '
        "ObjectMeta.metadata.name of type string"
    )
    for bad in (_pod("o", ownerReferences="x"), _pod("l", labels={"n": 1}), _pod("a", annotations={"n": ["x"]})):
        _status(http.request("POST", PODS, bad), 400, "BadRequest")
    for path in (PODS, "/api/v1/pods", f"{PODS}?watch=1&timeoutSeconds=1"):
        assert http.get(path).status == 200  # lists and watches are never broken by a stored bad object
    assert http.get(PODS).json()["items"] == []


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/merge-patch+json", {"metadata": {"ownerReferences": "x"}}),
        ("application/json-patch+json", [{"op": "add", "path": "/metadata/ownerReferences", "value": "x"}]),
        ("application/strategic-merge-patch+json", {"metadata": {"ownerReferences": "x"}}),
    ],
)
def test_a_patch_with_a_wrongly_typed_result_is_422_and_changes_nothing(http: RawClient, content_type: str, body) -> None:
    assert http.request("POST", PODS, _pod()).status == 201
    before = http.get(f"{PODS}/p").json()
    status = _status(http.request("PATCH", f"{PODS}/p", body, content_type=content_type), 422, "Invalid")
    assert status["details"]["causes"][0]["field"] == "patch"
    assert status["message"].endswith(
        "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.ownerReferences of type []v1.OwnerReference"
    )
    assert http.get(f"{PODS}/p").json() == before
    assert http.request("PATCH", f"{PODS}/p", {"metadata": {"labels": {"a": "b"}}},
                        content_type="application/merge-patch+json").status == 200
    assert http.request("DELETE", f"{PODS}/p").status == 200


def test_immutable_fields_are_422_and_allowed_changes_pass(http: RawClient) -> None:
    assert http.request("POST", PODS, _pod()).status == 201
    merge = "application/merge-patch+json"
    body = _status(http.request("PATCH", f"{PODS}/p", {"spec": {"hostname": "other"}}, content_type=merge), 422, "Invalid")
    assert body["message"].startswith(f'Pod "p" is invalid: spec: Forbidden: {POD_UPDATE}')
    assert "hostname" not in http.get(f"{PODS}/p").json()["spec"]
    image = {"spec": {"containers": [{"name": "main", "image": "nginx"}]}}
    assert http.request("PATCH", f"{PODS}/p", image, content_type="application/strategic-merge-patch+json").status == 200

    deps = "/apis/apps/v1/namespaces/default/deployments"
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": {"metadata": {"labels": {"app": "a"}}}}}
    assert http.request("POST", deps, dep).status == 201
    body = _status(http.request("PATCH", f"{deps}/d", {"spec": {"selector": {"matchLabels": {"app": "b"}}}},
                                content_type=merge), 422, "Invalid")
    assert body["message"] == (
        'Deployment.apps "d" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string'
        '{"app":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable'
    )
    assert http.request("PATCH", f"{deps}/d", {"spec": {"replicas": 3}}, content_type=merge).status == 200

    svcs = "/api/v1/namespaces/default/services"
    created = http.request("POST", svcs, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                                          "spec": {"ports": [{"port": 80}]}}).json()
    assert created["spec"]["clusterIP"].startswith("10.96.")
    body = _status(http.request("PATCH", f"{svcs}/web", {"spec": {"clusterIP": "10.96.7.7"}}, content_type=merge),
                   422, "Invalid")
    assert body["message"] == 'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.7.7"}: may not change once set'


def test_identity_metadata_cannot_be_changed_by_an_update(http: RawClient) -> None:
    """As kube-apiserver: another uid fails the precondition (409), another namespace or name is a 400, a changed
    creationTimestamp is ignored (the stored one is kept)."""
    created = http.request("POST", CMS, _cm("c")).json()
    md = created["metadata"]
    merge = "application/merge-patch+json"
    uid = http.request("PATCH", f"{CMS}/c", {"metadata": {"uid": "another"}}, content_type=merge)
    assert _status(uid, 409, "Conflict")["message"].endswith(
        f"Precondition failed: UID in precondition: another, UID in object meta: {md['uid']}"
    )
    moved = http.request("PATCH", f"{CMS}/c", {"metadata": {"namespace": "kube-system"}}, content_type=merge)
    assert "does not match the namespace sent on the request" in _status(moved, 400, "BadRequest")["message"]
    renamed = http.request("PATCH", f"{CMS}/c", {"metadata": {"name": "d"}}, content_type=merge)
    assert _status(renamed, 400, "BadRequest")["message"] == "the name of the object (d) does not match the name on the URL (c)"
    put = http.request("PUT", f"{CMS}/c", {**created, "metadata": {**md, "creationTimestamp": "2001-01-01T00:00:00Z"}})
    assert put.status == 200 and put.json()["metadata"]["creationTimestamp"] == md["creationTimestamp"]
    assert http.get(f"{CMS}/c").json()["metadata"]["uid"] == md["uid"]


def test_content_types_are_checked_as_kube_apiserver_checks_them(http: RawClient) -> None:
    accepted = "the body of the request was in an unknown format - accepted media types include: "
    body = _status(http.request("POST", CMS, json.dumps(_cm("t")), content_type="text/plain"), 415, "UnsupportedMediaType")
    assert body["message"] == accepted + "application/json, application/yaml"
    assert http.get(f"{CMS}/t").status == 404
    assert http.request("POST", CMS, json.dumps(_cm("t")), content_type="").status == 201  # no type: JSON
    _status(http.request("PUT", f"{CMS}/t", json.dumps(_cm("t")), content_type="text/plain"), 415, "UnsupportedMediaType")
    no_type = http.request("PATCH", f"{CMS}/t", json.dumps({"data": {"k": "w"}}), content_type="")
    assert _status(no_type, 415, "UnsupportedMediaType")["message"] == accepted + (
        "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, "
        "application/apply-patch+yaml"
    )
    _status(http.request("DELETE", f"{CMS}/t", "{}", content_type="text/plain"), 415, "UnsupportedMediaType")
    assert http.get(f"{CMS}/t").json()["data"] == {"k": "v"}


def test_unknown_fields_are_dropped_with_a_warning_or_refused_when_strict(http: RawClient) -> None:
    pod = _pod()
    pod["spec"]["containers"][0]["imagePullPolcy"] = "Always"
    reply = http.request("POST", PODS, pod)
    assert reply.status == 201 and reply.headers["warning"] == '299 - "unknown field \\"spec.containers[0].imagePullPolcy\\""'
    assert "imagePullPolcy" not in reply.json()["spec"]["containers"][0]
    strict = _status(http.request("POST", f"{PODS}?fieldValidation=Strict", {**pod, "metadata": {"name": "q"}}), 400, "BadRequest")
    assert strict["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field '
        '"spec.containers[0].imagePullPolcy"'
    )


def test_the_official_client_gets_the_same_answers(api) -> None:
    core = client.CoreV1Api(api)
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod("default", _pod("Bad_Name"))
    assert err.value.status == 422 and json.loads(err.value.body)["details"]["causes"][0]["field"] == "metadata.name"
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("default", _cm("c", labels={"team": "in valid!"}))
    assert err.value.status == 422
    core.create_namespaced_pod("default", _pod())
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_pod("p", "default", {"spec": {"hostname": "h"}})
    assert err.value.status == 422 and POD_UPDATE in json.loads(err.value.body)["message"]
    patched = core.patch_namespaced_pod("p", "default", {"spec": {"containers": [{"name": "main", "image": "nginx"}]}})
    assert patched.spec.containers[0].image == "nginx"


@requires_kubectl
def test_kubectl_shows_the_servers_reasons(sandbox, tmp_path: Path) -> None:
    k = Kubectl(MAIN_KUBECTL, sandbox.kubeconfig, tmp_path / "cache")
    bad = k("create", "configmap", "UPPER_case", "--from-literal=k=v", check=False)
    assert bad.returncode != 0
    assert 'ConfigMap "UPPER_case" is invalid: metadata.name: Invalid value: "UPPER_case": a lowercase RFC 1123' in bad.stderr
    k("create", "configmap", "good", "--from-literal=k=v")
    label = k("patch", "configmap", "good", "--type=merge", "-p", '{"metadata":{"labels":{"team":"in valid!"}}}', check=False)
    assert label.returncode != 0
    assert 'The ConfigMap "good" is invalid: metadata.labels: Invalid value: "in valid!"' in label.stderr
    k("run", "p", "--image=busybox", "--restart=Never")
    patched = k("patch", "pod", "p", "-p", '{"spec":{"hostname":"other"}}', check=False)
    assert patched.returncode != 0 and f'The Pod "p" is invalid: spec: Forbidden: {POD_UPDATE}' in patched.stderr
    k("set", "image", "pod/p", "p=nginx")
    assert k("get", "pod", "p", "-o", "jsonpath={.spec.containers[0].image}").stdout == "nginx"
