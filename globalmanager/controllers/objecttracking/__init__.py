"""The ObjectTrackingService kind: ObjectSearch's rules without the user worker (a ReID Deployment and its Service
``<service>-reidworker``, one tracking pod per tracking worker). Go Sedna has the type and CRD but no controller."""

from .controller import KIND, NAME

__all__ = ["KIND", "NAME"]
