"""Objects a job references by name (Models, Datasets, their Secrets, the Nodes it runs on), resolved for building
its workers.

A missing one raises ``MissingReference`` with a reason a kind puts in its status (``ModelNotFound``,
``DatasetNotFound``, ``SecretNotFound``, ``NodeNotFound``) and a message naming it. Models and Datasets are read from
informer caches (``JobController`` wakes the job when they appear); Secrets are read from the API
server when needed (the GM does not cache Secrets), so a missing one is retried later. Nodes come from one shared
Node informer (``NodeCheck``), which wakes the jobs naming a node when it is added.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from apis import errors, meta
from apis.client import ClientsetBase
from apis.resources import NODES
from apis.sedna.constants import STAGE_NODE_ANNOTATIONS
from informers import ResourceEventHandlerFuncs, SharedInformerFactory
from informers.factory import GenericInformer
from informers.listers import Lister
from reconcile import Controller

from .indexes import ensure_index
from .secrets import get_secret

__all__ = ["MissingReference", "NodeCheck", "get_credential", "get_referenced", "named_nodes"]

NODES_INDEX = "references:nodes"
_MAX_DEPTH = 12


class MissingReference(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def get_referenced(lister: Lister, kind: str, namespace: str, name: str, what: str = "") -> dict[str, Any]:
    """A copy of the cached ``kind`` object ``namespace/name`` of ``lister`` (its top level the caller's to change);
    ``MissingReference("<kind>NotFound")`` if absent."""
    try:
        return dict(lister.namespaced(namespace).get(name))
    except errors.NotFoundError:
        raise MissingReference(f"{kind}NotFound", f"{kind.lower()} {namespace}/{name}{what} not found") from None


def get_credential(
    clientset: ClientsetBase, namespace: str, secret_name: str, owner: str
) -> Mapping[str, Any] | None:
    """The Secret ``secret_name`` (``None`` when no name is given); ``MissingReference("SecretNotFound")``."""
    if not secret_name:
        return None
    secret = get_secret(clientset, namespace, secret_name)
    if secret is None:
        raise MissingReference("SecretNotFound", f"secret {namespace}/{secret_name} of {owner} not found")
    return secret


def named_nodes(job: Mapping[str, Any], dataset: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
    """``(node, where)`` for every node ``job`` names: a worker template's ``spec.nodeName`` anywhere in its spec
    (``trainSpec.template``, ``edgeWorker.template``, ``trainingWorkers[0].template`` …), its
    ``sedna.io/Train|Eval|Deploy`` annotations, and ``dataset``'s ``spec.nodeName``; in that order, each once."""
    found: list[tuple[str, str]] = []

    path = ["spec"]  # the keys down to the value walked; joined only for a node found (an index calls this per update)

    def walk(value: Mapping[str, Any] | list[Any], depth: int) -> None:
        if depth > _MAX_DEPTH:
            return
        if isinstance(value, Mapping):
            template = value.get("template")
            if isinstance(template, Mapping):
                node = (template.get("spec") or {}).get("nodeName") if isinstance(template.get("spec"), Mapping) else None
                if isinstance(node, str) and node:
                    found.append((node, "".join(path) + ".template.spec.nodeName"))
            items: Iterable[tuple[object, Any]] = value.items()
            step = ".{}"
        else:
            items, step = enumerate(value), "[{}]"
        for key, item in items:
            if isinstance(item, (Mapping, list)):
                path.append(step.format(key))
                walk(item, depth + 1)
                path.pop()

    spec = job.get("spec")
    if isinstance(spec, (Mapping, list)):
        walk(spec, 0)
    annotations = meta.annotations(job)
    for key in STAGE_NODE_ANNOTATIONS:
        if annotations.get(key):
            found.append((annotations[key], f"annotation {key}"))
    if dataset is not None and (dataset.get("spec") or {}).get("nodeName"):
        found.append((dataset["spec"]["nodeName"], f"dataset {meta.name(dataset)} spec.nodeName"))
    first: dict[str, str] = {}  # node → where it was first found
    for node, where in found:
        first.setdefault(node, where)
    return list(first.items())


def _job_node_names(job: Any) -> Iterable[str]:
    return [node for node, _ in named_nodes(job)] if isinstance(job, Mapping) else []


class NodeCheck:
    """Checks that the nodes a job names exist, on the GM's shared Node informer (cluster-scoped), and wakes the
    jobs (of ``job_informer``, through ``loop.enqueue_controller``) that name a node when it is added.

    A GM scoped to one namespace (``namespace`` in its config) does not check nodes. No Node visible at all (a fake
    API without nodes) means there is nothing to check against: every node passes. As for a Dataset, a node created
    just before the job may be seen after it: the job is noted, then woken by the node's event."""

    def __init__(self, informer_factory: SharedInformerFactory, job_informer: GenericInformer,
                 loop: Controller[str]) -> None:
        self._job_informer = job_informer
        self._loop = loop
        # a GM scoped to one namespace lists nothing cluster-wide (its RBAC may be a Role): no node check then
        self.enabled = not getattr(informer_factory, "namespace", "")
        if not self.enabled:
            return
        self.informer = informer_factory.for_resource(NODES)
        self.lister = self.informer.lister()
        ensure_index(job_informer.informer(), NODES_INDEX, lambda job: sorted(set(_job_node_names(job))))
        self._node_count = 0  # kept by the handlers: knowing whether any node exists costs no scan of the cache
        self._lock = threading.Lock()
        registration = self.informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(add_func=self._node_added, delete_func=self._node_deleted)
        )
        # synced once the handler has counted the initial list (the cache alone syncs before that)
        loop.add_cache_sync(registration.has_synced)

    def _node_deleted(self, node: Any) -> None:
        with self._lock:
            self._node_count = max(0, self._node_count - 1)

    def _node_added(self, node: Any) -> None:
        with self._lock:
            self._node_count += 1
        if not isinstance(node, Mapping):
            return
        for job in self._job_informer.informer().get_indexer().by_index(NODES_INDEX, meta.name(node)):
            self._loop.enqueue_controller(job, immediate=True)

    def check(self, job: Mapping[str, Any], dataset: Mapping[str, Any] | None = None) -> None:
        """``MissingReference("NodeNotFound")`` naming the first node ``job`` (or ``dataset``) names that does not
        exist."""
        if not self.enabled:
            return
        names = named_nodes(job, dataset)
        with self._lock:
            any_node = self._node_count > 0
        if not names or not any_node:
            return
        for node, where in names:
            try:
                self.lister.get(node)
                continue
            except errors.NotFoundError:
                raise MissingReference("NodeNotFound", f"node {node} ({where}) not found") from None
