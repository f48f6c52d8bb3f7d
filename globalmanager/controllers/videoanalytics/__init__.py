"""The VideoAnalyticsJob controller: Reid's job controller with the detection Model mounted (``MODEL_URL``,
``MODEL_NAME``) and the Service ``<job>-videoanalytics`` (port 4000)."""

from .controller import NAME, VideoAnalyticsController, new_controller

__all__ = ["NAME", "VideoAnalyticsController", "new_controller"]
