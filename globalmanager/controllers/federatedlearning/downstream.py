"""What goes to the edge about a FederatedLearningJob (Sedna's ``downstream.go``): the whole object to every distinct
node named by ``spec.trainingWorkers[].template.spec.nodeName`` — ``insert`` on creation and on a change (as Go
Sedna does; its LC handles only insert and delete), ``delete`` on deletion. A node that a change removed from the job
gets a ``delete``.

The nodes are read from the object as it is, not from its typed view: a job whose spec the view rejects (its sync
fails it ``InvalidSpec``) still reaches, and leaves, the nodes it names, as in Go Sedna."""

from __future__ import annotations

from apis.meta import Obj
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.edge import DELETE, INSERT, UPDATE

__all__ = ["to_edge", "training_nodes"]


def training_nodes(job: Obj) -> list[str]:
    nodes: list[str] = []
    for worker in (job.get("spec") or {}).get("trainingWorkers") or []:
        node = (((worker or {}).get("template") or {}).get("spec") or {}).get("nodeName")
        if node and node not in nodes:
            nodes.append(str(node))
    return nodes


def to_edge(ctx: KindContext[None], operation: str, job: Obj, old: Obj | None) -> None:
    nodes = training_nodes(job)
    if operation == UPDATE:
        operation = INSERT
        for node in training_nodes(old or {}):
            if node not in nodes:
                ctx.send_to_edge(node, DELETE, job)
    if not nodes:
        ctx.log_edge_skip(job, "no spec.trainingWorkers[].template.spec.nodeName")
    for node in nodes:
        ctx.send_to_edge(node, operation, job)
