"""The ObjectTrackingService kind. Go Sedna has no controller for this kind, so its worker contract is taken from
ObjectSearch's (the kinds share ``trackingWorkers`` and ``reidWorkers``): ``TrackingServiceRules`` without the user
worker.

* labels ``objecttrackingservice.sedna.io/{name,uid,worker-type}``;
* ReID: Deployment ``<service>-deployment-reidworker`` from ``spec.reidWorkers``, Service ``<service>-reidworker``
  (port 9378);
* tracking: one pod per ``spec.trackingWorkers[i]`` (``<service>-trackingworker-``), env ``NAMESPACE``,
  ``SERVICE_NAME``, ``WORKER_NAME=trackingworker-<5 random>``, ``EDGEMESH_URL=<service>-reidworker.<ns>:9378``
  (no ``USERWORKER_URL``: there is no user worker).

Status, self-healing, spec changes and cascade are ObjectSearch's (``objectsearch.controller``).
"""

from __future__ import annotations

from apis.resources import DEPLOYMENTS, OBJECT_TRACKING_SERVICES, PODS, SERVICES
from apis.sedna.v1alpha1 import ObjectTrackingServiceSpec
from globalmanager.runtime.kind import Kind

from ..objectsearch.controller import TrackingServiceRules

__all__ = ["KIND", "NAME"]

OBJECT_TRACKING = TrackingServiceRules(spec_type=ObjectTrackingServiceSpec, user_worker=False)

KIND: Kind[None] = Kind(name="ObjectTracking", resource=OBJECT_TRACKING_SERVICES, sync=OBJECT_TRACKING.rules.sync,
                        owns=(PODS, DEPLOYMENTS, SERVICES), recreates=(DEPLOYMENTS,),
                        ignores_own_status_writes=True)  # the status is derived from the spec and the workers
NAME = KIND.name
