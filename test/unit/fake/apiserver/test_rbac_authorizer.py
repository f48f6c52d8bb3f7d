"""The sandbox's RBAC authorizer, request attributes, 403 wording and ServiceAccount tokens, against kube-apiserver's
behaviour (``plugin/pkg/auth/authorizer/rbac``, ``endpoints/request/requestinfo.go``, ``responsewriters.Forbidden``)."""

from __future__ import annotations

from typing import Any

import pytest

from apis.errors import NotFoundError
from apis.fake.tracker import ObjectTracker
from apis.resources import (
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    NAMESPACES,
    ROLE_BINDINGS,
    ROLES,
    SERVICE_ACCOUNTS,
)
from sandbox.apiserver.rbac import (
    RBACAuthorizer,
    RequestAttributes,
    UserInfo,
    forbidden,
    request_attributes,
    rule_allows,
    service_account_user,
)
from sandbox.apiserver.rbac.tokens import TokenAuthenticator

RBAC = "rbac.authorization.k8s.io/v1"
SA = service_account_user("sedna", "sedna")


def attrs(user: UserInfo, verb: str, resource: str, namespace: str = "", group: str = "", sub: str = "",
          name: str = "") -> RequestAttributes:
    return RequestAttributes(user, verb, True, "", group, "v1", namespace, resource, sub, name)


@pytest.mark.parametrize("method, path, query, expected", [
    ("GET", "/api/v1/namespaces/default/pods", {}, ("list", "", "default", "pods", "", "")),
    ("GET", "/api/v1/namespaces/default/pods", {"watch": ["1"]}, ("watch", "", "default", "pods", "", "")),
    ("GET", "/api/v1/namespaces/default/pods", {"watch": ["false"]}, ("list", "", "default", "pods", "", "")),
    ("GET", "/api/v1/watch/namespaces/default/pods", {}, ("watch", "", "default", "pods", "", "")),
    ("GET", "/api/v1/namespaces/default/pods/p1", {}, ("get", "", "default", "pods", "", "p1")),
    ("HEAD", "/api/v1/namespaces/default/pods/p1", {}, ("get", "", "default", "pods", "", "p1")),
    ("PUT", "/api/v1/namespaces/default/pods/p1/status", {}, ("update", "", "default", "pods", "status", "p1")),
    ("PATCH", "/apis/apps/v1/namespaces/ns/deployments/d/scale", {}, ("patch", "apps", "ns", "deployments", "scale", "d")),
    ("POST", "/api/v1/namespaces/ns/serviceaccounts/sa/token", {}, ("create", "", "ns", "serviceaccounts", "token", "sa")),
    ("DELETE", "/api/v1/namespaces/ns/pods", {}, ("deletecollection", "", "ns", "pods", "", "")),
    ("DELETE", "/api/v1/namespaces/ns/pods/p", {}, ("delete", "", "ns", "pods", "", "p")),
    ("GET", "/api/v1/nodes", {}, ("list", "", "", "nodes", "", "")),
    ("GET", "/api/v1/namespaces/ns", {}, ("get", "", "ns", "namespaces", "", "ns")),
    ("PUT", "/api/v1/namespaces/ns/finalize", {}, ("update", "", "ns", "namespaces", "finalize", "ns")),
    ("GET", "/apis/coordination.k8s.io/v1/namespaces/sedna/leases", {"fieldSelector": ["metadata.name=sedna-gm"]},
     ("list", "coordination.k8s.io", "sedna", "leases", "", "sedna-gm")),
    ("GET", "/api/v1/pods", {"fieldSelector": ["spec.nodeName=n1"]}, ("list", "", "", "pods", "", "")),
])
def test_request_attributes_as_kube_derives_them(method, path, query, expected) -> None:
    a = request_attributes(SA, method, path, query)
    assert a.resource_request
    assert (a.verb, a.api_group, a.namespace, a.resource, a.subresource, a.name) == expected


