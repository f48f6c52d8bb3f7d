"""Which node's reports about an IL/LL job count (Kubernetes' NodeRestriction, for the edge link): a node may speak
for the job only where the job has placed it, and for a worker only where that worker runs.

An IL/LL job is sent to several LocalControllers (its Dataset's node for every ``Waiting`` stage, the nodes of its
stage workers, the eval node for the deploy decision), and the edge link already drops a report from a node the job
is not routed to (``not_routed``). Routing alone would let any of those nodes report for the others' workers: the
Dataset's node could post a train worker's output (the trained model's path, which other nodes' LCs then copy) for a
worker that runs elsewhere. So, with ``X`` the relaying node:

* a **worker's report** (it carries ``output``, as both Go's LC and ours relay a worker's message:
  ``{phase, status, output: {models, ownerInfo}}``) counts only from a node the stage's worker runs, ran or is
  placed on: a worker pod of the job for that stage (worker type ``train``/``eval``/``inference``) with
  ``spec.nodeName == X``, the job's ``sedna.io/<Stage>`` annotation (written by the GM from that pod's node), or the
  stage template's ``spec.nodeName`` (which the GM copies into the pod);
* an **LC's own report** (no ``output``: ``Ready`` with its input, a deploy decision, a stage the LC failed) counts
  only from the job's resident node (its Dataset's ``spec.nodeName``) or a node that runs or ran one of its workers
  (as above, any stage: the eval node takes the deploy decision).

Anything else raises ``NotEntitled``: the edge link counts it (``sedna_gm_edge_rejected_frames_total{reason=
"not_entitled"}``), logs it at most once per node and interval, acks it with the error, and the job is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from apis import meta
from apis.meta import Obj
from apis.resources import PODS
from apis.sedna.constants import DEPLOY, EVAL, STAGES, TRAIN
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.edge import NotEntitled, UpstreamMessage

from .conditions import Report
from .controller import dataset_node
from .fsm import stage_worker_type
from .placement import stage_node

__all__ = ["check_entitled", "is_worker_report", "stage_nodes"]


def is_worker_report(content: Mapping[str, Any]) -> bool:
    """Whether the report relays a worker's message (it carries ``output``) rather than being the LC's own."""
    return content.get("output") is not None


_STAGE_SPECS = {TRAIN: "trainSpec", EVAL: "evalSpec", DEPLOY: "deploySpec"}


def stage_nodes(ctx: KindContext[Any], job: Obj, pods: Sequence[Obj], stage: str) -> set[str]:
    """The nodes the stage's workers run, ran or are placed on: their pods' ``spec.nodeName``, ``sedna.io/<Stage>``
    and the stage template's ``spec.nodeName``."""
    label, wanted = f"{ctx.kind.lower()}.sedna.io/worker-type", stage_worker_type(stage)
    nodes = {_node_name(p) for p in pods if meta.labels(p).get(label) == wanted}
    nodes.add(stage_node(job, stage))
    stage_spec = (job.get("spec") or {}).get(_STAGE_SPECS.get(stage, ""))
    if isinstance(stage_spec, Mapping):
        template = stage_spec.get("template")
        nodes.add(_node_name(template) if isinstance(template, Mapping) else "")
    nodes.discard("")
    return nodes


def _node_name(obj: Mapping[str, Any]) -> str:
    spec = obj.get("spec")
    return str(spec.get("nodeName") or "") if isinstance(spec, Mapping) else ""


def check_entitled(ctx: KindContext[Any], job: Obj, msg: UpstreamMessage, report: Report) -> None:
    """Raise ``NotEntitled`` naming the rule when ``msg.node`` may not make ``report`` about ``job``."""
    pods = ctx.owned(PODS, job)
    if is_worker_report(msg.content):
        nodes = stage_nodes(ctx, job, pods, report.stage)
        if msg.node not in nodes:
            raise NotEntitled(
                f"node {msg.node} relayed a {report.stage} worker's report (it carries output), but no "
                f"{stage_worker_type(report.stage)} worker of the job runs there (its nodes: "
                f"{', '.join(sorted(nodes)) or 'none yet'}); a node reports only for its own workers")
        return
    resident = dataset_node(ctx, job)
    nodes = {resident} if resident else set()
    for stage in STAGES:
        nodes |= stage_nodes(ctx, job, pods, stage)
    if msg.node not in nodes:
        raise NotEntitled(
            f"node {msg.node} is neither the job's resident node (its Dataset's node: {resident or 'unknown'}) nor "
            f"runs one of its workers (nodes: {', '.join(sorted(nodes - {resident})) or 'none yet'}); only those "
            f"report for the job")
