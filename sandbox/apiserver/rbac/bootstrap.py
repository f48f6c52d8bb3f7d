"""The part of kube-apiserver's bootstrap RBAC policy a client needs: ``cluster-admin`` for ``system:masters``,
discovery and health for every authenticated user (``system:discovery``, ``system:public-info-viewer``) and the
self-reviews (``system:basic-user``: ``kubectl auth can-i``, ``kubectl auth whoami``). Created when the sandbox
starts in RBAC mode, labelled and annotated as kube-apiserver labels them; existing objects are left alone."""

from __future__ import annotations

from typing import Any

from apis.errors import AlreadyExistsError
from apis.fake import ObjectTracker
from apis.resources import CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, RBAC_GROUP

__all__ = ["BOOTSTRAP_ROLES", "bootstrap_policy"]

_HEALTH = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
BOOTSTRAP_ROLES: dict[str, tuple[list[dict[str, Any]], list[str]]] = {
    # name: (rules, groups bound to it)
    "cluster-admin": ([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                       {"nonResourceURLs": ["*"], "verbs": ["*"]}], ["system:masters"]),
    "system:discovery": ([{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                                               "/openapi/*", "/readyz", "/version", "/version/"], "verbs": ["get"]}],
                         ["system:authenticated"]),
    "system:public-info-viewer": ([{"nonResourceURLs": _HEALTH, "verbs": ["get"]}],
                                  ["system:authenticated", "system:unauthenticated"]),
    "system:basic-user": ([{"apiGroups": ["authorization.k8s.io"],
                            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]},
                           {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"],
                            "verbs": ["create"]}], ["system:authenticated"]),
}
_METADATA = {"labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
             "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}


def bootstrap_policy(tracker: ObjectTracker) -> None:
    for name, (rules, groups) in BOOTSTRAP_ROLES.items():
        role = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole", "metadata": {"name": name, **_METADATA},
                "rules": rules}
        binding = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name, **_METADATA},
                   "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
                   "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": g} for g in groups]}
        for gvr, obj in ((CLUSTER_ROLES, role), (CLUSTER_ROLE_BINDINGS, binding)):
            try:
                tracker.create(gvr, obj)
            except AlreadyExistsError:
                pass