@pytest.mark.parametrize("path", ["/api", "/apis", "/apis/apps", "/version", "/openapi/v2", "/healthz"])
def test_non_resource_requests(path: str) -> None:
    a = request_attributes(SA, "GET", path, {})
    assert not a.resource_request and a.verb == "get" and a.path == path


@pytest.mark.parametrize("rule, request_, allowed", [
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}, ("list", "pods", "", ""), True),
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}, ("watch", "pods", "", ""), False),
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]}, ("deletecollection", "pods", "", ""), True),
    ({"apiGroups": ["apps"], "resources": ["pods"], "verbs": ["*"]}, ("get", "pods", "", ""), False),
    ({"apiGroups": ["*"], "resources": ["pods"], "verbs": ["get"]}, ("get", "pods", "", ""), True),
    # a subresource is its own resource: pods does not grant pods/status, pods/status not pods
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["update"]}, ("update", "pods", "status", ""), False),
    ({"apiGroups": [""], "resources": ["pods/status"], "verbs": ["update"]}, ("update", "pods", "status", ""), True),
    ({"apiGroups": [""], "resources": ["pods/status"], "verbs": ["update"]}, ("update", "pods", "", ""), False),
    ({"apiGroups": [""], "resources": ["*/status"], "verbs": ["update"]}, ("update", "pods", "status", ""), True),
    ({"apiGroups": [""], "resources": ["*/status"], "verbs": ["update"]}, ("update", "pods", "", ""), False),
    ({"apiGroups": [""], "resources": ["*"], "verbs": ["update"]}, ("update", "pods", "status", ""), True),
    # resourceNames: only requests that name one of them (a plain list names none)
    ({"apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"], "verbs": ["get"]}, ("get", "pods", "", "a"), True),
    ({"apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"], "verbs": ["get"]}, ("get", "pods", "", "b"), False),
    ({"apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"], "verbs": ["list"]}, ("list", "pods", "", ""), False),
    ({"apiGroups": [""], "resources": ["pods"], "verbs": []}, ("get", "pods", "", ""), False),
])
def test_rule_allows(rule: dict[str, Any], request_: tuple[str, str, str, str], allowed: bool) -> None:
    verb, resource, sub, name = request_
    assert rule_allows(attrs(SA, verb, resource, "ns", sub=sub, name=name), rule) is allowed


@pytest.mark.parametrize("urls, path, allowed", [
    (["/api"], "/api", True), (["/api"], "/api/v1", False), (["/api/*"], "/api/v1", True), (["*"], "/x", True),
    (["/healthz"], "/healthz/ping", False),
])
def test_non_resource_rules(urls: list[str], path: str, allowed: bool) -> None:
    a = RequestAttributes(SA, "get", False, path=path)
    assert rule_allows(a, {"nonResourceURLs": urls, "verbs": ["get"]}) is allowed


def _role(kind: str, name: str, rules: list[dict[str, Any]], namespace: str = "") -> dict[str, Any]:
    md = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": RBAC, "kind": kind, "metadata": md, "rules": rules}


def _binding(kind: str, name: str, role_kind: str, role: str, subjects: list[dict[str, Any]],
             namespace: str = "") -> dict[str, Any]:
    md = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": RBAC, "kind": kind, "metadata": md,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role}, "subjects": subjects}


@pytest.fixture
def tracker() -> ObjectTracker:
    t = ObjectTracker()
    for ns in ("sedna", "default", "other"):
        t.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    return t


PODS_READER = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]


def test_cluster_role_binding_to_a_service_account(tracker: ObjectTracker) -> None:
    tracker.create(CLUSTER_ROLES, _role("ClusterRole", "reader", PODS_READER))
    tracker.create(CLUSTER_ROLE_BINDINGS, _binding("ClusterRoleBinding", "b", "ClusterRole", "reader",
                                                   [{"kind": "ServiceAccount", "name": "sedna", "namespace": "sedna"}]))
    authz = RBACAuthorizer(tracker)
    decision = authz.authorize(attrs(SA, "list", "pods", "default"))
    assert decision.allowed
    assert decision.reason == ('RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "reader" to '
                               'ServiceAccount "sedna/sedna"')
    assert authz.authorize(attrs(SA, "list", "pods")).allowed  # cluster-wide too
    assert not authz.authorize(attrs(SA, "create", "pods", "default")).allowed
    other = service_account_user("other", "sedna")
    assert not authz.authorize(attrs(other, "list", "pods", "default")).allowed


