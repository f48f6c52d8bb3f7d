"""``ServiceKindController``: the ``sync`` of Sedna's service kinds (JointInference, FeatureExtraction, ObjectSearch,
ObjectTracking), whose workers run for good (Deployments, pods) and whose status is their health.

Each sync, level-triggered: an invalid spec (``spec_problem``) fails the service with reason ``InvalidSpec`` and
builds nothing; otherwise ``create_workers`` creates what is missing and updates what changed, a missing Model or
Secret giving reason ``ModelNotFound``/``SecretNotFound`` and an object of a worker's name not owned by the service
``FailedCreate``; then ``observe_workers`` folds the workers' health into a ``ServiceObservation`` and
``servicestatus.write_service_status`` writes ``Pending``/``Running``/``Failed``. A failure no informer event ends
(a missing Secret, a foreign object) is retried with the key's rate-limited backoff.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.meta import Obj
from apis.resources import DEPLOYMENTS

from .controller import KindController
from .owned_errors import NotOwnedError
from .references import MissingReference
from .servicestatus import ServiceObservation, observe_deployments, write_service_status

__all__ = ["RETRIED_FAILURES", "ServiceKindController"]

RETRIED_FAILURES = ("SecretNotFound", "FailedCreate")


class ServiceKindController(KindController):
    """Subclasses set the ``KindController`` attributes and implement ``needed_workers``, ``spec_problem`` and
    ``create_workers``; ``observe_workers`` counts the owned Deployments unless overridden."""

    def needed_workers(self, service: Obj) -> int:
        """How many workers (Deployments, pods) the service has when it is complete."""
        raise NotImplementedError

    def spec_problem(self, service: Obj) -> str:
        """Why the spec cannot be built (naming the field), or ``""``."""
        raise NotImplementedError

    def create_workers(self, service: Obj, deployments: dict[str, Obj]) -> None:
        """Create the missing workers and update the changed ones (never for a service that is gone: ask
        ``job_is_live`` before creating); ``deployments`` (the service's, by name) gets those created or updated.
        May raise ``MissingReference`` or ``NotOwnedError``."""
        raise NotImplementedError

    def observe_workers(self, service: Obj, deployments: Mapping[str, Obj], obs: ServiceObservation) -> None:
        """Fold the workers' health into ``obs`` (default: the Deployments')."""
        seen = observe_deployments(deployments.values(), obs.needed)
        obs.active, obs.available, obs.failed_workers = seen.active, seen.available, seen.failed_workers

    def sync(self, key: str) -> bool:
        service = self.get_job(key)
        if service is None:
            self.forget_job(key)
            return True  # gone: its workers are garbage-collected (ownerReferences)
        obs = ServiceObservation(needed=self.needed_workers(service))
        deployments: dict[str, Mapping[str, Any]] = (
            {meta.name(d): d for d in self.owned(DEPLOYMENTS, service)} if DEPLOYMENTS in self.owned_informers else {})
        problem = self.spec_problem(service)
        if problem:
            obs.add_failure("InvalidSpec", problem)
        else:
            try:
                self.create_workers(service, deployments)
            except MissingReference as exc:
                obs.add_failure(exc.reason, str(exc))
            except NotOwnedError as exc:
                obs.add_failure("FailedCreate", str(exc))
        self.observe_workers(service, deployments, obs)
        write_service_status(self, key, service, obs)
        if obs.failure is not None and obs.failure[0] in RETRIED_FAILURES:
            return self.retry_later(key)  # nothing wakes us when a Secret appears or a foreign object goes
        return True
