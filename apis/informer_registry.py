"""Typed informer groups and listers that API packages define next to their types, for the generic ``informers``.

client-go keeps the generated informers and listers of a custom resource in the CRD's own project; here an API
package (``apis.sedna``, ``apis.elasticdl``, or a controller author's own) registers them, and
``informers.SharedInformerFactory`` finds them without knowing any kind:

* ``register_group("sedna_v1alpha1", SednaV1alpha1Informers)`` makes ``factory.sedna_v1alpha1()`` return
  ``SednaV1alpha1Informers(factory)``, whose methods return ``factory.for_resource(gvr)``;
* ``register_lister(gvr, JobLister)`` makes the lister of ``gvr`` a ``JobLister`` wrapping the generic one, so that
  ``lister.jobs(namespace)`` works next to ``list``, ``get`` and ``namespaced``.

``apis`` never imports ``informers``: a group only needs the factory's ``for_resource``, a typed lister only the
generic lister's ``list``/``get``/``namespaced``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from .meta import Obj, SelectorLike
from .resources import GroupVersionResource

__all__ = ["GenericLister", "InformerFactory", "TypedLister", "group", "register_group", "register_lister", "typed_lister"]


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


_lock = threading.Lock()
_groups: dict[str, Callable[[Any], Any]] = {}
_listers: dict[GroupVersionResource, Callable[[GenericLister], Any]] = {}


def register_group(method: str, make: Callable[[Any], Any]) -> None:
    """``factory.<method>()`` returns ``make(factory)`` (for every ``SharedInformerFactory``)."""
    if not method.isidentifier() or method.startswith("_"):
        raise ValueError(f"group accessor name must be a public identifier, got {method!r}")
    with _lock:
        _groups[method] = make


def group(method: str) -> Callable[[Any], Any] | None:
    """The group registered under ``method``, or None."""
    with _lock:
        return _groups.get(method)


def register_lister(gvr: GroupVersionResource, wrap: Callable[[GenericLister], Any]) -> None:
    """Listers of ``gvr`` are ``wrap(generic_lister)``."""
    with _lock:
        _listers[gvr] = wrap


def typed_lister(gvr: GroupVersionResource) -> Callable[[GenericLister], Any] | None:
    """The typed lister registered for ``gvr``, or None."""
    with _lock:
        return _listers.get(gvr)