def test_a_cluster_role_binding_needs_the_service_accounts_namespace(tracker: ObjectTracker) -> None:
    tracker.create(CLUSTER_ROLES, _role("ClusterRole", "reader", PODS_READER))
    tracker.create(CLUSTER_ROLE_BINDINGS, _binding("ClusterRoleBinding", "b", "ClusterRole", "reader",
                                                   [{"kind": "ServiceAccount", "name": "sedna"}]))
    assert not RBACAuthorizer(tracker).authorize(attrs(SA, "list", "pods", "sedna")).allowed


def test_role_binding_applies_in_its_namespace_only(tracker: ObjectTracker) -> None:
    tracker.create(ROLES, _role("Role", "leases", [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                                                     "verbs": ["get", "create", "update"]}], "sedna"))
    # the subject's namespace defaults to the binding's
    tracker.create(ROLE_BINDINGS, _binding("RoleBinding", "b", "Role", "leases",
                                           [{"kind": "ServiceAccount", "name": "sedna"}], "sedna"))
    tracker.create(CLUSTER_ROLES, _role("ClusterRole", "reader", PODS_READER))
    tracker.create(ROLE_BINDINGS, _binding("RoleBinding", "r", "ClusterRole", "reader",
                                           [{"kind": "ServiceAccount", "name": "sedna", "namespace": "sedna"}], "other"))
    authz = RBACAuthorizer(tracker)
    lease = attrs(SA, "update", "leases", "sedna", group="coordination.k8s.io", name="sedna-gm")
    assert authz.authorize(lease).allowed
    assert not authz.authorize(attrs(SA, "update", "leases", "default", group="coordination.k8s.io")).allowed
    assert authz.authorize(attrs(SA, "list", "pods", "other")).allowed  # a ClusterRole bound in one namespace
    assert not authz.authorize(attrs(SA, "list", "pods", "default")).allowed
    assert not authz.authorize(attrs(SA, "list", "pods")).allowed  # never cluster-wide


def test_user_and_group_subjects_and_system_masters(tracker: ObjectTracker) -> None:
    tracker.create(CLUSTER_ROLES, _role("ClusterRole", "reader", PODS_READER))
    tracker.create(CLUSTER_ROLE_BINDINGS, _binding("ClusterRoleBinding", "u", "ClusterRole", "reader",
                                                   [{"kind": "User", "name": "alice"}]))
    tracker.create(CLUSTER_ROLE_BINDINGS, _binding("ClusterRoleBinding", "g", "ClusterRole", "reader",
                                                   [{"kind": "Group", "name": "system:serviceaccounts:sedna"}]))
    authz = RBACAuthorizer(tracker)
    assert authz.authorize(attrs(UserInfo("alice"), "get", "pods", "x", name="p")).allowed
    assert not authz.authorize(attrs(UserInfo("bob"), "get", "pods", "x", name="p")).allowed
    assert authz.authorize(attrs(SA, "watch", "pods", "default")).allowed  # through its group
    root = UserInfo("root", ("system:masters",))
    assert authz.authorize(attrs(root, "delete", "nodes", name="n")).allowed


