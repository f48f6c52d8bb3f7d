"""Which LocalControllers hold an IL/LL job, level-triggered (Sedna's stage-aware ``syncToEdge``).

A kind gives a pure ``plan(job, dataset_node) -> Plan``:
* ``send``: the nodes that get the job now (``insert``), exactly where Go Sedna's table sends it for the current
  condition (an LC acts on the state it is sent, so a node outside ``send`` keeps the copy it had);
* ``keep``: the nodes that may hold it (``send`` included); a node that holds the job and is not in ``keep`` gets a
  ``delete`` (the job as cached). ``None``: the dataset's node is unknown, nothing is sent or deleted;
* ``models``: the ``ModelRoute``s the kind needs now (given to the Model router, which sends and removes them).

``EdgePlacement`` (the kind's long-lived state, built once by ``LearningRules.state``) applies plans: ``place(key)`` (on every job event and every sync; re-reads the job from the cache,
so an older copy is never sent after a newer one; a copy whose resourceVersion a node has already got is not sent
again), ``delete(job)`` (a ``delete`` to every node that held it, and to the dataset, train, eval and deploy nodes
the job names, as Go does; the job sent carries ``metadata.deletionTimestamp``, which tells an LC that the job is gone
for good, not only off that node: only then does it remove what a running pod may still use, the hot-update
directory), and ``state_for(node)``, the edge link's state source: on (re)connection a node gets
the copy it was last sent, or, for a node the job should be on that this GM has not sent it yet (after a GM
restart), the current copy. Nothing about a job is kept once it is deleted. Thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog

from apis import errors, meta
from apis.meta import Obj
from apis.sedna.constants import STAGES, stage_node_annotation
from globalmanager.controllers.model import ModelController, ModelRoute
from globalmanager.runtime.credential import edge_copy, with_kind
from globalmanager.runtime.edge import DELETE, INSERT

if TYPE_CHECKING:
    from globalmanager.runtime.context import KindContext

__all__ = ["EdgePlacement", "ModelNeed", "Plan", "PlanFunction", "stage_node"]

log = structlog.get_logger(__name__)

def stage_node(job: Mapping[str, Any], stage: str) -> str:
    """The node annotated on the job for ``stage`` (``sedna.io/Train|Eval|Deploy``), or ``""``."""
    return str(meta.annotations(job).get(stage_node_annotation(stage)) or "")


@dataclass(frozen=True)
class ModelNeed:
    node: str
    model: str  # a Model name in the job's namespace


@dataclass(frozen=True)
class Plan:
    send: frozenset[str] = frozenset()
    keep: frozenset[str] | None = None
    models: frozenset[ModelNeed] = frozenset()


PlanFunction = Callable[[Obj, str], Plan]
"""``plan(job, dataset_node)``: the kind's plan for ``job`` (its Dataset on ``dataset_node``, ``""``: unknown)."""


@dataclass
class _Held:
    uid: str
    nodes: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # node → cached job last sent (shared)


