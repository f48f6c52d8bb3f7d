"""The VideoAnalyticsJob kind (Sedna's ``videoanalytics`` controller): Reid's one-pod rules (``OnePodJob``: phases
and conditions, ``backoffLimit``/``activeDeadlineSeconds``, self-healing, edge reports as conditions) plus the job's
detection Model (``spec.model.name``, watched: a job waiting for its Model is synced again when it appears), mounted
in the pod (``workers.py``), and the Service ``<job>-videoanalytics`` (port 4000), created with the pod and again if
deleted while the job runs. A change of the Model's spec replaces a running pod."""

from __future__ import annotations

from typing import Any

from apis import meta
from apis.meta import Obj
from apis.resources import MODELS, PODS, SERVICES, VIDEO_ANALYTICS_JOBS
from apis.sedna.v1alpha1 import ReidJobSpec, VideoAnalyticsJobSpec
from apis.typed import spec_of
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.kind import Kind
from globalmanager.runtime.references import get_credential, get_referenced
from globalmanager.runtime.reports import report_condition
from globalmanager.runtime.services import check_model_worker_spec, edge_mesh_service_name, ensure_service

from ..reid.controller import OnePodJob
from ..reid.workers import worker_pod
from .workers import VA_PORT, VA_WORKER, worker_param

__all__ = ["KIND", "NAME"]

Ctx = KindContext[None]


def model_refs(job: Obj) -> list[str]:
    return [str(((job.get("spec") or {}).get("model") or {}).get("name") or "")]


def va_spec(job: Obj) -> VideoAnalyticsJobSpec:
    return check_model_worker_spec(job, spec_of(VideoAnalyticsJobSpec, job), VA_WORKER)


def resolve_model(ctx: Ctx, job: Obj) -> Obj:
    """The job's Model (from the informer cache)."""
    return get_referenced(ctx.lister(MODELS), "Model", meta.namespace(job), model_refs(job)[0])


def pod_source(ctx: Ctx, job: Obj, spec: ReidJobSpec, model: Obj | None) -> dict[str, Any]:
    return {"template": spec.template, "kafkaSupport": bool(spec.kafka_support),
            "lcServer": ctx.lc_server, "model": (model or {}).get("spec")}


def build_pod(ctx: Ctx, job: Obj, model: Obj | None, source: dict[str, Any]) -> dict[str, Any]:
    model = model or {}
    credential = str((model.get("spec") or {}).get("credentialName") or "")
    secret = get_credential(ctx.clientset, meta.namespace(job), credential, f"model {meta.name(model)}")
    return worker_pod(job, worker_param(job, model, secret, ctx.lc_server), source)


def ensure_va_service(ctx: Ctx, job: Obj) -> None:
    missing = ctx.get_cached(SERVICES, meta.namespace(job), edge_mesh_service_name(job, VA_WORKER)) is None
    if missing and not ctx.job_is_live(job):
        return  # deleted meanwhile: its Service is gone with it
    ensure_service(ctx, job, VA_WORKER, VA_PORT)


VIDEO_ANALYTICS = OnePodJob(worker_type=VA_WORKER, spec=va_spec, resolve=resolve_model, source=pod_source,
                            build=build_pod, companions=ensure_va_service)

KIND: Kind[None] = Kind(name="VideoAnalytics", resource=VIDEO_ANALYTICS_JOBS, sync=VIDEO_ANALYTICS.sync,
                        owns=(PODS, SERVICES), references={MODELS: model_refs}, from_edge=report_condition)
NAME = KIND.name
