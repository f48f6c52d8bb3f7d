"""``SharedInformerFactory``: one shared informer per resource over a clientset (client-go ``informers/factory.go``).

Typed accessors of the built-in groups are here (``core_v1().pods()`` ...); those of custom resources are registered
by their API package (``apis.informer_registry``: ``sedna_v1alpha1()``, ``elasticdl_v1alpha1()``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from apis import informer_registry
from apis import resources as r
from apis.client import ClientsetBase
from apis.logs import get_logger
from apis.resources import GroupVersionResource

from .backoff import Backoff
from .delta_fifo import TransformFunc
from .index import NAMESPACE_INDEX, meta_namespace_index_func
from .listers import lister_for
from .listwatch import ListWatch, TweakListOptionsFunc
from .shared_informer import SharedIndexInformer
from .synced import wait_for_cache_sync

__all__ = ["SharedInformerFactory", "GenericInformer"]

log = get_logger(__name__)


class GenericInformer:
    """An informer of one resource and its lister."""

    def __init__(self, resource: GroupVersionResource, informer: SharedIndexInformer) -> None:
        self.resource = resource
        self._informer = informer
        self._lister = lister_for(informer.get_indexer(), resource)

    def informer(self) -> SharedIndexInformer:
        return self._informer

    def lister(self) -> Any:
        """The typed lister (e.g. ``PodLister`` with ``pods(ns)``), a ``Lister`` for other resources."""
        return self._lister


class _Group:
    def __init__(self, factory: SharedInformerFactory) -> None:
        self._f = factory


class _CoreV1(_Group):
    def pods(self) -> GenericInformer:
        return self._f.for_resource(r.PODS)

    def nodes(self) -> GenericInformer:
        return self._f.for_resource(r.NODES)

    def services(self) -> GenericInformer:
        return self._f.for_resource(r.SERVICES)

    def events(self) -> GenericInformer:
        return self._f.for_resource(r.EVENTS)

    def secrets(self) -> GenericInformer:
        return self._f.for_resource(r.SECRETS)

    def config_maps(self) -> GenericInformer:
        return self._f.for_resource(r.CONFIG_MAPS)

    configmaps = config_maps

    def namespaces(self) -> GenericInformer:
        return self._f.for_resource(r.NAMESPACES)


class _AppsV1(_Group):
    def deployments(self) -> GenericInformer:
        return self._f.for_resource(r.DEPLOYMENTS)


class _CoordinationV1(_Group):
    def leases(self) -> GenericInformer:
        return self._f.for_resource(r.LEASES)


class SharedInformerFactory:
    """Creates (once per resource) and runs informers that share one list+watch per resource.

    ``namespace`` ("" = all) scopes namespaced resources; ``tweak_list_options(options)`` edits every list and
    watch request; ``transform`` is set on every informer; ``custom_resync`` maps a resource to its own period.
    ``informer_options`` are passed to every ``SharedIndexInformer`` (a ``Backoff`` in ``reflector_options`` is copied
    per informer so that informers never share backoff state; other option values are shared as given).
    """

    def __init__(
        self,
        clientset: ClientsetBase,
        default_resync: float = 0,
        namespace: str = "",
        tweak_list_options: TweakListOptionsFunc | None = None,
        transform: TransformFunc | None = None,
        custom_resync: Mapping[GroupVersionResource, float] | None = None,
        informer_options: Mapping[str, Any] | None = None,
    ) -> None:
        if not hasattr(clientset, "resource"):
            raise TypeError(f"clientset must provide resource(gvr, namespace), got {type(clientset).__name__}")
        self.clientset = clientset
        self.default_resync = float(default_resync)
        self.namespace = namespace
        self.tweak_list_options = tweak_list_options
        self.transform = transform
        self.custom_resync = dict(custom_resync or {})
        self._informer_options = dict(informer_options or {})
        self._lock = threading.Lock()
        self._informers: dict[GroupVersionResource, GenericInformer] = {}
        self._started: dict[GroupVersionResource, threading.Thread] = {}
        self._shutting_down = False

    def for_resource(self, gvr: GroupVersionResource) -> GenericInformer:
        """The shared informer of ``gvr`` (created on first use; call ``start`` again for new ones)."""
        if not isinstance(gvr, GroupVersionResource):
            raise TypeError(f"for_resource needs a GroupVersionResource, got {type(gvr).__name__}")
        with self._lock:
            existing = self._informers.get(gvr)
            if existing is not None:
                return existing
            info = r.lookup(gvr)
            client = self.clientset.resource(gvr, self.namespace if info.namespaced else "")
            lw = ListWatch.from_resource(client, tweak_list_options=self.tweak_list_options)
            informer = SharedIndexInformer(
                lw,
                self.custom_resync.get(gvr, self.default_resync),
                {NAMESPACE_INDEX: meta_namespace_index_func},
                name=str(gvr),
                **self._options_for_one_informer(),
            )
            if self.transform is not None:
                informer.set_transform(self.transform)
            generic = GenericInformer(gvr, informer)
            self._informers[gvr] = generic
            return generic

    def _options_for_one_informer(self) -> dict[str, Any]:
        """``informer_options`` with stateful reflector options copied: every informer backs off on its own."""
        options = dict(self._informer_options)
        reflector_options = options.get("reflector_options")
        if reflector_options:
            reflector_options = dict(reflector_options)
            for name, value in reflector_options.items():
                if isinstance(value, Backoff):
                    reflector_options[name] = value.fresh_copy()
            options["reflector_options"] = reflector_options
        return options

    def lister(self, gvr: GroupVersionResource) -> Any:
        """``for_resource(gvr).lister()``: the typed lister of ``gvr`` (see ``GenericInformer.lister``)."""
        return self.for_resource(gvr).lister()

    # -- typed accessors -------------------------------------------------------------------------------------------
    def core_v1(self) -> _CoreV1:
        return _CoreV1(self)

    def apps_v1(self) -> _AppsV1:
        return _AppsV1(self)

    def coordination_v1(self) -> _CoordinationV1:
        return _CoordinationV1(self)

    def __getattr__(self, name: str) -> Callable[[], Any]:
        """Typed groups registered by API packages (``apis.informer_registry``), e.g. ``sedna_v1alpha1()``."""
        make = informer_registry.group(name)
        if make is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return lambda: make(self)

    # -- lifecycle -------------------------------------------------------------------------------------------------
    def start(self, stop_event: threading.Event) -> None:
        """Run every informer not yet started, each in its own thread (idempotent; a no-op after shutdown)."""
        with self._lock:
            if self._shutting_down:
                return
            for gvr, generic in self._informers.items():
                if gvr in self._started:
                    continue
                t = threading.Thread(target=generic.informer().run, args=(stop_event,), name=f"informer-{gvr}",
                                     daemon=True)
                self._started[gvr] = t
                t.start()

    def wait_for_cache_sync(self, stop_event: threading.Event) -> dict[GroupVersionResource, bool]:
        """Wait for every started informer; ``{resource: synced}``."""
        with self._lock:
            started = [(gvr, self._informers[gvr].informer()) for gvr in self._started]
        return {gvr: wait_for_cache_sync(stop_event, inf.has_synced) for gvr, inf in started}

    def shutdown(self, timeout: float | None = None) -> None:
        """Refuse further starts and wait for the informer threads (set the stop event first)."""
        with self._lock:
            self._shutting_down = True
            threads = list(self._started.values())
        for t in threads:
            t.join(timeout)
            if t.is_alive():
                log.warning("informer still running after shutdown timeout", thread=t.name)
