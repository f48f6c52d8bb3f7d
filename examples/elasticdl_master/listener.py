"""The event listener: a pod informer filtered to the job's workers, folding every pod event — ours, the
scheduler's, the kubelet's, ``kubectl``'s — into the worker table and waking the worker manager.

The filter is a label selector on the list and watch themselves (``tweak_list_options``), so the informer caches the
job's worker pods only, never the namespace's other pods.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import structlog

from apis import ListOptions, meta
from apis.client import ClientsetBase
from informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, SharedInformerFactory

from .pods import worker_selector
from .state import WorkerTable, worker_id_of

__all__ = ["EventListener", "worker_informer_factory"]

log = structlog.get_logger("elasticdl_master.listener")


def worker_informer_factory(clientset: ClientsetBase, namespace: str, job_name: str) -> SharedInformerFactory:
    """An informer factory whose lists and watches see only ``job_name``'s worker pods in ``namespace``."""
    selector = worker_selector(job_name)

    def only_workers(options: ListOptions) -> None:
        options.label_selector = selector

    return SharedInformerFactory(clientset, namespace=namespace, tweak_list_options=only_workers)


class EventListener:
    """Registers its handlers on the factory's pod informer; ``on_change(worker_id)`` runs after every event that
    reached the table (in the informer's handler thread, one event at a time)."""

    def __init__(self, factory: SharedInformerFactory, table: WorkerTable, on_change: Callable[[int], None]) -> None:
        pods = factory.core_v1().pods()
        self.informer = pods.informer()
        self.lister = pods.lister()
        self.table = table
        self.on_change = on_change
        self.informer.add_event_handler(ResourceEventHandlerFuncs(
            add_func=self.on_pod,
            update_func=lambda old, new: self.on_pod(new),
            delete_func=self.on_pod_deleted,
        ))

    def on_pod(self, pod: Mapping[str, Any]) -> None:
        state = self.table.observe(pod)
        if state is None:
            log.warning("worker pod without a worker id label; ignored", pod=meta.name(pod))
            return
        self.on_change(state.worker_id)

    def on_pod_deleted(self, obj: object) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        worker_id = worker_id_of(pod) if isinstance(pod, Mapping) else None
        if worker_id is None and isinstance(obj, DeletedFinalStateUnknown):  # no last state: the name says it
            tail = obj.key.rsplit("-", 1)[-1]
            worker_id = int(tail) if tail.isdigit() else None
        if worker_id is None:
            return
        if self.table.mark_deleted(worker_id) is not None:
            self.on_change(worker_id)
