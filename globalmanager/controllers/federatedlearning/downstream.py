"""What goes to the edge about a FederatedLearningJob (Sedna's ``downstream.go``): the whole object to every distinct
node named by ``spec.trainingWorkers[].template.spec.nodeName`` — ``insert`` on creation and on a change (as Go
Sedna does; its LC handles only insert and delete), ``delete`` on deletion. A node that a change removed from the job
gets a ``delete``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from globalmanager.runtime.edge import DELETE, INSERT, UPDATE

if TYPE_CHECKING:
    from .controller import FederatedLearningController

__all__ = ["training_nodes", "sync_to_edge"]


def training_nodes(job: Mapping[str, Any]) -> list[str]:
    nodes: list[str] = []
    for worker in (job.get("spec") or {}).get("trainingWorkers") or []:
        node = (((worker or {}).get("template") or {}).get("spec") or {}).get("nodeName")
        if node and node not in nodes:
            nodes.append(str(node))
    return nodes


def sync_to_edge(
    controller: FederatedLearningController, operation: str, job: Mapping[str, Any], old: Mapping[str, Any] | None = None
) -> None:
    nodes = training_nodes(job)
    if operation == UPDATE:
        operation = INSERT
        for node in training_nodes(old or {}):
            if node not in nodes:
                controller.send_to_edge(node, DELETE, job)
    if not nodes:
        controller.log_edge_skip(job, "no spec.trainingWorkers[].template.spec.nodeName")
    for node in nodes:
        controller.send_to_edge(node, operation, job)
