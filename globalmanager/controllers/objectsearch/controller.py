"""The ObjectSearchService controller (Sedna's ``objectsearch`` controller, level-triggered and self-healing).

Per service, all controller-owned by it (deleting the service deletes them all — Sedna #444 left the tracking pods
behind): the ReID Deployment and Service, the user worker Deployment and Service, one tracking pod per tracking
worker (``workers.py`` has the exact contract). ``ObjectTrackingController`` is this controller without the user
worker (``USER_WORKER = False``).

* Status (``runtime.servicekind``): ``Pending`` while a worker starts, ``Running`` once every Deployment is available
  and every tracking pod runs ready, ``Failed`` with reason ``podFailed`` (a tracking pod ended) or
  ``deploymentFailed`` (a Deployment failed), as Go Sedna names them, or a reason saying why the workers cannot be
  built (``InvalidSpec``, ``FailedCreate``); re-evaluated every sync, so a service whose workers are healthy again
  recovers. ``active``/``failed`` count Deployments and tracking pods.
* Self-healing: a Deployment deleted from under a live service is recreated by the delete handler, a tracking pod by
  ``sync``, each at most once per 5 s, never after the service is gone (asked from the API server); a deleted
  Service is created again.
* Spec changes: the Deployments are updated in place (the ReID Deployment's ``replicas`` alone when only they
  changed); a tracking pod whose template changed is replaced, pods of removed tracking workers are deleted, new
  ones created.
* Edge: as in Go Sedna, nothing goes down and no report comes up.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from apis import meta
from apis.meta import Obj
from apis.record import NORMAL
from apis.resources import DEPLOYMENTS, OBJECT_SEARCH_SERVICES, PODS, SERVICES
from globalmanager.runtime.deployments import deployment_name, ensure_deployment, scale_deployment
from globalmanager.runtime.revisions import spec_hash_matches
from globalmanager.runtime.servicekind import ServiceKindController
from globalmanager.runtime.services import edge_mesh_service_name, ensure_service, service_name_error
from globalmanager.runtime.servicestatus import ServiceObservation, observe_deployments, observe_pods

from .workers import (
    REID_PORT,
    REID_WORKER,
    TRACKING_WORKER,
    USER_PORT,
    USER_WORKER,
    reid_deployment,
    tracking_index,
    tracking_pod,
    tracking_source,
    tracking_templates,
    user_deployment,
)

__all__ = ["NAME", "ObjectSearchController", "new_controller"]

FAILED_MESSAGE = "the worker of service failed: "


class ObjectSearchController(ServiceKindController):
    NAME = "ObjectSearch"
    JOB_RESOURCE = OBJECT_SEARCH_SERVICES
    OWNS = (PODS, DEPLOYMENTS, SERVICES)
    RECREATES = (DEPLOYMENTS,)
    USER_WORKER = True  # ObjectTracking has none

    def _worker_types(self) -> tuple[str, ...]:
        return (REID_WORKER, USER_WORKER) if self.USER_WORKER else (REID_WORKER,)

    def needed_workers(self, service: Obj) -> int:
        return len(tracking_templates(service)) + len(self._worker_types())

    def spec_problem(self, service: Obj) -> str:
        spec = service.get("spec") or {}
        if not isinstance((spec.get("reidWorkers") or {}).get("template"), Mapping):
            return "spec.reidWorkers.template is required"
        if self.USER_WORKER and not isinstance((spec.get("userWorker") or {}).get("template"), Mapping):
            return "spec.userWorker.template is required"
        for i, template in enumerate(tracking_templates(service)):
            if not isinstance(template, Mapping):
                return f"spec.trackingWorkers[{i}].template is required"
        for worker_type in self._worker_types():
            problem = service_name_error(service, worker_type)
            if problem:
                return problem
        return ""

    # -- workers --------------------------------------------------------------------------------------------------
    def create_workers(self, service: Obj, deployments: dict[str, Obj]) -> None:
        """Sedna's order: the ReID Deployment and Service, the user Deployment and Service, the tracking pods."""
        if self._anything_missing(service) and not self.job_is_live(service):
            return  # deleted meanwhile: never create workers for a service that is gone
        started = bool((service.get("status") or {}).get("startTime"))  # a creation after the start is a recreation
        spec = service.get("spec") or {}
        reid = spec.get("reidWorkers") or {}
        builds = {REID_WORKER: (REID_PORT, {k: v for k, v in reid.items() if k != "replicas"}, reid_deployment),
                  USER_WORKER: (USER_PORT, spec.get("userWorker"), user_deployment)}
        for worker_type in self._worker_types():
            port, source, build = builds[worker_type]
            name = deployment_name(service, worker_type)
            deployment = ensure_deployment(self, service, name, source, lambda b=build: b(service),
                                           f"{worker_type} deployment", started)
            if deployment is not None:
                if worker_type == REID_WORKER:
                    deployment = scale_deployment(self, service, deployment, reid.get("replicas"), "reidworker deployment")
                deployments[name] = deployment
            ensure_service(self, service, worker_type, port)
        self._ensure_tracking_pods(service, started)

    def _anything_missing(self, service: Obj) -> bool:
        ns = meta.namespace(service)
        for worker_type in self._worker_types():
            if self.get_cached(DEPLOYMENTS, ns, deployment_name(service, worker_type)) is None:
                return True
            if self.get_cached(SERVICES, ns, edge_mesh_service_name(service, worker_type)) is None:
                return True
        indexes = {tracking_index(p) for p in self._tracking_pods(service)}
        return any(i not in indexes for i in range(len(tracking_templates(service))))

    def _is_current(self, service: Obj, pod: Obj) -> bool:
        index = tracking_index(pod)
        return index is not None and index < len(tracking_templates(service)) \
            and spec_hash_matches(pod, tracking_source(service, index, self.USER_WORKER))

    def _tracking_pods(self, service: Obj) -> list[Obj]:
        """The service's current tracking pods (not being deleted, built from the current spec)."""
        return [p for p in self.owned(PODS, service)
                if meta.deletion_timestamp(p) is None and self._is_current(service, p)]

    def _ensure_tracking_pods(self, service: Obj, started: bool) -> None:
        outdated = [p for p in self.owned(PODS, service)
                    if meta.deletion_timestamp(p) is None and not self._is_current(service, p)]
        for pod in outdated:
            self.delete_object(PODS, meta.namespace(pod), meta.name(pod))
        if outdated:
            self.recorder.event(service, NORMAL, "SpecChanged", f"deleted {len(outdated)} tracking pods of an older spec")
        if self.creations_pending(service, PODS):
            return  # pods created moments ago are not in the cache yet: their events wake us
        present = {tracking_index(p) for p in self._tracking_pods(service)}
        for index in range(len(tracking_templates(service))):
            if index not in present:
                # the recreation limit is per tracking worker
                self.ensure_worker(service, PODS, f"{meta.name(service)}-{TRACKING_WORKER}-{index}",
                                   functools.partial(tracking_pod, service, index, self.USER_WORKER),
                                   what="tracking pod", recreation=started)

    # -- status ---------------------------------------------------------------------------------------------------
    def observe_workers(self, service: Obj, deployments: Mapping[str, Obj], obs: ServiceObservation) -> None:
        seen = observe_deployments(deployments.values(), obs.needed)
        obs.active, obs.available = seen.active, seen.available
        failed_pods = observe_pods(self._tracking_pods(service), obs)
        obs.active += self.creations_pending(service, PODS)
        if failed_pods:
            obs.add_failure("podFailed", FAILED_MESSAGE + "; ".join(sorted(failed_pods)))
        if seen.failed_workers:
            obs.add_failure("deploymentFailed", FAILED_MESSAGE + "; ".join(sorted(seen.failed_workers)))


NAME = ObjectSearchController.NAME
new_controller = ObjectSearchController.from_context
