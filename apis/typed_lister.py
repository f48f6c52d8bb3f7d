"""The base of a typed lister: a generic lister plus the accessor of one kind (``lister.jobs(namespace)``)."""

from __future__ import annotations

from typing import Any, Protocol

from .meta import Obj, SelectorLike
from .resources import GroupVersionResource

__all__ = ["GenericLister", "InformerFactory", "TypedLister"]


class GenericLister(Protocol):
    """What ``informers.Lister`` offers: the contract a typed lister wraps."""

    def list(self, selector: SelectorLike = None) -> list[Obj]: ...

    def get(self, name: str) -> Any: ...

    def namespaced(self, namespace: str) -> Any: ...


class InformerFactory(Protocol):
    """What a registered group needs of ``informers.SharedInformerFactory``: the informer of one resource (a
    ``GenericInformer``, with ``.informer()`` and ``.lister()``)."""

    def for_resource(self, gvr: GroupVersionResource) -> Any: ...


class TypedLister:
    """A generic lister plus the typed accessor of one kind (defined by subclasses: ``jobs(namespace)``)."""

    def __init__(self, lister: GenericLister) -> None:
        self.generic = lister

    @property
    def resource(self) -> GroupVersionResource | str | None:
        return getattr(self.generic, "resource", None)

    def list(self, selector: SelectorLike = None) -> list[Obj]:
        return self.generic.list(selector)

    def get(self, name: str) -> Any:
        return self.generic.get(name)

    def namespaced(self, namespace: str) -> Any:
        return self.generic.namespaced(namespace)
