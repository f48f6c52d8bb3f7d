"""The ObjectTrackingService controller: ObjectSearch's without the user worker (a ReID Deployment and its Service
``<service>-reidworker``, one tracking pod per tracking worker). Go Sedna has the type and CRD but no controller."""

from .controller import NAME, ObjectTrackingController, new_controller

__all__ = ["NAME", "ObjectTrackingController", "new_controller"]
