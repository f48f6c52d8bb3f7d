"""What a request asks for, as kube-apiserver's ``RequestInfoFactory.NewRequestInfo`` derives it from the method,
path and query (``k8s.io/apiserver/pkg/endpoints/request/requestinfo.go``), plus who asks.

A path under ``/api/v1`` or ``/apis/<group>/<version>`` with a resource is a *resource request*: its verb comes from
the method (POST create, GET/HEAD get, PUT update, PATCH patch, DELETE delete), a GET without a name is ``list``, or
``watch`` with ``?watch=`` anything but ``false``/``0`` (or a ``/watch/`` path), and a DELETE without a name is
``deletecollection``. Such a list or watch whose field selector pins ``metadata.name`` names that object (so
``resourceNames`` rules apply to it). Every other path is a non-resource request whose verb is the
lower-cased method.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apis import meta

__all__ = ["RequestAttributes", "UserInfo", "request_attributes"]

_API_PREFIXES = ("api", "apis")
_SPECIAL_VERBS = ("proxy", "watch")
_NAMESPACE_SUBRESOURCES = ("status", "finalize")
_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_INVALID_PATH_SEGMENT = re.compile(r"^\.\.?$|[/%]")


@dataclass(frozen=True)
class UserInfo:
    """An authenticated user: name (``system:serviceaccount:<ns>:<name>`` for a ServiceAccount) and groups."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: dict[str, list[str]] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class RequestAttributes:
    """authorizer.Attributes: the user and what the request does."""

    user: UserInfo
    verb: str
    resource_request: bool
    path: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""

    @property
    def combined_resource(self) -> str:
        """``resource/subresource`` (or the resource alone), as RBAC rules name it."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def _name_from_field_selector(query: dict[str, list[str]]) -> str:
    values = query.get("fieldSelector")
    if not values:
        return ""
    try:
        selector = meta.parse_field_selector(values[0])
    except ValueError:
        return ""
    for path, op, value in selector.requirements:
        if path == "metadata.name" and op in ("=", "==") and value and not _INVALID_PATH_SEGMENT.search(value):
            return value
    return ""


def request_attributes(user: UserInfo, method: str, path: str, query: dict[str, list[str]]) -> RequestAttributes:
    """The attributes of ``method path?query`` asked by ``user`` (``path`` unquoted, without the query)."""
    non_resource = RequestAttributes(user, method.lower(), False, path=path)
    parts = [p for p in path.strip("/").split("/")] if path.strip("/") else []
    if len(parts) < 3 or parts[0] not in _API_PREFIXES:
        return non_resource
    prefix, parts = parts[0], parts[1:]
    group = ""
    if prefix == "apis":
        if len(parts) < 3:
            return non_resource
        group, parts = parts[0], parts[1:]
    version, parts = parts[0], parts[1:]
    if parts[0] in _SPECIAL_VERBS:
        if len(parts) < 2:
            return non_resource
        verb, parts = parts[0], parts[1:]
    else:
        verb = _METHOD_VERBS.get(method.upper(), "")
    namespace = ""
    if parts[0] == "namespaces" and len(parts) > 1:
        namespace = parts[1]
        if len(parts) > 2 and parts[2] not in _NAMESPACE_SUBRESOURCES:
            parts = parts[2:]
    resource = parts[0]
    name = parts[1] if len(parts) >= 2 else ""
    subresource = parts[2] if len(parts) >= 3 and verb != "proxy" else ""
    if not name and verb == "get":
        watch = query.get("watch")
        verb = "watch" if watch and watch[0].lower() not in ("false", "0") else "list"
        name = _name_from_field_selector(query)
    if not name and verb == "delete":
        verb = "deletecollection"
    return RequestAttributes(user, verb, True, path, group, version, namespace, resource, subresource, name)