class EdgePlacement:
    """Applies a kind's plans through ``ctx.send_to_edge`` and the Model ``router`` (``None``: no Models)."""

    def __init__(self, ctx: KindContext[Any], plan: PlanFunction, dataset_node: Callable[[Obj], str]) -> None:
        self.ctx = ctx
        self.plan = plan
        self.dataset_node = dataset_node
        self.router: ModelController | None = None
        self._lock = threading.Lock()
        self._held: dict[str, _Held] = {}
        self._log = log.bind(controller=ctx.name)

    def owner(self, key: str) -> str:
        return f"{self.ctx.kind.lower()}/{key}"

    def held_nodes(self, key: str) -> set[str]:
        with self._lock:
            held = self._held.get(key)
            return set(held.nodes) if held is not None else set()

    def tracked(self) -> int:
        with self._lock:
            return len(self._held)

    # -- applying plans -------------------------------------------------------------------------------------------------
    def place(self, key: str) -> None:
        """Make the nodes holding job ``key`` match its plan (a gone job is removed everywhere)."""
        with self._lock:
            job = self.ctx.get_job(key)
            if job is None:
                self._remove(key, None)
                return
            plan = self._plan(job)
            self._route(key, plan)
            held = self._held.get(key)
            if held is not None and held.uid != meta.uid(job):  # deleted and created again under the same name
                self._remove(key, None)
                held = None
            if held is None:
                held = self._held[key] = _Held(meta.uid(job))
            if plan.keep is not None:
                for node in sorted(set(held.nodes) - plan.keep):
                    self.ctx.send_to_edge(node, DELETE, job)
                    del held.nodes[node]
                    self._log.info("job removed from node", key=key, node=node)
            targets = [n for n in sorted(plan.send)
                       if meta.resource_version(held.nodes.get(n)) != meta.resource_version(job)]
            if targets:
                obj = self._prepare(key, job)
                for node in targets:
                    self.ctx.send_to_edge(node, INSERT, obj)
                    held.nodes[node] = job
                self._log.debug("job sent to nodes", key=key, nodes=targets)
            if not held.nodes:
                del self._held[key]

    def delete(self, job: Mapping[str, Any]) -> None:
        """The job is deleted: a ``delete`` to every node that held it or that it names; its routes are dropped."""
        key = f"{meta.namespace(job)}/{meta.name(job)}"
        named = {self.dataset_node(job), *(stage_node(job, s) for s in STAGES)}
        with self._lock:
            self._remove(key, job, named)

    def _remove(self, key: str, job: Mapping[str, Any] | None, named: Iterable[str] = ()) -> None:
        held = self._held.pop(key, None)
        nodes = set(held.nodes if held is not None else ()) | {n for n in named if n}
        if nodes:
            obj = job if job is not None else next(iter(held.nodes.values())) if held is not None and held.nodes else None
            if obj is not None:
                gone = self._marked_deleted(obj)
                for node in sorted(nodes):
                    self.ctx.send_to_edge(node, DELETE, gone)
                self._log.info("job deleted from nodes", key=key, nodes=sorted(nodes))
        if self.router is not None:
            self.router.set_routes(self.owner(key), [])

    def _marked_deleted(self, job: Mapping[str, Any]) -> dict[str, Any]:
        """The job as sent in the ``delete`` of a job that is gone: ``metadata.deletionTimestamp`` set (when the cache
        had none), so that an LC tells it from a ``delete`` that only takes the job off the node."""
        md = job.get("metadata") or {}
        if md.get("deletionTimestamp"):
            return dict(job)
        return {**job, "metadata": {**md, "deletionTimestamp": self.ctx.now()}}

    def _plan(self, job: Obj) -> Plan:
        """The kind's plan for ``job``; a spec the view rejects places it nowhere new and takes it off no node (its
        sync shows ``InvalidSpec`` until the spec is fixed)."""
        try:
            return self.plan(job, self.dataset_node(job))
        except ValueError:
            return Plan()

    def _route(self, key: str, plan: Plan) -> None:
        if self.router is None:
            return
        ns = key.partition("/")[0]
        self.router.set_routes(self.owner(key), [ModelRoute(need.node, ns, need.model) for need in plan.models])

    def _prepare(self, key: str, job: Mapping[str, Any]) -> dict[str, Any]:
        """The job as sent: with ``kind`` and, with ``spec.credentialName``, the ``sedna.io/credential`` annotation
        (without it when the Secret cannot be read, as Go Sedna sends it)."""
        c = self.ctx
        try:
            return edge_copy(job, c.clientset, c.gvk.api_version, c.kind)
        except errors.ApiError as exc:
            self._log.warning("cannot read the job's credential Secret; sending the job without it", key=key,
                              secret=(job.get("spec") or {}).get("credentialName"), error=exc.message)
            return with_kind(job, c.gvk.api_version, c.kind)

    # -- state source ---------------------------------------------------------------------------------------------------
    def state_for(self, node: str) -> list[dict[str, Any]]:
        """The jobs ``node`` should hold, as sent. The edge link asks on every (re)connection of ``node``, never per
        sync: one pass over this kind's cached jobs per connection (which jobs a node holds depends on their Datasets'
        nodes and stage annotations, so no job index answers it)."""
        out: list[dict[str, Any]] = []
        for cached in self.ctx.job_lister.list():
            job = self.ctx.typed(cached)
            key = f"{meta.namespace(job)}/{meta.name(job)}"
            with self._lock:
                held = self._held.get(key)
                copy = held.nodes.get(node) if held is not None and held.uid == meta.uid(job) else None
                if copy is None:
                    plan = self._plan(job)
                    if node not in plan.send and node not in (plan.keep or ()):
                        continue
                    copy = job
                    if held is None or held.uid != meta.uid(job):
                        held = self._held[key] = _Held(meta.uid(job))
                    held.nodes[node] = job
            out.append(self._prepare(key, copy))
        return out
