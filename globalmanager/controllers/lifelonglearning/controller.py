"""The LifelongLearningJob kind (Sedna's ``lifelonglearning`` controller): ``learningjob.LearningRules`` with LL's
spec, references, pods and downstream plan.

* No inference pod at start: Deploy/Ready restarts (or creates) it and completes Deploy; no hot update.
* Train and Eval pods come from the LC's Ready condition (``workers.py``); workers get ``KB_SERVER``
  (``knowledgeBaseServer.server``).
* References: the Dataset (the job wakes when it is added, changed or deleted).
* Edge: ``downstream.plan`` (no Models), ``upstream.from_edge`` (conditions and ``status.knowledgeBase``).
"""

from __future__ import annotations

from typing import Any

from apis import meta
from apis.meta import Obj
from apis.resources import DATASETS, LIFELONG_LEARNING_JOBS, PODS
from apis.sedna.v1alpha1 import LLJobSpec
from apis.sedna.v1alpha1.common import Stage
from apis.typed import spec_of
from globalmanager.controllers.learningjob.controller import (
    LearningRules,
    LearningState,
    Resolved,
    dataset_refs,
    to_edge,
)
from globalmanager.controllers.learningjob.fsm import Policy
from globalmanager.controllers.learningjob.placement import Plan
from globalmanager.controllers.learningjob.workers import Secrets
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.kind import Kind
from globalmanager.runtime.references import get_referenced

from . import downstream, upstream, workers

__all__ = ["KIND", "LL_RULES", "NAME"]

Ctx = KindContext[LearningState]

_POLICY = Policy(restart_on_deploy_ready=True, deploy_running_completes=False)


def ll_spec(job: Obj) -> LLJobSpec:
    """The typed spec; ``ValueError`` naming the field for a spec the view rejects."""
    spec = spec_of(LLJobSpec, job)
    if spec is None:
        raise ValueError("spec is required")
    return spec


def policy(spec: LLJobSpec) -> Policy:
    return _POLICY


def references(ctx: Ctx, job: Obj, spec: LLJobSpec) -> Resolved:
    refs = {"dataset": get_referenced(ctx.lister(DATASETS), "Dataset", meta.namespace(job), dataset_refs(job)[0])}
    if ctx.nodes is not None:
        ctx.nodes.check(job, refs["dataset"])
    return refs


def stage_pod(ctx: Ctx, job: Obj, stage: str, refs: Resolved, secrets: Secrets) -> dict[str, Any]:
    build = workers.train_pod if stage == Stage.TRAIN else workers.eval_pod
    return build(job, refs, secrets, ctx.lc_server, ctx.kb_server)


def inference_pod(ctx: Ctx, job: Obj, spec: LLJobSpec, refs: Resolved, secrets: Secrets) -> dict[str, Any]:
    return workers.inference_pod(job, spec, secrets, ctx.lc_server)


def plan(ctx: Ctx, job: Obj, dataset_node: str) -> Plan:
    return downstream.plan(job, dataset_node)


LL_RULES = LearningRules(spec=ll_spec, policy=policy, references=references, stage_pod=stage_pod,
                         inference_pod=inference_pod, plan=plan)

KIND: Kind[LearningState] = Kind(
    name="LifelongLearning", resource=LIFELONG_LEARNING_JOBS, sync=LL_RULES.sync, state=LL_RULES.state,
    owns=(PODS,), references={DATASETS: dataset_refs}, checks_nodes=True, to_edge=to_edge,
    from_edge=upstream.from_edge,
)
NAME = KIND.name
