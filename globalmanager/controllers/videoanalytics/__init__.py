"""The VideoAnalyticsJob kind: Reid's one-pod rules with the detection Model mounted (``MODEL_URL``, ``MODEL_NAME``)
and the Service ``<job>-videoanalytics`` (port 4000)."""

from .controller import KIND, NAME

__all__ = ["KIND", "NAME"]
