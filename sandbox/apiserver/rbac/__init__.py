"""Authentication and RBAC authorization for the sandbox API server (opt-in: ``SandboxAPIServer(rbac=True)``,
``--rbac``): ServiceAccount tokens from the TokenRequest API, Roles/ClusterRoles and their bindings evaluated as
kube-apiserver's RBAC authorizer does, its 401/403 answers, the self-reviews behind ``kubectl auth can-i`` and
``kubectl auth whoami``, and per-user records of what was denied and used.

Parts: ``attributes`` (what a request asks for), ``authorizer`` (RBAC), ``tokens`` (bearer tokens), ``reviews``
(TokenRequest and access reviews), ``bootstrap`` (default policy), ``access`` (the gate the handler calls).
"""

from .access import AccessControl, Denial
from .attributes import RequestAttributes, UserInfo, request_attributes
from .authorizer import RBACAuthorizer, forbidden, rule_allows
from .tokens import ADMIN_USER, service_account_user

__all__ = [
    "ADMIN_USER",
    "AccessControl",
    "Denial",
    "RBACAuthorizer",
    "RequestAttributes",
    "UserInfo",
    "forbidden",
    "request_attributes",
    "rule_allows",
    "service_account_user",
]
