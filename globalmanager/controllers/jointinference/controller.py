"""The JointInferenceService kind (Sedna's ``jointinference`` controller, with its quirks fixed): ``KIND``, its rules
a ``ServiceRules`` (``runtime.servicekind``).

Per service: the cloud worker's Deployment, its Service ``<service>-cloud`` (port 5000), the edge worker's Deployment
(``workers.py`` has the exact env contract), and an HPA ``hpa-<deployment>`` per worker whose spec has ``hpa``. Every
object is controller-owned by the service (deleting the service deletes them).

* Level-triggered: each sync makes the objects match the spec. A worker whose part of the spec (or Model) changed has
  its Deployment updated in place and its HPA created, updated or deleted (recorded as a spec hash on the objects).
* Self-healing: a Deployment deleted from under a live service is recreated by the delete handler at most once per
  5 s, never after the service is gone (asked from the API server); ``sync`` creates a missing one under the same
  rule. A deleted cloud Service is created again by ``sync``.
* Models are read from the Model informer; a missing Model gives condition ``Failed`` (reason ``ModelNotFound``) and
  the service is synced again as soon as that Model appears (jobs are indexed by the Models they reference).
* Status (``servicestatus``): ``Pending`` while the Deployments progress, ``Running`` once all are available,
  ``Failed`` on a failed Deployment or a failure to build the workers; re-evaluated every sync (a Failed service
  recovers). ``active``, ``failed``, ``startTime``; ``status.metrics`` comes from the edge
  (``runtime.reports.owner_info_metrics``).
"""

from __future__ import annotations

from typing import Any

from apis import meta
from apis.meta import Obj
from apis.resources import DEPLOYMENTS, HORIZONTAL_POD_AUTOSCALERS, JOINT_INFERENCE_SERVICES, MODELS, SERVICES
from apis.sedna.v1alpha1 import JointInferenceServiceSpec
from apis.typed import spec_of
from globalmanager.runtime.autoscaling import ensure_hpa
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.deployments import deployment_name, ensure_deployment
from globalmanager.runtime.kind import Kind
from globalmanager.runtime.references import get_credential, get_referenced
from globalmanager.runtime.reports import owner_info_metrics
from globalmanager.runtime.servicekind import ServiceRules, has_started
from globalmanager.runtime.services import edge_mesh_service_name, ensure_service, service_name_error

from .downstream import to_edge
from .workers import BIG_MODEL_PORT, CLOUD, EDGE, WORKER_SPEC, build_worker_deployment, worker_of

__all__ = ["KIND", "NAME", "create_workers", "model_refs"]

Ctx = KindContext[None]


def model_refs(service: Obj) -> list[str]:
    """The Models a service uses (indexed, so that a Model's events wake exactly these services); none for a spec
    the typed view rejects (such a service fails ``InvalidSpec`` whatever its Models)."""
    try:
        spec = spec_of(JointInferenceServiceSpec, service) or JointInferenceServiceSpec()
    except ValueError:
        return []
    workers = (worker_of(spec, worker_type) for worker_type in WORKER_SPEC)
    return [w.model.name for w in workers if w is not None and w.model is not None and w.model.name]


def ji_spec(service: Obj) -> JointInferenceServiceSpec:
    """The typed spec; ``ValueError`` naming the field when a worker lacks its template or Model, or the name cannot
    name the cloud Service."""
    spec = spec_of(JointInferenceServiceSpec, service) or JointInferenceServiceSpec()
    for worker_type, field in WORKER_SPEC.items():
        worker = worker_of(spec, worker_type)
        if worker is None or worker.template is None or worker.model is None or not worker.model.name:
            raise ValueError(f"spec.{field}: a template and model.name are required")
    problem = service_name_error(service, CLOUD)
    if problem:
        raise ValueError(problem)
    return spec


def create_workers(ctx: Ctx, service: Obj, spec: JointInferenceServiceSpec, workers: dict[str, Obj]) -> None:
    """Sedna's ``createWorkers``, level-triggered: create the missing workers, cloud Service and HPAs and bring
    existing ones up to date with the spec; ``workers`` (Deployments by name) gets those created or updated."""
    ns = meta.namespace(service)
    if ctx.nodes is not None:
        ctx.nodes.check(service)
    missing = any(ctx.get_cached(DEPLOYMENTS, ns, deployment_name(service, w)) is None for w in WORKER_SPEC)
    missing = missing or ctx.get_cached(SERVICES, ns, edge_mesh_service_name(service, CLOUD)) is None
    if missing and not ctx.job_is_live(service):
        return  # deleted meanwhile: never create workers for a service that is gone
    for worker_type in (CLOUD, EDGE):
        deployment = _ensure_worker(ctx, service, spec, worker_type)
        if deployment is not None:
            workers[meta.name(deployment)] = deployment
        if worker_type == CLOUD:
            ensure_service(ctx, service, CLOUD, BIG_MODEL_PORT)


def _ensure_worker(ctx: Ctx, service: Obj, spec: JointInferenceServiceSpec, worker_type: str) -> Obj | None:
    worker = worker_of(spec, worker_type)
    assert worker is not None and worker.model is not None  # ji_spec checked them
    model = get_referenced(ctx.lister(MODELS), "Model", meta.namespace(service), worker.model.name or "",
                           f" of the {worker_type.lower()} worker")
    # what the Deployment is built from (its HPA is not: changing only the HPA never restarts the worker); the
    # worker's part of the object as served, so that the hash stays that of earlier versions
    served = (service.get("spec") or {}).get(WORKER_SPEC[worker_type]) or {}
    source = {"worker": {k: v for k, v in served.items() if k != "hpa"}, "model": model.get("spec"),
              "lcServer": ctx.lc_server}

    def build() -> dict[str, Any]:
        credential = str((model.get("spec") or {}).get("credentialName") or "")
        secret = get_credential(ctx.clientset, meta.namespace(service), credential, f"model {meta.name(model)}")
        return build_worker_deployment(service, spec, worker_type, model, secret, ctx.lc_server)

    name = deployment_name(service, worker_type)
    started = has_started(service)
    deployment = ensure_deployment(ctx, service, name, source, build, f"{worker_type.lower()} deployment", started)
    ensure_hpa(ctx, service, name, worker_type, served.get("hpa"))
    return deployment


RULES: ServiceRules[JointInferenceServiceSpec] = ServiceRules(
    spec=ji_spec, needed_workers=lambda spec: len(WORKER_SPEC), fixed_workers=len(WORKER_SPEC),
    create_workers=create_workers,
)

KIND: Kind[None] = Kind(
    name="JointInference", resource=JOINT_INFERENCE_SERVICES, sync=RULES.sync,
    owns=(DEPLOYMENTS, SERVICES, HORIZONTAL_POD_AUTOSCALERS), recreates=(DEPLOYMENTS,), references={MODELS: model_refs},
    checks_nodes=True, to_edge=to_edge, from_edge=owner_info_metrics,
    ignores_own_status_writes=True,  # the status is derived from the spec and the workers: a second pass finds it so
)
NAME = KIND.name
