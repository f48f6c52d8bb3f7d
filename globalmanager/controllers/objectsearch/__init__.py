"""The ObjectSearchService kind: a ReID Deployment and its Service ``<service>-reidworker`` (port 9378), a user worker
Deployment and its Service ``<service>-userworker`` (port 9379), one tracking pod per tracking worker; status from
their health (``podFailed``/``deploymentFailed``), self-healing and spec roll-outs. ObjectTracking shares its rules
(``TrackingServiceRules``) without the user worker."""

from .controller import KIND, NAME, TrackingServiceRules

__all__ = ["KIND", "NAME", "TrackingServiceRules"]
