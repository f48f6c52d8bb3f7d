"""The JointInferenceService controller (Sedna's ``jointinference`` controller, with its quirks fixed).

Per service: the cloud worker's Deployment, its Service ``<service>-cloud`` (port 5000), the edge worker's Deployment
(``workers.py`` has the exact env contract), and an HPA ``hpa-<deployment>`` per worker whose spec has ``hpa``. Every
object is controller-owned by the service (deleting the service deletes them).

* Level-triggered: each sync makes the objects match the spec. A worker whose part of the spec (or Model) changed has
  its Deployment updated in place and its HPA created, updated or deleted (recorded as a spec hash on the objects).
* Self-healing: a Deployment deleted from under a live service is recreated by ``delete_deployment`` at most once per
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

from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.resources import DEPLOYMENTS, HORIZONTAL_POD_AUTOSCALERS, JOINT_INFERENCE_SERVICES, MODELS, SERVICES
from globalmanager.runtime.autoscaling import ensure_hpa
from globalmanager.runtime.deployments import deployment_name, ensure_deployment
from globalmanager.runtime.references import get_credential, get_referenced
from globalmanager.runtime.reports import owner_info_metrics
from globalmanager.runtime.servicekind import ServiceKindController
from globalmanager.runtime.services import edge_mesh_service_name, ensure_service, service_name_error

from . import downstream
from .workers import BIG_MODEL_PORT, CLOUD, EDGE, WORKER_SPEC, build_worker_deployment

__all__ = ["JointInferenceController", "NAME", "new_controller"]


def model_refs(service: Mapping[str, Any]) -> list[str]:
    """The Models a service uses (indexed, so that a Model's events wake exactly these services)."""
    spec = service.get("spec") or {}
    return [str(((spec.get(field) or {}).get("model") or {}).get("name") or "") for field in WORKER_SPEC.values()]


class JointInferenceController(ServiceKindController):
    NAME = "JointInference"
    JOB_RESOURCE = JOINT_INFERENCE_SERVICES
    OWNS = (DEPLOYMENTS, SERVICES, HORIZONTAL_POD_AUTOSCALERS)
    RECREATES = (DEPLOYMENTS,)
    REFERENCES = {MODELS: model_refs}
    CHECKS_NODES = True
    sync_to_edge = downstream.sync_to_edge
    update_from_edge = owner_info_metrics

    def needed_workers(self, service: Mapping[str, Any]) -> int:
        return len(WORKER_SPEC)

    def spec_problem(self, service: Mapping[str, Any]) -> str:
        spec = service.get("spec") or {}
        for field in WORKER_SPEC.values():
            worker = spec.get(field) or {}
            if not isinstance(worker.get("template"), Mapping) or not (worker.get("model") or {}).get("name"):
                return f"spec.{field}: a template and model.name are required"
        return service_name_error(service, CLOUD)

    def _model(self, service: Mapping[str, Any], worker_type: str) -> dict[str, Any]:
        name = model_refs(service)[list(WORKER_SPEC).index(worker_type)]
        return get_referenced(self.reference_listers[MODELS], "Model", meta.namespace(service), name, f" of the {worker_type.lower()} worker")

    def create_workers(self, service: Mapping[str, Any], workers: dict[str, Mapping[str, Any]]) -> None:
        """Sedna's ``createWorkers``, level-triggered: create the missing workers, cloud Service and HPAs and bring
        existing ones up to date with the spec; ``workers`` (Deployments by name) gets those created or updated."""
        ns = meta.namespace(service)
        self.nodes.check(service)
        missing = any(self.get_cached(DEPLOYMENTS, ns, deployment_name(service, w)) is None for w in WORKER_SPEC)
        missing = missing or self.get_cached(SERVICES, ns, edge_mesh_service_name(service, CLOUD)) is None
        if missing and not self.job_is_live(service):
            return  # deleted meanwhile: never create workers for a service that is gone
        for worker_type in (CLOUD, EDGE):
            deployment = self._ensure_worker(service, worker_type)
            if deployment is not None:
                workers[meta.name(deployment)] = deployment
            if worker_type == CLOUD:
                ensure_service(self, service, CLOUD, BIG_MODEL_PORT)

    def _ensure_worker(self, service: Mapping[str, Any], worker_type: str) -> Mapping[str, Any] | None:
        worker = (service.get("spec") or {}).get(WORKER_SPEC[worker_type]) or {}
        model = self._model(service, worker_type)
        # what the Deployment is built from (its HPA is not: changing only the HPA never restarts the worker)
        source = {"worker": {k: v for k, v in worker.items() if k != "hpa"}, "model": model.get("spec"),
                  "lcServer": self.lc_server}

        def build() -> dict[str, Any]:
            credential = str((model.get("spec") or {}).get("credentialName") or "")
            secret = get_credential(self.clientset, meta.namespace(service), credential, f"model {meta.name(model)}")
            return build_worker_deployment(service, worker_type, model, secret, self.lc_server)

        name = deployment_name(service, worker_type)
        started = bool((service.get("status") or {}).get("startTime"))  # a creation after the start is a recreation
        deployment = ensure_deployment(self, service, name, source, build, f"{worker_type.lower()} deployment", started)
        ensure_hpa(self, service, name, worker_type, worker.get("hpa"))
        return deployment


NAME = JointInferenceController.NAME
new_controller = JointInferenceController.from_context