def test_missing_roles_are_the_reason_of_a_denial(tracker: ObjectTracker) -> None:
    subjects = [{"kind": "ServiceAccount", "name": "sedna", "namespace": "sedna"}]
    tracker.create(CLUSTER_ROLE_BINDINGS, _binding("ClusterRoleBinding", "a", "ClusterRole", "gone", subjects))
    authz = RBACAuthorizer(tracker)
    decision = authz.authorize(attrs(SA, "list", "pods", "sedna"))
    assert not decision.allowed and decision.reason == 'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found'
    tracker.create(ROLE_BINDINGS, _binding("RoleBinding", "b", "Role", "lost", subjects, "sedna"))
    decision = authz.authorize(attrs(SA, "list", "pods", "sedna"))
    assert decision.reason == ('RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, '
                               'role.rbac.authorization.k8s.io "lost" not found]')
    err = forbidden(attrs(SA, "list", "pods", "sedna"), decision.reason)
    assert err.message.endswith(': RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, '
                                'role.rbac.authorization.k8s.io "lost" not found]')


def test_forbidden_is_worded_as_kube_apiserver_words_it() -> None:
    err = forbidden(attrs(SA, "list", "pods", "default"))
    assert (err.status, err.reason) == (403, "Forbidden")
    assert err.message == ('pods is forbidden: User "system:serviceaccount:sedna:sedna" cannot list resource "pods" '
                           'in API group "" in the namespace "default"')
    assert err.details == {"kind": "pods"}
    err = forbidden(attrs(SA, "update", "deployments", "ns", group="apps", sub="scale", name="d"))
    assert err.message == ('deployments.apps "d" is forbidden: User "system:serviceaccount:sedna:sedna" cannot update '
                           'resource "deployments/scale" in API group "apps" in the namespace "ns"')
    assert err.details == {"name": "d", "group": "apps", "kind": "deployments"}
    err = forbidden(attrs(SA, "get", "nodes", name="n1"))
    assert err.message == ('nodes "n1" is forbidden: User "system:serviceaccount:sedna:sedna" cannot get resource '
                           '"nodes" in API group "" at the cluster scope')
    err = forbidden(RequestAttributes(SA, "get", False, path="/metrics"))
    assert err.message == 'forbidden: User "system:serviceaccount:sedna:sedna" cannot get path "/metrics"'


def test_service_account_tokens(tracker: ObjectTracker) -> None:
    now = [1000.0]
    tokens = TokenAuthenticator(tracker, "admin", clock=lambda: now[0])
    with pytest.raises(NotFoundError):
        tokens.issue("sedna", "sedna", 600)
    tracker.create(SERVICE_ACCOUNTS, {"apiVersion": "v1", "kind": "ServiceAccount",
                                      "metadata": {"name": "sedna", "namespace": "sedna"}})
    issued = tokens.issue("sedna", "sedna", 600)
    user = tokens.authenticate(f"Bearer {issued.token}")
    assert user is not None and user.name == "system:serviceaccount:sedna:sedna"
    assert set(user.groups) == {"system:serviceaccounts", "system:serviceaccounts:sedna", "system:authenticated"}
    assert tokens.authenticate("Bearer admin").groups[0] == "system:masters"
    for header in (None, "", "Bearer", "Basic abc", f"Bearer {issued.token}x"):
        assert tokens.authenticate(header) is None, header
    now[0] += 600  # expired
    assert tokens.authenticate(f"Bearer {issued.token}") is None
    second = tokens.issue("sedna", "sedna", 600)
    tracker.delete(SERVICE_ACCOUNTS, "sedna", "sedna")
    tracker.create(SERVICE_ACCOUNTS, {"apiVersion": "v1", "kind": "ServiceAccount",
                                      "metadata": {"name": "sedna", "namespace": "sedna"}})
    assert tokens.authenticate(f"Bearer {second.token}") is None  # bound to the deleted account's uid


def test_rbac_object_names_follow_kubes_path_segment_rule(tracker: ObjectTracker) -> None:
    tracker.create(CLUSTER_ROLES, _role("ClusterRole", "system:controller:x", PODS_READER))
    from apis.errors import InvalidError

    with pytest.raises(InvalidError, match="may not contain '/'"):
        tracker.create(CLUSTER_ROLES, _role("ClusterRole", "a/b", PODS_READER))
