"""VideoAnalyticsJob (``videoanalyticsjobs.sedna.io``, va) (Go ``videoanalyticsjob_types.go``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...resources import VIDEO_ANALYTICS_JOBS
from ...typed import Resource, api_field
from .common import JobCondition, JobPhase, ModelRef, StageConditionType, required_metadata
from .reid import JOB_COLUMNS, ReidJobSpec, ReidJobStatus

__all__ = [
    "VideoAnalyticsJob",
    "VideoAnalyticsJobSpec",
    "VideoAnalyticsJobStatus",
    "VideoAnalyticsJobCondition",
    "VideoAnalyticsJobConditionType",
    "VideoAnalyticsJobPhase",
]

VideoAnalyticsJobCondition = JobCondition
VideoAnalyticsJobConditionType = StageConditionType
VideoAnalyticsJobPhase = JobPhase
VideoAnalyticsJobStatus = ReidJobStatus


@dataclass(kw_only=True)
class VideoAnalyticsJobSpec(ReidJobSpec):
    model: ModelRef | None = api_field(required=True, doc="The detection model (Go VideoAnalyticsModel).")


@dataclass(kw_only=True)
class VideoAnalyticsJob(Resource):
    GVR: ClassVar = VIDEO_ANALYTICS_JOBS
    PRINTER_COLUMNS: ClassVar = JOB_COLUMNS
    SCHEMA_DESCRIPTION: ClassVar[str] = "VideoAnalyticsJob detects and tracks objects in a video stream at the edge."

    metadata: dict[str, Any] | None = required_metadata()
    spec: VideoAnalyticsJobSpec | None = api_field(required=True)
    status: ReidJobStatus | None = api_field()
