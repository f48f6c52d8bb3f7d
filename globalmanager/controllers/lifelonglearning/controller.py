"""The LifelongLearningJob controller (Sedna's ``lifelonglearning`` controller) on ``LearningJobController``.

* No inference pod at start: Deploy/Ready restarts (or creates) it and completes Deploy; no hot update.
* Train and Eval pods come from the LC's Ready condition (``workers.py``); workers get ``KB_SERVER``
  (``knowledgeBaseServer.server``).
* References: the Dataset (the job wakes when it is added, changed or deleted).
* Edge: ``downstream.plan`` (no Models), ``upstream.update_from_edge`` (conditions and ``status.knowledgeBase``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.resources import DATASETS, LIFELONG_LEARNING_JOBS
from apis.sedna.constants import TRAIN
from globalmanager.controllers.learningjob.controller import LearningJobController, dataset_refs
from globalmanager.controllers.learningjob.fsm import Policy
from globalmanager.controllers.learningjob.placement import Plan
from globalmanager.controllers.learningjob.workers import Secrets
from globalmanager.runtime.references import get_referenced

from . import downstream, upstream, workers

__all__ = ["LifelongLearningController", "NAME", "new_controller"]

_POLICY = Policy(restart_on_deploy_ready=True, deploy_running_completes=False)


class LifelongLearningController(LearningJobController):
    NAME = "LifelongLearning"
    JOB_RESOURCE = LIFELONG_LEARNING_JOBS
    CHECKS_NODES = True
    REFERENCES = {DATASETS: dataset_refs}
    update_from_edge = upstream.update_from_edge

    def policy(self, job: Mapping[str, Any]) -> Policy:
        return _POLICY

    def references(self, job: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        ns = meta.namespace(job)
        refs = {"dataset": get_referenced(self.reference_listers[DATASETS], "Dataset", ns, dataset_refs(job)[0])}
        self.nodes.check(job, refs["dataset"])
        return refs

    def stage_pod(self, job: Mapping[str, Any], stage: str, refs: dict[str, dict[str, Any]],
                  secrets: Secrets) -> dict[str, Any]:
        build = workers.train_pod if stage == TRAIN else workers.eval_pod
        return build(job, refs, secrets, self.lc_server, self.kb_server)

    def inference_pod(self, job: Mapping[str, Any], refs: dict[str, dict[str, Any]],
                      secrets: Secrets) -> dict[str, Any]:
        return workers.inference_pod(job, secrets, self.lc_server)

    def plan(self, job: Mapping[str, Any], dataset_node: str) -> Plan:
        return downstream.plan(job, dataset_node)


NAME = LifelongLearningController.NAME
new_controller = LifelongLearningController.from_context
