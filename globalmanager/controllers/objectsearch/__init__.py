"""The ObjectSearchService controller: a ReID Deployment and its Service ``<service>-reidworker`` (port 9378), a user
worker Deployment and its Service ``<service>-userworker`` (port 9379), one tracking pod per tracking worker; status
from their health (``podFailed``/``deploymentFailed``), self-healing and spec roll-outs. ObjectTracking reuses it
without the user worker."""

from .controller import NAME, ObjectSearchController, new_controller

__all__ = ["NAME", "ObjectSearchController", "new_controller"]
