"""``ServiceRules``: the ``sync`` of Sedna's service kinds (JointInference, FeatureExtraction, ObjectSearch,
ObjectTracking), whose workers run for good (Deployments, pods) and whose status is their health. A frozen dataclass
of the functions that differ between these kinds; its ``sync`` is the kind's (``Kind(sync=RULES.sync, ...)``).

Each sync, level-triggered: a spec the kind cannot build (``spec`` raises ``ValueError`` naming the field: the typed
view rejects it, or a field the kind needs is missing) fails the service with reason ``InvalidSpec`` and builds
nothing; otherwise ``create_workers`` creates what is missing and updates what changed, a missing Model or Secret
giving reason ``ModelNotFound``/``SecretNotFound`` (a missing node ``NodeNotFound``) and an object of a worker's name
not owned by the service ``FailedCreate``; then ``observe_workers`` folds the workers' health into a
``ServiceObservation`` and ``servicestatus.write_service_status`` writes ``Pending``/``Running``/``Failed``. A
failure no informer event ends (a missing Secret, a foreign object) is retried with the key's rate-limited backoff
(``Result(requeue=True)``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from apis import meta
from apis.meta import Obj
from apis.resources import DEPLOYMENTS
from reconcile import Result

from .context import KindContext
from .owned_errors import NotOwnedError
from .references import MissingReference
from .servicestatus import ServiceObservation, observe_deployments, write_service_status

__all__ = ["RETRIED_FAILURES", "ServiceRules", "has_started", "observe_deployment_workers"]

V = TypeVar("V")  # the kind's typed spec (a view of ``apis.sedna.v1alpha1``)

Ctx = KindContext[None]

RETRIED_FAILURES = ("SecretNotFound", "FailedCreate")


def has_started(service: Obj) -> bool:
    """Whether the service had its workers (its status has a ``startTime``): a worker created now is a re-creation."""
    return bool((service.get("status") or {}).get("startTime"))


def observe_deployment_workers(deployments: Mapping[str, Obj], obs: ServiceObservation) -> None:
    """Fold the health of the service's Deployments into ``obs``."""
    seen = observe_deployments(deployments.values(), obs.needed)
    obs.active, obs.available, obs.failed_workers = seen.active, seen.available, seen.failed_workers


def _observe_deployments_only(ctx: Ctx, service: Obj, spec: object, deployments: Mapping[str, Obj],
                              obs: ServiceObservation) -> None:
    observe_deployment_workers(deployments, obs)


@dataclass(frozen=True)
class ServiceRules(Generic[V]):
    """The rules of a service kind; what differs between the kinds:

    * ``spec(service)``: the typed spec; ``ValueError`` naming the field when the kind cannot build it (the service
      fails ``InvalidSpec``);
    * ``needed_workers(spec)``: how many workers (Deployments, pods) the service has when it is complete;
      ``fixed_workers``: those it has whatever its spec (its Deployments), counted for a spec ``spec`` rejects;
    * ``create_workers(ctx, service, spec, deployments)``: Sedna's ``createWorkers``, level-triggered: create the
      missing workers and update the changed ones (never for a service that is gone: ask ``ctx.job_is_live``
      before creating); ``deployments`` (the service's, by name) gets those created or updated. May raise
      ``MissingReference`` or ``NotOwnedError``;
    * ``observe_workers(ctx, service, spec, deployments, obs)``: fold the workers' health into ``obs`` (default: the
      Deployments').
    """

    spec: Callable[[Obj], V]
    needed_workers: Callable[[V], int]
    fixed_workers: int
    create_workers: Callable[[Ctx, Obj, V, dict[str, Obj]], None]
    observe_workers: Callable[[Ctx, Obj, V, Mapping[str, Obj], ServiceObservation], None] = _observe_deployments_only

    def sync(self, ctx: Ctx, key: str, service: Obj) -> Result | None:
        deployments: dict[str, Obj] = {meta.name(d): d for d in ctx.owned(DEPLOYMENTS, service)}
        try:
            spec = self.spec(service)
        except ValueError as exc:
            obs = ServiceObservation(needed=self.fixed_workers)
            obs.add_failure("InvalidSpec", str(exc))
            observe_deployment_workers(deployments, obs)
        else:
            obs = ServiceObservation(needed=self.needed_workers(spec))
            try:
                self.create_workers(ctx, service, spec, deployments)
            except MissingReference as exc:
                obs.add_failure(exc.reason, str(exc))
            except NotOwnedError as exc:
                obs.add_failure("FailedCreate", str(exc))
            self.observe_workers(ctx, service, spec, deployments, obs)
        write_service_status(ctx, key, service, obs)
        if obs.failure is not None and obs.failure[0] in RETRIED_FAILURES:
            return Result(requeue=True)  # nothing wakes us when a Secret appears or a foreign object goes
        return None
