"""The Dataset controller: each Dataset goes to the LC of ``spec.nodeName``; that LC's sample counts come back.

Go Sedna's Dataset controller (``pkg/globalmanager/controllers/dataset``), level-triggered:
* add and update → ``insert`` to ``spec.nodeName`` (a periodic resync re-sends, as in Go; an update that changed
  only the status is not re-sent); delete → ``delete`` to the node it was sent to;
* a changed ``nodeName`` deletes it from the old node and inserts it on the new one;
* no ``nodeName`` → a Warning Event ``NodeNameMissing`` (and a delete from the node it was on), no retry;
* a Secret that cannot be read is retried with rate limiting (``reconcile.Controller``);
* a node (re)connecting gets every Dataset of its ``nodeName`` (state source, via the ``sedna.io/nodeName`` index);
* reports ``{"numberOfSamples": N}`` from the node a Dataset is routed to update its status (``upstream.py``); a
  report's ``error`` (our LC's, when it cannot count) sets the ``Ready`` condition to False with the LC's reason and
  records a Warning Event with it; the next count sets it back to True, with a Normal Event ``SamplesCounted``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from apis import errors, meta
from apis.meta import Obj
from apis.record import NORMAL, WARNING
from globalmanager.runtime.edge import DELETE, INSERT, IncompleteState, UpstreamMessage
from globalmanager.runtime.metrics import controller_metrics
from informers import (
    DeletedFinalStateUnknown,
    ResourceEventHandlerFuncs,
    deletion_handling_meta_namespace_key_func,
    split_meta_namespace_key,
)
from reconcile import Controller, failure_fields

from ..context import ControllerContext
from .downstream import bare, node_of, prepare
from .upstream import REASON_SAMPLES_COUNTED, apply_report

__all__ = ["NAME", "NODE_NAME_INDEX", "DatasetController", "new_controller"]

log = structlog.get_logger(__name__)

NAME = "Dataset"
NODE_NAME_INDEX = "sedna.io/nodeName"
REASON_NODE_NAME_MISSING = "NodeNameMissing"


def _node_name_index(obj: Mapping[str, Any]) -> list[str]:
    node = node_of(obj)
    return [node] if node else []


@dataclass(frozen=True)
class _Placement:
    node: str
    obj: Mapping[str, Any]  # the cached object last sent (shared, read-only)


def _only_status_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    return (
        meta.resource_version(old) != meta.resource_version(new)
        and meta.generation(old) == meta.generation(new)
        and old.get("spec") == new.get("spec")
        and meta.labels(old) == meta.labels(new)
        and meta.annotations(old) == meta.annotations(new)
    )


class DatasetController:
    def __init__(self, ctx: ControllerContext, workers: int = 1) -> None:
        if ctx.edge is None:
            raise ValueError("the Dataset controller needs the edge link (ControllerContext.edge)")
        self.name = NAME
        self.clientset = ctx.clientset
        self.recorder = ctx.recorder
        self.edge = ctx.edge
        informer = ctx.informer_factory.sedna_v1alpha1().datasets()
        self.informer = informer.informer()
        self.lister = informer.lister()
        self.informer.add_indexers({NODE_NAME_INDEX: _node_name_index})
        self.loop = Controller(NAME, self.sync, workers=workers, metrics=controller_metrics(ctx.registry), log=log)
        self.loop.add_cache_sync(self.informer.has_synced)
        self.synced = self.loop.synced
        self._lock = threading.Lock()
        self._placed: dict[str, _Placement] = {}
        self._log = log.bind(controller=NAME)
        self.informer.add_event_handler(
            ResourceEventHandlerFuncs(add_func=self._enqueue, update_func=self._update, delete_func=self._delete)
        )
        self.edge.add_upstream_handler("dataset", self.handle_report)
        self.edge.add_state_source("dataset", self.state_for)

    # -- handlers ---------------------------------------------------------------------------------------------------
    def _enqueue(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        self.loop.enqueue(deletion_handling_meta_namespace_key_func(obj))

    def _update(self, old: Obj, new: Obj) -> None:
        if not _only_status_changed(old, new):
            self._enqueue(new)

    def _delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        dataset = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        key = deletion_handling_meta_namespace_key_func(obj)
        placement = _Placement(node_of(dataset), dataset) if isinstance(dataset, Mapping) else None
        with self._lock:  # e.g. deleted before this GM sent it: still tell the node it was meant for
            if placement is not None and placement.node and key not in self._placed:
                self._placed[key] = placement
        self.loop.enqueue(key)

    # -- sync -------------------------------------------------------------------------------------------------------
    def sync(self, key: str) -> None:
        namespace, name = split_meta_namespace_key(key)
        try:
            dataset = self.lister.namespaced(namespace).get(name)
        except errors.NotFoundError:
            dataset = None
        with self._lock:
            placed = self._placed.get(key)
        node = node_of(dataset) if dataset is not None else ""
        if placed is not None and placed.node != node:
            self.edge.send_to_edge(placed.node, DELETE, bare(placed.obj))
            with self._lock:
                self._placed.pop(key, None)
            self._log.info("dataset removed from node", key=key, node=placed.node)
        if dataset is None:
            return
        if not node:
            self._log.warning("dataset has no spec.nodeName; not sent to any node", key=key)
            self.recorder.event(dataset, WARNING, REASON_NODE_NAME_MISSING,
                                "spec.nodeName is empty: no LocalController monitors this dataset")
            return
        self.edge.send_to_edge(node, INSERT, prepare(dataset, self.clientset))
        with self._lock:
            self._placed[key] = _Placement(node, dataset)
        if placed is None or placed.node != node:
            self._log.info("dataset sent to node", key=key, node=node)

    def state_for(self, node: str) -> list[dict[str, Any]]:
        """Every Dataset of ``node``, as sent; one whose Secret cannot be read now is left to its retry, and the answer
        is then ``IncompleteState`` (the node keeps the Datasets it holds)."""
        result = []
        unprepared = []
        for dataset in self.informer.get_indexer().by_index(NODE_NAME_INDEX, node):
            try:
                result.append(prepare(dataset, self.clientset))
            except Exception as exc:
                key = f"{meta.namespace(dataset)}/{meta.name(dataset)}"
                self._log.warning("cannot prepare dataset for node; retrying later", key=key, node=node,
                                  **failure_fields(exc))
                self.loop.enqueue(key)
                unprepared.append(key)
        if unprepared:
            raise IncompleteState(result, f"datasets not prepared now: {', '.join(unprepared)}")
        return result

    def handle_report(self, message: UpstreamMessage) -> None:
        outcome = apply_report(self.clientset, self.lister, message)
        if outcome is None:
            return
        key = f"{message.namespace}/{message.name}"
        self._log.debug("dataset status updated", key=key, node=message.node,
                        number_of_samples=message.content.get("numberOfSamples"))
        if outcome.error is not None:  # the LC reports each problem once, when it changes
            if outcome.ready_changed:
                self._log.warning("the node cannot count the dataset's samples", key=key, node=message.node,
                                  reason=outcome.error.reason, error=outcome.error.message)
            self.recorder.event(outcome.dataset, WARNING, outcome.error.reason,
                                f"node {message.node}: {outcome.error.message}")
        elif outcome.ready_changed:
            self._log.info("the node counts the dataset's samples again", key=key, node=message.node)
            self.recorder.event(outcome.dataset, NORMAL, REASON_SAMPLES_COUNTED,
                                f"node {message.node} counted {message.content.get('numberOfSamples')} samples")

    def run(self, stop: threading.Event) -> None:
        self.loop.run(stop)


def new_controller(ctx: ControllerContext) -> DatasetController:
    return DatasetController(ctx)
