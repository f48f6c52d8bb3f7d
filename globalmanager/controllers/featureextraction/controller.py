"""The FeatureExtractionService kind (Sedna's ``featureextraction`` controller, its bugs fixed): ``KIND``, its rules a
``ServiceRules`` (``runtime.servicekind``).

Per service, controller-owned by it (deleting the service deletes them): the worker Deployment
``<service>-deployment-fe`` built from the service's DeploymentSpec (``workers.py`` has the exact contract) and its
edge-mesh Service ``<service>-fe`` (port 6000).

* Status (``runtime.servicekind``): ``Pending`` while the Deployment progresses, ``Running`` once it is available,
  ``Failed`` when it failed or cannot be built (``InvalidSpec``, ``ModelNotFound`` — synced again when the Model
  appears —, ``SecretNotFound``, ``FailedCreate``); re-evaluated every sync. Go Sedna expected 3 Deployments (the
  number of fields of the spec type), so every service was ``Failed`` after its first sync; it dereferenced a nil
  ``replicas`` and mounted an empty first volume. Here: one Deployment, ``replicas`` optional (the API server
  defaults it), one mount.
* Spec changes: the Deployment is updated in place — its template when the template, ``kafkaSupport`` or the Model
  changed, its ``replicas`` alone (no rollout) when only they changed.
* Self-healing: a Deployment deleted from under a live service is recreated at most once per 5 s, never after the
  service is gone; a deleted Service is created again by ``sync``.
* Edge: nothing is sent down (as in Go Sedna); reports become ``status.metrics``
  (``runtime.reports.owner_info_metrics``). Sedna's feature-extraction SDK component sends none today and no LC relays
  one yet; one that arrives is shown, not dropped.
"""

from __future__ import annotations

from typing import Any

from apis import meta
from apis.meta import Obj
from apis.resources import DEPLOYMENTS, FEATURE_EXTRACTION_SERVICES, MODELS, SERVICES
from apis.sedna.v1alpha1 import FeatureExtractionServiceSpec
from apis.typed import spec_of
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.deployments import deployment_name, ensure_deployment, scale_deployment
from globalmanager.runtime.kind import Kind
from globalmanager.runtime.references import get_credential, get_referenced
from globalmanager.runtime.reports import owner_info_metrics
from globalmanager.runtime.servicekind import ServiceRules, has_started
from globalmanager.runtime.services import check_model_worker_spec, edge_mesh_service_name, ensure_service

from .workers import FE_PORT, FE_WORKER, build_deployment

__all__ = ["KIND", "NAME", "create_workers", "model_refs"]

Ctx = KindContext[None]


def model_refs(service: Obj) -> list[str]:
    """The service's Model (indexed, so that its events wake exactly these services); none for a spec the typed view
    rejects (such a service fails ``InvalidSpec`` whatever its Model)."""
    try:
        spec = spec_of(FeatureExtractionServiceSpec, service)
    except ValueError:
        return []
    return [spec.model.name] if spec is not None and spec.model is not None and spec.model.name else []


def fe_spec(service: Obj) -> FeatureExtractionServiceSpec:
    """The typed spec; ``ValueError`` naming the field when the template or Model is missing, or the name cannot
    name the Service."""
    return check_model_worker_spec(service, spec_of(FeatureExtractionServiceSpec, service), FE_WORKER)


def create_workers(ctx: Ctx, service: Obj, spec: FeatureExtractionServiceSpec, deployments: dict[str, Obj]) -> None:
    """The Deployment (created, its template updated when its source changed, scaled alone when only ``replicas``
    did) and its Service."""
    ns = meta.namespace(service)
    name = deployment_name(service, FE_WORKER)
    missing = ctx.get_cached(DEPLOYMENTS, ns, name) is None
    if (missing or ctx.get_cached(SERVICES, ns, edge_mesh_service_name(service, FE_WORKER)) is None) \
            and not ctx.job_is_live(service):
        return  # deleted meanwhile: never create workers for a service that is gone
    assert spec.model is not None  # fe_spec checked it
    model = get_referenced(ctx.lister(MODELS), "Model", ns, spec.model.name or "")
    # what the template is built from; replicas are not (scaling never restarts the workers)
    source = {"template": spec.template, "kafkaSupport": bool(spec.kafka_support), "model": model.get("spec"),
              "lcServer": ctx.lc_server}

    def build() -> dict[str, Any]:
        credential = str((model.get("spec") or {}).get("credentialName") or "")
        secret = get_credential(ctx.clientset, ns, credential, f"model {meta.name(model)}")
        return build_deployment(service, spec, model, secret, ctx.lc_server)

    started = has_started(service)
    deployment = ensure_deployment(ctx, service, name, source, build, "fe deployment", started)
    if deployment is not None:
        deployments[name] = scale_deployment(ctx, service, deployment, spec.replicas, "fe deployment")
    ensure_service(ctx, service, FE_WORKER, FE_PORT)


RULES: ServiceRules[FeatureExtractionServiceSpec] = ServiceRules(
    spec=fe_spec, needed_workers=lambda spec: 1, fixed_workers=1, create_workers=create_workers,
)

KIND: Kind[None] = Kind(
    name="FeatureExtraction", resource=FEATURE_EXTRACTION_SERVICES, sync=RULES.sync, owns=(DEPLOYMENTS, SERVICES),
    recreates=(DEPLOYMENTS,), references={MODELS: model_refs}, from_edge=owner_info_metrics,
    ignores_own_status_writes=True,  # the status is derived from the spec and the workers: a second pass finds it so
)
NAME = KIND.name
