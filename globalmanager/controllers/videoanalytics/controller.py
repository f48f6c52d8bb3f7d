"""The VideoAnalyticsJob controller (Sedna's ``videoanalytics`` controller): ``ReidController`` (one worker pod,
phases and conditions, ``backoffLimit``/``activeDeadlineSeconds``, self-healing, edge reports as conditions) plus the
job's detection Model (``spec.model.name``, watched: a job waiting for its Model is synced again when it appears),
mounted in the pod (``workers.py``), and the Service ``<job>-videoanalytics`` (port 4000), created with the pod and
again if deleted while the job runs. A change of the Model's spec replaces a running pod."""

from __future__ import annotations

from typing import Any

from apis import meta
from apis.meta import Obj
from apis.resources import MODELS, PODS, SERVICES, VIDEO_ANALYTICS_JOBS
from globalmanager.runtime.references import get_credential, get_referenced
from globalmanager.runtime.services import edge_mesh_service_name, ensure_service, service_name_error

from ..reid.controller import ReidController
from ..reid.workers import worker_pod
from .workers import VA_PORT, VA_WORKER, worker_param

__all__ = ["NAME", "VideoAnalyticsController", "new_controller"]


def model_refs(job: Obj) -> list[str]:
    return [str(((job.get("spec") or {}).get("model") or {}).get("name") or "")]


class VideoAnalyticsController(ReidController):
    NAME = "VideoAnalytics"
    JOB_RESOURCE = VIDEO_ANALYTICS_JOBS
    OWNS = (PODS, SERVICES)
    REFERENCES = {MODELS: model_refs}
    WORKER_TYPE = VA_WORKER

    def spec_problem(self, job: Obj) -> str:
        problem = super().spec_problem(job)
        if problem:
            return problem
        if not model_refs(job)[0]:
            return "spec.model.name is required"
        return service_name_error(job, VA_WORKER)

    def resolve(self, job: Obj) -> Obj:
        """The job's Model (from the informer cache)."""
        return get_referenced(self.reference_listers[MODELS], "Model", meta.namespace(job), model_refs(job)[0])

    def pod_source(self, job: Obj, refs: Any) -> dict[str, Any]:
        return {**super().pod_source(job, refs), "model": refs.get("spec")}

    def build_pod(self, job: Obj, refs: Any, source: Any) -> dict[str, Any]:
        credential = str((refs.get("spec") or {}).get("credentialName") or "")
        secret = get_credential(self.clientset, meta.namespace(job), credential, f"model {meta.name(refs)}")
        return worker_pod(job, worker_param(job, refs, secret, self.lc_server), source)

    def ensure_companions(self, job: Obj) -> None:
        missing = self.get_cached(SERVICES, meta.namespace(job), edge_mesh_service_name(job, VA_WORKER)) is None
        if missing and not self.job_is_live(job):
            return  # deleted meanwhile: its Service is gone with it
        ensure_service(self, job, VA_WORKER, VA_PORT)


NAME = VideoAnalyticsController.NAME
new_controller = VideoAnalyticsController.from_context
