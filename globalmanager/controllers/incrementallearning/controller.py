"""The IncrementalLearningJob controller (Sedna's ``incrementallearning`` controller) on ``LearningJobController``.

* The inference pod is created on the first sync (unless the newest one is Pending or Running); with
  ``deploySpec.model.hotUpdateEnabled`` the job is annotated ``sedna.io/model-hot-update-config`` (the host file the
  LC writes). Deploy/Ready without hot update restarts it and completes Deploy; with hot update Deploy goes
  Starting → Running (``sedna.io/Deploy`` = its node) and the worker's report completes it.
* Train and Eval pods come from the LC's Ready condition (``workers.py``).
* References: the Dataset, ``initialModel``, ``deploySpec.model`` and ``evalSpec.initialEvalModel``; the job wakes
  when one of them is added, changed or deleted.
* Edge: ``downstream.plan`` (the job and its Models, stage by stage), ``learningjob.upstream.apply_report``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.resources import DATASETS, INCREMENTAL_LEARNING_JOBS, MODELS
from apis.sedna.constants import DEPLOY, MODEL_HOT_UPDATE_ANNOTATION, TRAIN
from globalmanager.controllers.learningjob.conditions import condition_data
from globalmanager.controllers.learningjob.controller import LearningJobController, dataset_refs
from globalmanager.controllers.learningjob.fsm import Policy
from globalmanager.controllers.learningjob.placement import Plan
from globalmanager.controllers.learningjob.upstream import apply_report
from globalmanager.controllers.learningjob.workers import Secrets
from globalmanager.runtime.references import get_referenced
from globalmanager.runtime.worker import model_hot_update_config_file

from . import downstream, workers

__all__ = ["IncrementalLearningController", "NAME", "model_refs", "new_controller"]


def model_refs(job: Mapping[str, Any]) -> list[str]:
    return list(downstream.model_names(job))


class IncrementalLearningController(LearningJobController):
    NAME = "IncrementalLearning"
    JOB_RESOURCE = INCREMENTAL_LEARNING_JOBS
    CHECKS_NODES = True
    REFERENCES = {MODELS: model_refs, DATASETS: dataset_refs}
    USES_MODELS = True
    INFERENCE_AT_START = True
    update_from_edge = apply_report

    def policy(self, job: Mapping[str, Any]) -> Policy:
        hot = downstream.hot_update_enabled(job)
        return Policy(restart_on_deploy_ready=not hot, deploy_running_completes=not hot)

    def references(self, job: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        ns = meta.namespace(job)
        initial, deploy, initial_eval = downstream.model_names(job)
        models = self.reference_listers[MODELS]
        refs = {
            "dataset": get_referenced(self.reference_listers[DATASETS], "Dataset", ns, dataset_refs(job)[0]),
            "initialModel": get_referenced(models, "Model", ns, initial, " (initialModel)"),
            "deployModel": get_referenced(models, "Model", ns, deploy, " (deploySpec.model)"),
        }
        if initial_eval:
            refs["initialEvalModel"] = get_referenced(models, "Model", ns, initial_eval, " (evalSpec.initialEvalModel)")
        self.nodes.check(job, refs["dataset"])
        return refs

    def stage_pod(self, job: Mapping[str, Any], stage: str, refs: dict[str, dict[str, Any]],
                  secrets: Secrets) -> dict[str, Any]:
        data = condition_data(((job.get("status") or {}).get("conditions") or [{}])[-1])
        build = workers.train_pod if stage == TRAIN else workers.eval_pod
        return build(job, data, refs, secrets, self.lc_server)

    def inference_pod(self, job: Mapping[str, Any], refs: dict[str, dict[str, Any]],
                      secrets: Secrets) -> dict[str, Any]:
        return workers.inference_pod(job, refs, secrets, self.lc_server)

    def inference_created(self, job: Mapping[str, Any]) -> None:
        if downstream.hot_update_enabled(job):
            self.annotate(job, MODEL_HOT_UPDATE_ANNOTATION, model_hot_update_config_file(job))

    def plan(self, job: Mapping[str, Any], dataset_node: str) -> Plan:
        pod = self.newest_pod(job, DEPLOY)
        return downstream.plan(job, dataset_node, str(((pod or {}).get("spec") or {}).get("nodeName") or ""))


NAME = IncrementalLearningController.NAME
new_controller = IncrementalLearningController.from_context
