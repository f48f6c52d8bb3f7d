"""What goes to the edge about a FederatedLearningJob (Sedna's ``downstream.go``): the whole object to every distinct
node named by ``spec.trainingWorkers[].template.spec.nodeName`` — ``insert`` on creation and on a change (as Go
Sedna does; its LC handles only insert and delete), ``delete`` on deletion. A node that a change removed from the job
gets a ``delete``. A job whose spec the typed view rejects goes to no node (its sync fails it ``InvalidSpec``; Go
Sedna cannot even decode it), and a change that makes the spec invalid removes the job from its nodes."""

from __future__ import annotations

from collections.abc import Mapping

from apis.meta import Obj
from apis.sedna.v1alpha1 import FLJobSpec
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.edge import DELETE, INSERT, UPDATE

from .refs import readable_spec

__all__ = ["to_edge", "training_nodes"]


def training_nodes(spec: FLJobSpec | None) -> list[str]:
    """The distinct nodes of the training workers, in order (none for an unreadable spec)."""
    nodes: list[str] = []
    for worker in (spec.training_workers or []) if spec is not None else []:
        pod_spec = (worker.template or {}).get("spec")
        node = pod_spec.get("nodeName") if isinstance(pod_spec, Mapping) else None
        if node and node not in nodes:
            nodes.append(str(node))
    return nodes


def to_edge(ctx: KindContext[None], operation: str, job: Obj, old: Obj | None) -> None:
    spec = readable_spec(job)
    nodes = training_nodes(spec)
    if operation == UPDATE:
        operation = INSERT
        for node in training_nodes(readable_spec(old) if old is not None else None):
            if node not in nodes:
                ctx.send_to_edge(node, DELETE, job)
    if spec is None:
        ctx.log_edge_skip(job, "the typed view rejects its spec")
    elif not nodes:
        ctx.log_edge_skip(job, "no spec.trainingWorkers[].template.spec.nodeName")
    for node in nodes:
        ctx.send_to_edge(node, operation, job)
