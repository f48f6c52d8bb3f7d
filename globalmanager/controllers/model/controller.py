"""The Model controller (Go Sedna has none: its IL controller sent Models itself): Models go to the nodes that jobs
route them to, and stay up to date there.

Routing API, for job controllers (one ``ModelController`` per ``ControllerContext``: ``model_router(ctx)``):
* ``set_routes(owner, routes)``: the complete set of ``ModelRoute(node, namespace, name)`` that ``owner`` (a string
  naming the job, e.g. ``"incrementallearningjob/default/job-1"``) needs now. Idempotent: call it from every sync
  with the full set (after a GM restart the routes are rebuilt that way); ``set_routes(owner, [])`` when the job is
  gone. ``route``/``unroute`` change single routes.
* A Model is sent (``insert``, with the ``sedna.io/credential`` annotation of ``spec.credentialName``) to every node
  some owner routes it to, once per resourceVersion; a changed Model is re-sent to those nodes. When no owner routes
  it to a node any more, that node gets a ``delete``. A deleted Model is deleted from its nodes (its routes stay, so
  a re-created Model is sent again). A node that (re)connects gets the Models routed to it (state source).
* LCs send nothing upstream about Models.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from apis import errors, meta
from apis.meta import Obj
from globalmanager.runtime.credential import edge_copy, with_kind
from globalmanager.runtime.edge import DELETE, INSERT, IncompleteState
from globalmanager.runtime.metrics import controller_metrics
from informers import (
    DeletedFinalStateUnknown,
    ResourceEventHandlerFuncs,
    deletion_handling_meta_namespace_key_func,
    split_meta_namespace_key,
)
from reconcile import Controller, failure_fields

from ..context import ControllerContext

__all__ = ["NAME", "ModelController", "ModelRoute", "model_router", "new_controller"]

log = structlog.get_logger(__name__)

NAME = "Model"
API_VERSION = "sedna.io/v1alpha1"
KIND = "Model"

_ModelKey = tuple[str, str]  # (namespace, name)


@dataclass(frozen=True)
class ModelRoute:
    node: str
    namespace: str
    name: str


class ModelController:
    def __init__(self, ctx: ControllerContext, workers: int = 1) -> None:
        if ctx.edge is None:
            raise ValueError("the Model controller needs the edge link (ControllerContext.edge)")
        self.name = NAME
        self.clientset = ctx.clientset
        self.edge = ctx.edge
        informer = ctx.informer_factory.sedna_v1alpha1().models()
        self.informer = informer.informer()
        self.lister = informer.lister()
        self.loop = Controller(NAME, self.sync, workers=workers, metrics=controller_metrics(ctx.registry), log=log)
        self.loop.add_cache_sync(self.informer.has_synced)
        self.synced = self.loop.synced
        self._lock = threading.Lock()
        self._routes: dict[str, set[ModelRoute]] = {}  # owner → routes
        self._owners: dict[_ModelKey, dict[str, set[str]]] = {}  # model → node → owners
        self._sent: dict[_ModelKey, dict[str, str]] = {}  # model → node → resourceVersion sent
        self._log = log.bind(controller=NAME)
        self.informer.add_event_handler(
            ResourceEventHandlerFuncs(add_func=self._enqueue, update_func=self._update, delete_func=self._enqueue)
        )
        self.edge.add_state_source("model", self.state_for)

    # -- routing API --------------------------------------------------------------------------------------------------
    def set_routes(self, owner: str, routes: Iterable[ModelRoute]) -> None:
        """Make ``routes`` the complete set of routes of ``owner``."""
        wanted = set(routes)
        removed: list[ModelRoute] = []
        with self._lock:
            current = self._routes.get(owner, set())
            added = wanted - current
            for route in current - wanted:
                nodes = self._owners.get((route.namespace, route.name), {})
                owners = nodes.get(route.node, set())
                owners.discard(owner)
                if not owners:
                    nodes.pop(route.node, None)
                    self._sent.get((route.namespace, route.name), {}).pop(route.node, None)
                    removed.append(route)
                if not nodes:
                    self._owners.pop((route.namespace, route.name), None)
                    self._sent.pop((route.namespace, route.name), None)
            for route in added:
                self._owners.setdefault((route.namespace, route.name), {}).setdefault(route.node, set()).add(owner)
            if wanted:
                self._routes[owner] = wanted
            else:
                self._routes.pop(owner, None)
        for route in removed:
            self.edge.send_to_edge(route.node, DELETE, self._bare(route.namespace, route.name))
            self._log.info("model unrouted from node", key=f"{route.namespace}/{route.name}", node=route.node)
        for model in {(r.namespace, r.name) for r in added}:
            self.loop.enqueue(f"{model[0]}/{model[1]}")

    def route(self, owner: str, node: str, namespace: str, name: str) -> None:
        with self._lock:
            routes = set(self._routes.get(owner, set()))
        self.set_routes(owner, routes | {ModelRoute(node, namespace, name)})

    def unroute(self, owner: str, node: str | None = None) -> None:
        """Drop the routes of ``owner`` (only those to ``node`` when given)."""
        with self._lock:
            routes = set(self._routes.get(owner, set()))
        self.set_routes(owner, {r for r in routes if node is not None and r.node != node})

    def nodes_for(self, namespace: str, name: str) -> set[str]:
        with self._lock:
            return set(self._owners.get((namespace, name), {}))

    def routes_of(self, owner: str) -> set[ModelRoute]:
        with self._lock:
            return set(self._routes.get(owner, set()))

    # -- controller ---------------------------------------------------------------------------------------------------
    def _enqueue(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        self.loop.enqueue(deletion_handling_meta_namespace_key_func(obj))

    def _update(self, old: Obj, new: Obj) -> None:
        if meta.resource_version(old) != meta.resource_version(new):
            self._enqueue(new)

    def sync(self, key: str) -> None:
        namespace, name = split_meta_namespace_key(key)
        try:
            model = self.lister.namespaced(namespace).get(name)
        except errors.NotFoundError:
            model = None
        with self._lock:
            nodes = set(self._owners.get((namespace, name), {}))
            sent = dict(self._sent.get((namespace, name), {}))
        if model is None:
            for node in sent:
                self.edge.send_to_edge(node, DELETE, self._bare(namespace, name))
            with self._lock:
                self._sent.pop((namespace, name), None)
            return
        rv = meta.resource_version(model)
        targets = [node for node in nodes if sent.get(node) != rv]
        if not targets:
            return
        obj = self.prepare(model)
        for node in targets:
            self.edge.send_to_edge(node, INSERT, obj)
        with self._lock:
            if (namespace, name) in self._owners:  # still routed
                record = self._sent.setdefault((namespace, name), {})
                for node in targets:
                    if node in self._owners[(namespace, name)]:
                        record[node] = rv
        self._log.info("model sent to nodes", key=key, nodes=sorted(targets), resource_version=rv)

    def prepare(self, model: Mapping[str, Any]) -> dict[str, Any]:
        """The Model as sent: with ``kind`` and the credential annotation of ``spec.credentialName``."""
        return edge_copy(model, self.clientset, API_VERSION, KIND)

    def _bare(self, namespace: str, name: str) -> dict[str, Any]:
        try:
            return with_kind(self.lister.namespaced(namespace).get(name), API_VERSION, KIND)
        except errors.NotFoundError:
            return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"namespace": namespace, "name": name}}

    def state_for(self, node: str) -> list[dict[str, Any]]:
        with self._lock:
            models = [model for model, nodes in self._owners.items() if node in nodes]
        result = []
        unprepared = []
        for namespace, name in models:
            try:
                result.append(self.prepare(self.lister.namespaced(namespace).get(name)))
            except errors.NotFoundError:
                continue
            except Exception as exc:
                self._log.warning("cannot prepare model for node; retrying later", key=f"{namespace}/{name}",
                                  node=node, **failure_fields(exc))
                self.loop.enqueue(f"{namespace}/{name}")
                unprepared.append(f"{namespace}/{name}")
        if unprepared:  # the node keeps the Models it holds (see IncompleteState)
            raise IncompleteState(result, f"models not prepared now: {', '.join(unprepared)}")
        return result

    def run(self, stop: threading.Event) -> None:
        self.loop.run(stop)


def model_router(ctx: ControllerContext) -> ModelController:
    """The one ``ModelController`` of ``ctx`` (created on first use): what job controllers route Models with."""
    if ctx.model_router is None:
        ctx.model_router = ModelController(ctx)
    return ctx.model_router


def new_controller(ctx: ControllerContext) -> ModelController:
    return model_router(ctx)
