"""Listers: read-only queries on an informer's indexer (client-go generated listers / ``GenericLister``).

Typed listers of the built-in kinds are here; those of custom resources come from their API package
(``apis.informer_registry``).

``get`` raises ``apis.errors.NotFoundError`` worded as client-go's listers word it, with the singular resource
(``pod "x" not found``, ``deployment.apps "x" not found``).
"""

from __future__ import annotations

from typing import Any

from apis import errors, informer_registry, meta
from apis import resources as r
from apis.resources import GroupVersionResource

from .index import NAMESPACE_INDEX, Indexer

__all__ = [
    "Lister",
    "NamespaceLister",
    "lister_for",
    "PodLister",
    "NodeLister",
    "ServiceLister",
    "EventLister",
    "SecretLister",
    "ConfigMapLister",
    "NamespaceResourceLister",
    "DeploymentLister",
    "LeaseLister",
]



def _selector(selector: meta.SelectorLike) -> meta.Selector | None:
    if selector is None:
        return None
    if isinstance(selector, meta.Selector):
        return None if selector.empty() else selector
    if isinstance(selector, str):
        parsed = meta.parse_selector(selector)
        return None if parsed.empty() else parsed
    if isinstance(selector, dict):
        return meta.selector_from_set(selector) if selector else None
    raise TypeError(f"selector must be an apis.meta.Selector, a selector string or a label dict, got {type(selector).__name__}")


def _matching(objs: list[meta.Obj], selector: meta.SelectorLike) -> list[meta.Obj]:
    sel = _selector(selector)
    if sel is None:
        return objs
    return [o for o in objs if sel.matches(meta.labels(o))]


def _resource_names(resource: GroupVersionResource | str) -> tuple[str, str]:
    """(singular resource, group) for NotFound messages."""
    if isinstance(resource, GroupVersionResource):
        try:
            info = r.lookup(resource)
            singular = info.singular or info.kind.lower()
        except KeyError:
            singular = resource.resource
        return singular, resource.group
    if isinstance(resource, str):
        name, _, group = resource.partition(".")
        return name, group
    raise TypeError(f"resource must be a GroupVersionResource or a str, got {type(resource).__name__}")


class NamespaceLister:
    """Objects of one namespace."""

    def __init__(self, indexer: Indexer, namespace: str, singular: str, group: str) -> None:
        self._indexer = indexer
        self.namespace = namespace
        self._singular = singular
        self._group = group

    def list(self, selector: meta.SelectorLike = None) -> list[meta.Obj]:
        """Objects in the namespace; the namespace "" (NamespaceAll) lists every object, as client-go does."""
        if not self.namespace:
            return _matching(self._indexer.list(), selector)
        try:
            objs = self._indexer.by_index(NAMESPACE_INDEX, self.namespace)
        except ValueError:  # no namespace index: scan
            objs = [o for o in self._indexer.list() if meta.namespace(o) == self.namespace]
        return _matching(objs, selector)

    def get(self, name: str) -> meta.Obj:
        key = f"{self.namespace}/{name}" if self.namespace else name
        obj, exists = self._indexer.get_by_key(key)
        if not exists or obj is None:
            raise errors.new_not_found(self._singular, name, self._group)
        return obj


class Lister:
    """All objects of one resource in an indexer; ``namespaced(ns)`` narrows to a namespace."""

    def __init__(self, indexer: Indexer, resource: GroupVersionResource | str) -> None:
        self._indexer = indexer
        self.resource = resource
        self._singular, self._group = _resource_names(resource)

    def list(self, selector: meta.SelectorLike = None) -> list[meta.Obj]:
        return _matching(self._indexer.list(), selector)

    def get(self, name: str) -> meta.Obj:
        """Get by key: ``name`` for cluster-scoped objects, or ``namespace/name``."""
        obj, exists = self._indexer.get_by_key(name)
        if not exists or obj is None:
            raise errors.new_not_found(self._singular, name, self._group)  # the name as given, as client-go
        return obj

    def namespaced(self, namespace: str) -> NamespaceLister:
        return NamespaceLister(self._indexer, namespace, self._singular, self._group)


class PodLister(Lister):
    def pods(self, namespace: str) -> NamespaceLister:
        return self.namespaced(namespace)


class NodeLister(Lister):
    """Nodes are cluster-scoped: use ``get(name)`` / ``list()``."""


class NamespaceResourceLister(Lister):
    """Namespaces are cluster-scoped: use ``get(name)`` / ``list()``."""


class ServiceLister(Lister):
    def services(self, namespace: str) -> NamespaceLister:
        return self.namespaced(namespace)


class EventLister(Lister):
    def events(self, namespace: str) -> NamespaceLister:
        return self.namespaced(namespace)


class SecretLister(Lister):
    def secrets(self, namespace: str) -> NamespaceLister:
        return self.namespaced(namespace)


class ConfigMapLister(Lister):
    def config_maps(self, namespace: str) -> NamespaceLister:
        return self.namespaced(namespace)

    configmaps = config_maps


class DeploymentLister(Lister):
    def deployments(self, namespace: str) -> NamespaceLister:
        return self.namespaced(namespace)


class LeaseLister(Lister):
    def leases(self, namespace: str) -> NamespaceLister:
        return self.namespaced(namespace)


_TYPED: dict[GroupVersionResource, type[Lister]] = {
    r.PODS: PodLister,
    r.NODES: NodeLister,
    r.NAMESPACES: NamespaceResourceLister,
    r.SERVICES: ServiceLister,
    r.EVENTS: EventLister,
    r.SECRETS: SecretLister,
    r.CONFIG_MAPS: ConfigMapLister,
    r.DEPLOYMENTS: DeploymentLister,
    r.LEASES: LeaseLister,
}


def lister_for(indexer: Indexer, gvr: GroupVersionResource) -> Any:
    """The typed lister of ``gvr``: a built-in kind's (``PodLister`` ...), else one an API package registered
    (``apis.informer_registry``, e.g. ``IncrementalLearningJobLister``), else a generic ``Lister``."""
    builtin = _TYPED.get(gvr)
    if builtin is not None:
        return builtin(indexer, gvr)
    generic = Lister(indexer, gvr)
    wrap = informer_registry.typed_lister(gvr)
    return generic if wrap is None else wrap(generic)
