"""kube-apiserver's RBAC authorizer over the tracker's Roles, ClusterRoles and their bindings.

A port of ``plugin/pkg/auth/authorizer/rbac`` and ``pkg/registry/rbac/validation`` (``DefaultRuleResolver``): the
rules of every ClusterRoleBinding whose subjects include the user, then (for a namespaced request) those of every
RoleBinding in the request's namespace, each binding's ``roleRef`` resolved to a Role in the binding's namespace or
a ClusterRole; the first rule that allows the request wins. A rule allows when its verbs, apiGroups, resources
(``resource``, ``resource/subresource``, ``*/subresource`` or ``*``) and resourceNames (empty: any) all match, or,
for a non-resource request, its verbs and nonResourceURLs (exact, ``*``, or a ``prefix*``). A binding whose role is
missing contributes its error to the denial's reason (``RBAC: clusterrole.rbac.authorization.k8s.io "x" not
found``). Members of ``system:masters`` are always allowed, as kube-apiserver's privileged-group authorizer does.
Bindings are read from the tracker on every request, so a change applies to the next request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from apis.errors import ApiError, ForbiddenError, NotFoundError
from apis.fake import ObjectTracker
from apis.resources import (
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    RBAC_GROUP,
    ROLE_BINDINGS,
    ROLES,
    GroupVersionResource,
)

from .attributes import RequestAttributes, UserInfo

__all__ = ["Decision", "RBACAuthorizer", "forbidden", "rule_allows", "SYSTEM_MASTERS"]

SYSTEM_MASTERS = "system:masters"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
Rule = Mapping[str, Any]


@dataclass(frozen=True)
class Decision:
    """``allowed`` and the authorizer's reason (``RBAC: allowed by …`` or the resolution errors of a denial)."""

    allowed: bool
    reason: str = ""


def _has(values: object, wanted: str, wildcard: str = "*") -> bool:
    return isinstance(values, list) and any(v == wildcard or v == wanted for v in values)


def _resource_matches(rule: Rule, combined: str, subresource: str) -> bool:
    for resource in rule.get("resources") or []:
        if resource in ("*", combined):
            return True
        if subresource and resource == f"*/{subresource}":
            return True
    return False


def _non_resource_url_matches(rule: Rule, path: str) -> bool:
    for url in rule.get("nonResourceURLs") or []:
        if url in ("*", path) or (url.endswith("*") and path.startswith(url.rstrip("*"))):
            return True
    return False


def rule_allows(attrs: RequestAttributes, rule: Rule) -> bool:
    """Whether one PolicyRule allows the request (``RuleAllows``)."""
    if not _has(rule.get("verbs"), attrs.verb):
        return False
    if not attrs.resource_request:
        return _non_resource_url_matches(rule, attrs.path)
    names = rule.get("resourceNames") or []
    return (
        _has(rule.get("apiGroups"), attrs.api_group)
        and _resource_matches(rule, attrs.combined_resource, attrs.subresource)
        and (not names or attrs.name in names)
    )


def _service_account_user(namespace: str, name: str) -> str:
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def _applies_to(user: UserInfo, subject: Mapping[str, Any], binding_namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name") or ""
    if kind == "User":
        return user.name == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace  # a RoleBinding's SA defaults to its namespace
        return bool(namespace) and user.name == _service_account_user(namespace, name)
    return False


def _describe_subject(subject: Mapping[str, Any], binding_namespace: str) -> str:
    kind, name = subject.get("kind"), subject.get("name") or ""
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_namespace}"'
    return f'{kind} "{name}"'


