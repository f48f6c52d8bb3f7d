"""What goes to the edge about a JointInferenceService (Sedna's ``downstream.go``): the whole object, to the node of
its edge worker (``spec.edgeWorker.template.spec.nodeName``): ``insert`` on creation, ``update`` on a change and
``delete`` on deletion. When a change moves the edge worker to another node, the old node gets a ``delete``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from globalmanager.runtime.edge import DELETE, UPDATE

if TYPE_CHECKING:
    from .controller import JointInferenceController

__all__ = ["edge_node", "sync_to_edge"]


def edge_node(service: Mapping[str, Any]) -> str:
    spec = service.get("spec") or {}
    template = (spec.get("edgeWorker") or {}).get("template") or {}
    return str((template.get("spec") or {}).get("nodeName") or "")


def sync_to_edge(
    controller: JointInferenceController, operation: str, service: Mapping[str, Any], old: Mapping[str, Any] | None = None
) -> None:
    node = edge_node(service)
    if operation == UPDATE and old is not None:
        old_node = edge_node(old)
        if old_node and old_node != node:
            controller.send_to_edge(old_node, DELETE, service)
    if not node:
        controller.log_edge_skip(service, "spec.edgeWorker.template.spec.nodeName is empty")
        return
    controller.send_to_edge(node, operation, service)
