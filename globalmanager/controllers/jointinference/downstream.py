"""What goes to the edge about a JointInferenceService (Sedna's ``downstream.go``): the whole object, to the node of
its edge worker (``spec.edgeWorker.template.spec.nodeName``): ``insert`` on creation, ``update`` on a change and
``delete`` on deletion. When a change moves the edge worker to another node, the old node gets a ``delete``."""

from __future__ import annotations

from apis.meta import Obj
from apis.sedna.v1alpha1 import JointInferenceServiceSpec
from apis.typed import spec_of
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.edge import DELETE, UPDATE

__all__ = ["edge_node", "to_edge"]


def edge_node(service: Obj) -> str:
    """The node of the edge worker; ``""`` when the spec names none (or is not a JointInferenceService's)."""
    try:
        spec = spec_of(JointInferenceServiceSpec, service)
    except ValueError:
        return ""
    template = (spec.edge_worker.template if spec is not None and spec.edge_worker is not None else None) or {}
    return str((template.get("spec") or {}).get("nodeName") or "")


def to_edge(ctx: KindContext[None], operation: str, service: Obj, old: Obj | None) -> None:
    node = edge_node(service)
    if operation == UPDATE and old is not None:
        old_node = edge_node(old)
        if old_node and old_node != node:
            ctx.send_to_edge(old_node, DELETE, service)
    if not node:
        ctx.log_edge_skip(service, "spec.edgeWorker.template.spec.nodeName is empty or the spec is invalid")
        return
    ctx.send_to_edge(node, operation, service)
