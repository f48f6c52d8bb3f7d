"""The FeatureExtractionService controller (Sedna's ``featureextraction`` controller, its bugs fixed).

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

from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.resources import DEPLOYMENTS, FEATURE_EXTRACTION_SERVICES, MODELS, SERVICES
from globalmanager.runtime.deployments import deployment_name, ensure_deployment, scale_deployment
from globalmanager.runtime.references import get_credential, get_referenced
from globalmanager.runtime.reports import owner_info_metrics
from globalmanager.runtime.servicekind import ServiceKindController
from globalmanager.runtime.services import edge_mesh_service_name, ensure_service, service_name_error

from .workers import FE_PORT, FE_WORKER, build_deployment

__all__ = ["FeatureExtractionController", "NAME", "new_controller"]


def model_refs(service: Mapping[str, Any]) -> list[str]:
    return [str(((service.get("spec") or {}).get("model") or {}).get("name") or "")]


class FeatureExtractionController(ServiceKindController):
    NAME = "FeatureExtraction"
    JOB_RESOURCE = FEATURE_EXTRACTION_SERVICES
    OWNS = (DEPLOYMENTS, SERVICES)
    RECREATES = (DEPLOYMENTS,)
    REFERENCES = {MODELS: model_refs}
    update_from_edge = owner_info_metrics

    def needed_workers(self, service: Mapping[str, Any]) -> int:
        return 1

    def spec_problem(self, service: Mapping[str, Any]) -> str:
        spec = service.get("spec") or {}
        if not isinstance(spec.get("template"), Mapping):
            return "spec.template is required"
        if not model_refs(service)[0]:
            return "spec.model.name is required"
        return service_name_error(service, FE_WORKER)

    def create_workers(self, service: Mapping[str, Any], deployments: dict[str, Mapping[str, Any]]) -> None:
        ns, spec = meta.namespace(service), service.get("spec") or {}
        name = deployment_name(service, FE_WORKER)
        missing = self.get_cached(DEPLOYMENTS, ns, name) is None
        if (missing or self.get_cached(SERVICES, ns, edge_mesh_service_name(service, FE_WORKER)) is None) \
                and not self.job_is_live(service):
            return  # deleted meanwhile: never create workers for a service that is gone
        model = get_referenced(self.reference_listers[MODELS], "Model", ns, model_refs(service)[0])
        # what the template is built from; replicas are not (scaling never restarts the workers)
        source = {"template": spec.get("template"), "kafkaSupport": bool(spec.get("kafkaSupport")),
                  "model": model.get("spec"), "lcServer": self.lc_server}

        def build() -> dict[str, Any]:
            credential = str((model.get("spec") or {}).get("credentialName") or "")
            secret = get_credential(self.clientset, ns, credential, f"model {meta.name(model)}")
            return build_deployment(service, model, secret, self.lc_server)

        started = bool((service.get("status") or {}).get("startTime"))  # a creation after the start is a recreation
        deployment = ensure_deployment(self, service, name, source, build, "fe deployment", started)
        if deployment is not None:
            deployment = scale_deployment(self, service, deployment, spec.get("replicas"), "fe deployment")
            deployments[meta.name(deployment)] = deployment
        ensure_service(self, service, FE_WORKER, FE_PORT)


NAME = FeatureExtractionController.NAME
new_controller = FeatureExtractionController.from_context
