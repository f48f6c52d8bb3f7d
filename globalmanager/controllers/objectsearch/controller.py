"""The ObjectSearchService kind (Sedna's ``objectsearch`` controller, level-triggered and self-healing): ``KIND``, and
the rules it shares with ObjectTracking (``TrackingServiceRules``: ``user_worker`` says whether the kind has one).

Per service, all controller-owned by it (deleting the service deletes them all — Sedna #444 left the tracking pods
behind): the ReID Deployment and Service, the user worker Deployment and Service, one tracking pod per tracking
worker (``workers.py`` has the exact contract). ObjectTracking's rules are these without the user worker
(``user_worker=False``).

* Status (``runtime.servicekind.ServiceRules``): ``Pending`` while a worker starts, ``Running`` once every Deployment
  is available and every tracking pod runs ready, ``Failed`` with reason ``podFailed`` (a tracking pod ended) or
  ``deploymentFailed`` (a Deployment failed), as Go Sedna names them, or a reason saying why the workers cannot be
  built (``InvalidSpec``: a spec the typed view rejects or a template missing; ``FailedCreate``); re-evaluated every
  sync, so a service whose workers are healthy again recovers. ``active``/``failed`` count Deployments and tracking
  pods (with an invalid spec: the Deployments).
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
from dataclasses import dataclass
from typing import Any

from apis import meta
from apis.meta import Obj
from apis.record import NORMAL
from apis.resources import DEPLOYMENTS, OBJECT_SEARCH_SERVICES, PODS, SERVICES
from apis.sedna.v1alpha1 import ObjectSearchServiceSpec, ObjectTrackingServiceSpec
from apis.typed import spec_of
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.deployments import deployment_name, ensure_deployment, scale_deployment
from globalmanager.runtime.kind import Kind
from globalmanager.runtime.revisions import spec_hash_matches
from globalmanager.runtime.servicekind import ServiceRules, has_started
from globalmanager.runtime.services import edge_mesh_service_name, ensure_service, service_name_error
from globalmanager.runtime.servicestatus import ServiceObservation, observe_deployments, observe_pods

from .workers import (
    REID_PORT,
    REID_WORKER,
    TRACKING_WORKER,
    USER_PORT,
    USER_WORKER,
    SearchSpec,
    reid_deployment,
    tracking_index,
    tracking_pod,
    tracking_source,
    tracking_templates,
    user_deployment,
)

__all__ = ["KIND", "NAME", "TrackingServiceRules"]

FAILED_MESSAGE = "the worker of service failed: "

Ctx = KindContext[None]


@dataclass(frozen=True)
class TrackingServiceRules:
    """The rules of a service of tracking pods and ReID workers; what differs between the kinds that use them:
    ``spec_type`` (the kind's typed spec) and ``user_worker`` (ObjectSearch's user worker Deployment and Service,
    which ObjectTracking has not). ``rules`` are their ``ServiceRules``."""

    spec_type: type[ObjectSearchServiceSpec] | type[ObjectTrackingServiceSpec]
    user_worker: bool

    @property
    def worker_types(self) -> tuple[str, ...]:
        """The workers run as a Deployment with a Service."""
        return (REID_WORKER, USER_WORKER) if self.user_worker else (REID_WORKER,)

    @property
    def rules(self) -> ServiceRules[SearchSpec]:
        return ServiceRules(spec=self.spec, needed_workers=self.needed_workers, fixed_workers=len(self.worker_types),
                            create_workers=self.create_workers, observe_workers=self.observe_workers)

    def spec(self, service: Obj) -> SearchSpec:
        """The typed spec; ``ValueError`` naming the field when a worker's template is missing, or the name cannot
        name a worker's Service."""
        spec: SearchSpec | None = spec_of(self.spec_type, service)
        if spec is None or spec.reid_workers is None or spec.reid_workers.template is None:
            raise ValueError("spec.reidWorkers.template is required")
        if self.user_worker:
            user = spec.user_worker if isinstance(spec, ObjectSearchServiceSpec) else None
            if user is None or user.template is None:
                raise ValueError("spec.userWorker.template is required")
        for i, template in enumerate(tracking_templates(spec)):
            if template is None:
                raise ValueError(f"spec.trackingWorkers[{i}].template is required")
        for worker_type in self.worker_types:
            problem = service_name_error(service, worker_type)
            if problem:
                raise ValueError(problem)
        return spec

    def needed_workers(self, spec: SearchSpec) -> int:
        return len(tracking_templates(spec)) + len(self.worker_types)

    # -- workers --------------------------------------------------------------------------------------------------
    def create_workers(self, ctx: Ctx, service: Obj, spec: SearchSpec, deployments: dict[str, Obj]) -> None:
        """Sedna's order: the ReID Deployment and Service, the user Deployment and Service, the tracking pods."""
        if self._anything_missing(ctx, service, spec) and not ctx.job_is_live(service):
            return  # deleted meanwhile: never create workers for a service that is gone
        started = has_started(service)
        # what the Deployments are built from: the workers' parts of the object as served (the hashes stay those of
        # earlier versions); the ReID workers' replicas are not (scaling never restarts them)
        served = service.get("spec") or {}
        reid = served.get("reidWorkers") or {}
        sources = {REID_WORKER: {k: v for k, v in reid.items() if k != "replicas"}, USER_WORKER: served.get("userWorker")}
        for worker_type in self.worker_types:
            port = REID_PORT if worker_type == REID_WORKER else USER_PORT
            name = deployment_name(service, worker_type)
            deployment = ensure_deployment(ctx, service, name, sources[worker_type],
                                           functools.partial(self._build_deployment, service, spec, worker_type),
                                           f"{worker_type} deployment", started)
            if deployment is not None and worker_type == REID_WORKER and spec.reid_workers is not None:
                deployments[name] = scale_deployment(ctx, service, deployment, spec.reid_workers.replicas,
                                                     "reidworker deployment")
            elif deployment is not None:
                deployments[name] = deployment
            ensure_service(ctx, service, worker_type, port)
        self._ensure_tracking_pods(ctx, service, spec, started)

    @staticmethod
    def _build_deployment(service: Obj, spec: SearchSpec, worker_type: str) -> dict[str, Any]:
        if worker_type == USER_WORKER:
            assert isinstance(spec, ObjectSearchServiceSpec)  # only ObjectSearch has a user worker
            return user_deployment(service, spec)
        return reid_deployment(service, spec)

    def _anything_missing(self, ctx: Ctx, service: Obj, spec: SearchSpec) -> bool:
        ns = meta.namespace(service)
        for worker_type in self.worker_types:
            if ctx.get_cached(DEPLOYMENTS, ns, deployment_name(service, worker_type)) is None:
                return True
            if ctx.get_cached(SERVICES, ns, edge_mesh_service_name(service, worker_type)) is None:
                return True
        indexes = {tracking_index(p) for p in self._tracking_pods(ctx, service, spec)}
        return any(i not in indexes for i in range(len(tracking_templates(spec))))

    def _is_current(self, spec: SearchSpec, pod: Obj) -> bool:
        index = tracking_index(pod)
        return index is not None and index < len(tracking_templates(spec)) \
            and spec_hash_matches(pod, tracking_source(spec, index, self.user_worker))

    def _tracking_pods(self, ctx: Ctx, service: Obj, spec: SearchSpec) -> list[Obj]:
        """The service's current tracking pods (not being deleted, built from the current spec)."""
        return [p for p in ctx.owned(PODS, service)
                if meta.deletion_timestamp(p) is None and self._is_current(spec, p)]

    def _ensure_tracking_pods(self, ctx: Ctx, service: Obj, spec: SearchSpec, started: bool) -> None:
        outdated = [p for p in ctx.owned(PODS, service)
                    if meta.deletion_timestamp(p) is None and not self._is_current(spec, p)]
        for pod in outdated:
            ctx.delete_object(PODS, meta.namespace(pod), meta.name(pod))
        if outdated:
            ctx.events.event(service, NORMAL, "SpecChanged", f"deleted {len(outdated)} tracking pods of an older spec")
        if ctx.creations_pending(service, PODS):
            return  # pods created moments ago are not in the cache yet: their events wake us
        present = {tracking_index(p) for p in self._tracking_pods(ctx, service, spec)}
        for index in range(len(tracking_templates(spec))):
            if index not in present:
                # the recreation limit is per tracking worker
                ctx.ensure_worker(service, PODS, f"{meta.name(service)}-{TRACKING_WORKER}-{index}",
                                  functools.partial(tracking_pod, service, spec, index, self.user_worker),
                                  what="tracking pod", recreation=started)

    # -- status ---------------------------------------------------------------------------------------------------
    def observe_workers(self, ctx: Ctx, service: Obj, spec: SearchSpec, deployments: Mapping[str, Obj],
                        obs: ServiceObservation) -> None:
        seen = observe_deployments(deployments.values(), obs.needed)
        obs.active, obs.available = seen.active, seen.available
        failed_pods = observe_pods(self._tracking_pods(ctx, service, spec), obs)
        obs.active += ctx.creations_pending(service, PODS)
        if failed_pods:
            obs.add_failure("podFailed", FAILED_MESSAGE + "; ".join(sorted(failed_pods)))
        if seen.failed_workers:
            obs.add_failure("deploymentFailed", FAILED_MESSAGE + "; ".join(sorted(seen.failed_workers)))


OBJECT_SEARCH = TrackingServiceRules(spec_type=ObjectSearchServiceSpec, user_worker=True)

KIND: Kind[None] = Kind(name="ObjectSearch", resource=OBJECT_SEARCH_SERVICES, sync=OBJECT_SEARCH.rules.sync,
                        owns=(PODS, DEPLOYMENTS, SERVICES), recreates=(DEPLOYMENTS,),
                        ignores_own_status_writes=True)  # the status is derived from the spec and the workers
NAME = KIND.name
