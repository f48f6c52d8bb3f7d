"""The sandbox's RBAC mode over real HTTP, with the official ``kubernetes`` client and raw requests: ServiceAccount
tokens from the TokenRequest API, 401 without a known token, kube-apiserver's 403, Roles/ClusterRoles and bindings
taking effect on the next request, access reviews (what ``kubectl auth can-i`` asks) and the per-user records."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from testkit import start_sandbox

from sandbox.apiserver import SANDBOX_TOKEN

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(rbac=True, kubelet=False)]

USER = "system:serviceaccount:sedna:sedna"


def raw(url: str, method: str, path: str, token: str | None, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def api_client(url: str, token: str) -> client.ApiClient:
    cfg = client.Configuration()
    cfg.host = url
    cfg.api_key = {"authorization": f"Bearer {token}"}
    return client.ApiClient(cfg)


@pytest.fixture
def admin(api: client.ApiClient) -> client.ApiClient:
    core = client.CoreV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="sedna")))
    core.create_namespaced_service_account("sedna", client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="sedna")))
    return api


@pytest.fixture
def sa_token(admin: client.ApiClient) -> str:
    request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
    answer = client.CoreV1Api(admin).create_namespaced_service_account_token("sedna", "sedna", request)
    assert answer.status.token and answer.status.expiration_timestamp is not None
    return answer.status.token


@pytest.fixture
def sa(sandbox, sa_token: str) -> Iterator[client.ApiClient]:
    api = api_client(sandbox.url, sa_token)
    yield api
    api.close()


def test_requests_without_a_known_token_get_401(sandbox) -> None:
    for token in (None, "not-a-token"):
        code, body = raw(sandbox.url, "GET", "/api/v1/namespaces/default/pods", token)
        assert code == 401 and body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                        "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
    assert raw(sandbox.url, "GET", "/api", None)[0] == 401
    # health probes answer anyone; the admin token of the kubeconfig may do everything
    assert urllib.request.urlopen(sandbox.url + "/readyz", timeout=5).status == 200
    assert raw(sandbox.url, "GET", "/api/v1/namespaces/default/pods", SANDBOX_TOKEN)[0] == 200


def test_a_service_account_gets_kubes_403_until_a_role_grants_the_verb(sandbox, admin, sa) -> None:
    pods = client.CoreV1Api(sa)
    with pytest.raises(ApiException) as caught:
        pods.list_namespaced_pod("default")
    status = json.loads(caught.value.body)
    assert caught.value.status == 403 and status["reason"] == "Forbidden"
    assert status["message"] == (f'pods is forbidden: User "{USER}" cannot list resource "pods" in API group "" in '
                                 'the namespace "default"')
    assert sandbox.server.access.denied(USER) == 1

    rbac = client.RbacAuthorizationV1Api(admin)
    rbac.create_cluster_role(client.V1ClusterRole(
        metadata=client.V1ObjectMeta(name="pod-reader"),
        rules=[client.V1PolicyRule(api_groups=[""], resources=["pods"], verbs=["list"])]))
    rbac.create_namespaced_role_binding("default", client.V1RoleBinding(
        metadata=client.V1ObjectMeta(name="read-pods"),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="pod-reader"),
        subjects=[client.RbacV1Subject(kind="ServiceAccount", name="sedna", namespace="sedna")]))
    assert pods.list_namespaced_pod("default").items == []  # the next request sees the binding
    with pytest.raises(ApiException) as caught:  # a watch is another verb
        pods.list_namespaced_pod("default", watch=True, timeout_seconds=1, _preload_content=False)
    assert caught.value.status == 403 and "cannot watch resource" in json.loads(caught.value.body)["message"]
    with pytest.raises(ApiException) as caught:  # bound in default only
        pods.list_namespaced_pod("sedna")
    assert caught.value.status == 403
    assert sandbox.server.access.denied(USER) == 3
    assert ("", "pods", "list") in sandbox.server.access.usage(USER)
    last = sandbox.server.access.denials(USER)[-1]
    assert (last.attributes.verb, last.attributes.namespace) == ("list", "sedna")


def test_status_subresource_and_resource_names(sandbox, admin, sa) -> None:
    core = client.CoreV1Api(admin)
    core.create_namespaced_pod("sedna", client.V1Pod(metadata=client.V1ObjectMeta(name="p"), spec=client.V1PodSpec(
        containers=[client.V1Container(name="c", image="busybox")])))
    client.RbacAuthorizationV1Api(admin).create_namespaced_role("sedna", client.V1Role(
        metadata=client.V1ObjectMeta(name="status-writer"),
        rules=[client.V1PolicyRule(api_groups=[""], resources=["pods/status"], verbs=["patch"]),
               client.V1PolicyRule(api_groups=[""], resources=["pods"], resource_names=["p"], verbs=["get", "list"])]))
    client.RbacAuthorizationV1Api(admin).create_namespaced_role_binding("sedna", client.V1RoleBinding(
        metadata=client.V1ObjectMeta(name="status-writer"),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name="status-writer"),
        subjects=[client.RbacV1Subject(kind="ServiceAccount", name="sedna")]))
    pods = client.CoreV1Api(sa)
    assert pods.read_namespaced_pod("p", "sedna").metadata.name == "p"
    pods.patch_namespaced_pod_status("p", "sedna", {"status": {"message": "set by the service account"}})
    with pytest.raises(ApiException) as caught:  # status does not grant the object
        pods.patch_namespaced_pod("p", "sedna", {"metadata": {"labels": {"a": "b"}}})
    assert json.loads(caught.value.body)["message"] == (
        f'pods "p" is forbidden: User "{USER}" cannot patch resource "pods" in API group "" in the namespace "sedna"')
    with pytest.raises(ApiException) as caught:  # resourceNames: another name, or a list, is not granted
        pods.read_namespaced_pod("q", "sedna")
    assert caught.value.status == 403
    with pytest.raises(ApiException):
        pods.list_namespaced_pod("sedna")
    # a list pinned to the name by a field selector names it, as kube-apiserver's request info does
    assert [p.metadata.name for p in pods.list_namespaced_pod("sedna", field_selector="metadata.name=p").items] == ["p"]


def test_access_reviews_answer_what_kubectl_auth_asks(sandbox, admin, sa) -> None:
    review = client.V1SelfSubjectAccessReview(spec=client.V1SelfSubjectAccessReviewSpec(
        resource_attributes=client.V1ResourceAttributes(verb="create", resource="pods", namespace="default")))
    answer = client.AuthorizationV1Api(sa).create_self_subject_access_review(review)
    assert answer.status.allowed is False
    client.RbacAuthorizationV1Api(admin).create_cluster_role_binding(client.V1ClusterRoleBinding(
        metadata=client.V1ObjectMeta(name="edit"),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="missing"),
        subjects=[client.RbacV1Subject(kind="ServiceAccount", name="sedna", namespace="sedna")]))
    answer = client.AuthorizationV1Api(sa).create_self_subject_access_review(review)
    assert answer.status.allowed is False
    assert answer.status.reason == 'RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found'
    # the admin asks about someone else
    sar = client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(
        user=USER, groups=["system:serviceaccounts"],
        resource_attributes=client.V1ResourceAttributes(verb="get", resource="leases", group="coordination.k8s.io",
                                                        namespace="sedna")))
    assert client.AuthorizationV1Api(admin).create_subject_access_review(sar).status.allowed is False
    code, body = raw(sandbox.url, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", SANDBOX_TOKEN,
                     {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {
                         "user": "root", "groups": ["system:masters"],
                         "nonResourceAttributes": {"path": "/metrics", "verb": "get"}}})
    assert code == 201 and body["status"] == {"allowed": True}
    # the service account may not ask about others (system:basic-user grants only the self-reviews)
    assert raw(sandbox.url, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
               sa.configuration.api_key["authorization"].split()[1], {"spec": {"user": "x"}})[0] == 403


def test_self_subject_review_and_discovery(sandbox, sa_token) -> None:
    code, body = raw(sandbox.url, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", sa_token,
                     {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert code == 201 and body["status"]["userInfo"]["username"] == USER
    assert "system:authenticated" in body["status"]["userInfo"]["groups"]
    for path in ("/api", "/apis", "/api/v1", "/apis/rbac.authorization.k8s.io/v1", "/version", "/openapi/v3"):
        assert raw(sandbox.url, "GET", path, sa_token)[0] == 200, path
    resources = raw(sandbox.url, "GET", "/api/v1", sa_token)[1]["resources"]
    token = next(r for r in resources if r["name"] == "serviceaccounts/token")
    assert token["verbs"] == ["create"] and token["kind"] == "TokenRequest"


def test_token_requests_are_validated_and_tokens_die_with_their_account(sandbox, admin, sa_token) -> None:
    path = "/api/v1/namespaces/sedna/serviceaccounts/sedna/token"
    code, body = raw(sandbox.url, "POST", path, SANDBOX_TOKEN, {"spec": {"expirationSeconds": 60}})
    assert code == 422 and "may not specify a duration less than 10 minutes" in body["message"]
    code, body = raw(sandbox.url, "POST", "/api/v1/namespaces/sedna/serviceaccounts/nobody/token", SANDBOX_TOKEN, {})
    assert code == 404 and body["message"] == 'serviceaccounts "nobody" not found'
    code, body = raw(sandbox.url, "POST", path, SANDBOX_TOKEN, {"spec": {"expirationSeconds": 7200}})
    assert code == 201 and body["spec"]["expirationSeconds"] == 7200
    assert raw(sandbox.url, "GET", "/api", sa_token)[0] == 200
    client.CoreV1Api(admin).delete_namespaced_service_account("sedna", "sedna")
    assert raw(sandbox.url, "GET", "/api", sa_token)[0] == 401


@pytest.mark.sandbox(kubelet=False)
def test_without_rbac_mode_everything_is_allowed(sandbox) -> None:
    assert not sandbox.server.rbac
    assert raw(sandbox.url, "GET", "/api/v1/namespaces/default/pods", "anything")[0] == 200
    code, body = raw(sandbox.url, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "anything",
                     {"spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}})
    assert code == 201 and body["status"]["allowed"] is True


def test_rbac_flag_of_the_command(procs, tmp_path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    start_sandbox(procs, kubeconfig, "--rbac", "--no-kubelet")
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
    assert raw(cfg.host, "GET", "/api/v1/namespaces", None)[0] == 401
    assert raw(cfg.host, "GET", "/api/v1/namespaces", SANDBOX_TOKEN)[0] == 200
