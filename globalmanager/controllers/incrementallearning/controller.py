"""The IncrementalLearningJob kind (Sedna's ``incrementallearning`` controller): ``learningjob.LearningRules`` with
IL's spec, references, pods and downstream plan.

* The inference pod is created on the first sync (unless the newest one is Pending or Running); with
  ``deploySpec.model.hotUpdateEnabled`` the job is annotated ``sedna.io/model-hot-update-config`` (the host file the
  LC writes). Deploy/Ready without hot update restarts it and completes Deploy; with hot update Deploy goes
  Starting → Running (``sedna.io/Deploy`` = its node) and the worker's report completes it.
* Train and Eval pods come from the LC's Ready condition (``workers.py``).
* References: the Dataset, ``initialModel``, ``deploySpec.model`` and ``evalSpec.initialEvalModel``; the job wakes
  when one of them is added, changed or deleted.
* Edge: ``downstream.plan`` (the job and its Models, stage by stage; the Models through the Model controller, set
  by ``with_model_router``), ``learningjob.upstream.from_edge``.
"""

from __future__ import annotations

from typing import Any

from apis import meta
from apis.meta import Obj
from apis.resources import DATASETS, INCREMENTAL_LEARNING_JOBS, MODELS, PODS
from apis.sedna.constants import MODEL_HOT_UPDATE_ANNOTATION
from apis.sedna.v1alpha1 import ILJobSpec
from apis.sedna.v1alpha1.common import Stage
from globalmanager.controllers.context import ControllerContext, ControllerFactory
from globalmanager.controllers.learningjob.conditions import condition_data
from globalmanager.controllers.learningjob.controller import (
    LearningRules,
    LearningState,
    Resolved,
    annotate,
    dataset_refs,
    newest_pod,
    to_edge,
)
from globalmanager.controllers.learningjob.fsm import Policy
from globalmanager.controllers.learningjob.placement import Plan
from globalmanager.controllers.learningjob.upstream import from_edge
from globalmanager.controllers.learningjob.workers import Secrets
from globalmanager.controllers.model import model_router
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.jobcontroller import JobController
from globalmanager.runtime.kind import Kind
from globalmanager.runtime.references import get_referenced
from globalmanager.runtime.worker import model_hot_update_config_file

from . import downstream, workers

__all__ = ["IL_RULES", "KIND", "NAME", "model_refs", "with_model_router"]

Ctx = KindContext[LearningState]


def model_refs(job: Obj) -> list[str]:
    """The Models a job names (an index function: a spec the view rejects names none until it is fixed)."""
    try:
        return list(downstream.model_names(downstream.il_spec(job)))
    except ValueError:
        return []


def policy(spec: ILJobSpec) -> Policy:
    hot = downstream.hot_update_enabled(spec)
    return Policy(restart_on_deploy_ready=not hot, deploy_running_completes=not hot)


def references(ctx: Ctx, job: Obj, spec: ILJobSpec) -> Resolved:
    ns = meta.namespace(job)
    initial, deploy, initial_eval = downstream.model_names(spec)
    models = ctx.lister(MODELS)
    refs = {
        "dataset": get_referenced(ctx.lister(DATASETS), "Dataset", ns, dataset_refs(job)[0]),
        "initialModel": get_referenced(models, "Model", ns, initial, " (initialModel)"),
        "deployModel": get_referenced(models, "Model", ns, deploy, " (deploySpec.model)"),
    }
    if initial_eval:
        refs["initialEvalModel"] = get_referenced(models, "Model", ns, initial_eval, " (evalSpec.initialEvalModel)")
    if ctx.nodes is not None:
        ctx.nodes.check(job, refs["dataset"])
    return refs


def stage_pod(ctx: Ctx, job: Obj, stage: str, refs: Resolved, secrets: Secrets) -> dict[str, Any]:
    data = condition_data(((job.get("status") or {}).get("conditions") or [{}])[-1])
    build = workers.train_pod if stage == Stage.TRAIN else workers.eval_pod
    return build(job, data, refs, secrets, ctx.lc_server)


def inference_pod(ctx: Ctx, job: Obj, spec: ILJobSpec, refs: Resolved, secrets: Secrets) -> dict[str, Any]:
    return workers.inference_pod(job, spec, refs, secrets, ctx.lc_server)


def inference_created(ctx: Ctx, job: Obj) -> None:
    if downstream.hot_update_enabled(downstream.il_spec(job)):
        annotate(ctx, job, MODEL_HOT_UPDATE_ANNOTATION, model_hot_update_config_file(job))


def plan(ctx: Ctx, job: Obj, dataset_node: str) -> Plan:
    pod = newest_pod(ctx, job, Stage.DEPLOY)
    return downstream.plan(job, dataset_node, str(((pod or {}).get("spec") or {}).get("nodeName") or ""))


IL_RULES = LearningRules(spec=downstream.il_spec, policy=policy, references=references, stage_pod=stage_pod,
                         inference_pod=inference_pod, plan=plan, inference_created=inference_created,
                         inference_at_start=True)

KIND: Kind[LearningState] = Kind(
    name="IncrementalLearning", resource=INCREMENTAL_LEARNING_JOBS, sync=IL_RULES.sync, state=IL_RULES.state,
    owns=(PODS,), references={MODELS: model_refs, DATASETS: dataset_refs}, checks_nodes=True, to_edge=to_edge,
    from_edge=from_edge,
)
NAME = KIND.name


def with_model_router(build: ControllerFactory) -> ControllerFactory:
    """The registry's factory of IL: ``build`` (``kind_factory(KIND)``), its placement routing the jobs' Models
    through the context's one Model controller (``model_router``) when there is an edge link."""

    def factory(ctx: ControllerContext) -> JobController[LearningState]:
        controller = build(ctx)
        if not isinstance(controller, JobController):
            raise TypeError(f"{NAME}: the factory built a {type(controller).__name__}, not a JobController")
        if ctx.edge is not None:
            controller.ctx.state.placement.router = model_router(ctx)
        return controller

    return factory
