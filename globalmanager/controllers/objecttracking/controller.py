"""The ObjectTrackingService controller. Go Sedna has no controller for this kind, so its worker contract is taken
from ObjectSearch's (the kinds share ``trackingWorkers`` and ``reidWorkers``):

* labels ``objecttrackingservice.sedna.io/{name,uid,worker-type}``;
* ReID: Deployment ``<service>-deployment-reidworker`` from ``spec.reidWorkers``, Service ``<service>-reidworker``
  (port 9378);
* tracking: one pod per ``spec.trackingWorkers[i]`` (``<service>-trackingworker-``), env ``NAMESPACE``,
  ``SERVICE_NAME``, ``WORKER_NAME=trackingworker-<5 random>``, ``EDGEMESH_URL=<service>-reidworker.<ns>:9378``
  (no ``USERWORKER_URL``: there is no user worker).

Status, self-healing, spec changes and cascade are ObjectSearch's (``objectsearch.controller``).
"""

from __future__ import annotations

from apis.resources import OBJECT_TRACKING_SERVICES

from ..objectsearch.controller import ObjectSearchController

__all__ = ["NAME", "ObjectTrackingController", "new_controller"]


class ObjectTrackingController(ObjectSearchController):
    NAME = "ObjectTracking"
    JOB_RESOURCE = OBJECT_TRACKING_SERVICES
    USER_WORKER = False


NAME = ObjectTrackingController.NAME
new_controller = ObjectTrackingController.from_context