def _aggregate(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message alone, several de-duplicated in brackets."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


class RBACAuthorizer:
    """Authorizes requests with the RBAC objects stored in ``tracker`` (see the module doc)."""

    def __init__(self, tracker: ObjectTracker) -> None:
        self.tracker = tracker

    def authorize(self, attrs: RequestAttributes) -> Decision:
        if SYSTEM_MASTERS in attrs.user.groups:
            return Decision(True, "")
        errors: list[str] = []
        for source, rule, error in self.visit_rules_for(attrs.user, attrs.namespace):
            if rule is not None and rule_allows(attrs, rule):
                return Decision(True, f"RBAC: allowed by {source}")
            if error:
                errors.append(error)
        return Decision(False, f"RBAC: {_aggregate(errors)}" if errors else "")

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Rule], list[str]]:
        """Every rule that applies to ``user`` in ``namespace`` and the errors met resolving them."""
        rules, errors = [], []
        for _, rule, error in self.visit_rules_for(user, namespace):
            if rule is not None:
                rules.append(rule)
            if error:
                errors.append(error)
        return rules, errors

    def visit_rules_for(self, user: UserInfo, namespace: str) -> Iterator[tuple[str, Rule | None, str]]:
        """``(source, rule, error)`` for every rule that applies, in kube's order (``VisitRulesFor``)."""
        yield from self._visit(user, self._list(CLUSTER_ROLE_BINDINGS, ""), "", self._cluster_binding_source)
        if namespace:
            yield from self._visit(user, self._list(ROLE_BINDINGS, namespace), namespace, self._binding_source)

    def _visit(
        self, user: UserInfo, bindings: Iterable[Mapping[str, Any]], namespace: str,
        describe: Callable[[Mapping[str, Any], Mapping[str, Any]], str],
    ) -> Iterator[tuple[str, Rule | None, str]]:
        for binding in bindings:
            subject = next((s for s in binding.get("subjects") or [] if _applies_to(user, s, namespace)), None)
            if subject is None:
                continue
            try:
                rules = self._role_rules(binding.get("roleRef") or {}, namespace)
            except ApiError as err:
                yield "", None, err.message
                continue
            source = describe(binding, subject)
            for rule in rules:
                yield source, rule, ""

    def _role_rules(self, ref: Mapping[str, Any], namespace: str) -> list[Rule]:
        kind, name = ref.get("kind"), ref.get("name") or ""
        if kind == "Role":
            role = self._get(ROLES, namespace, name, "role")
        elif kind == "ClusterRole":
            role = self._get(CLUSTER_ROLES, "", name, "clusterrole")
        else:
            raise ApiError(400, "BadRequest", f'unsupported role reference kind: "{kind}"')
        return [r for r in role.get("rules") or [] if isinstance(r, Mapping)]

    def _get(self, gvr: GroupVersionResource, namespace: str, name: str, singular: str) -> dict[str, Any]:
        try:
            return self.tracker.get(gvr, namespace, name)
        except NotFoundError:  # as kube's listers word it: the singular resource
            raise NotFoundError(f'{singular}.{RBAC_GROUP} "{name}" not found') from None

    def _list(self, gvr: GroupVersionResource, namespace: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.tracker.list(gvr, namespace)["items"]
        return items

    @staticmethod
    def _cluster_binding_source(binding: Mapping[str, Any], subject: Mapping[str, Any]) -> str:
        ref = binding.get("roleRef") or {}
        name = (binding.get("metadata") or {}).get("name")
        return f'ClusterRoleBinding "{name}" of {ref.get("kind")} "{ref.get("name")}" to {_describe_subject(subject, "")}'

    @staticmethod
    def _binding_source(binding: Mapping[str, Any], subject: Mapping[str, Any]) -> str:
        ref, md = binding.get("roleRef") or {}, binding.get("metadata") or {}
        ns = md.get("namespace") or ""
        return (f'RoleBinding "{md.get("name")}/{ns}" of {ref.get("kind")} "{ref.get("name")}" to '
                f"{_describe_subject(subject, ns)}")


def forbidden(attrs: RequestAttributes, reason: str = "") -> ForbiddenError:
    """kube-apiserver's 403 for a denied request (``responsewriters.Forbidden``), word for word."""
    user = attrs.user.name
    if not attrs.resource_request:
        message = f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    else:
        resource = attrs.combined_resource
        scope = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
        message = f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" {scope}'
    if reason:
        message = f"{message}: {reason}"
    qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    if not qualified:
        text = f"forbidden: {message}"
    else:
        text = f'{qualified} "{attrs.name}" is forbidden: {message}' if attrs.name else f"{qualified} is forbidden: {message}"
    # Go's StatusDetails omits empty fields
    details = {k: v for k, v in (("name", attrs.name), ("group", attrs.api_group), ("kind", attrs.resource)) if v}
    return ForbiddenError(403, "Forbidden", text, details=details)
