"""ReidJob (``reidjobs.sedna.io``, reid) (Go ``reidjob_types.go``): a batch/v1 JobSpec inlined, run as one pod."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...resources import REID_JOBS
from ...typed import ApiType, Resource, api_field
from .common import (
    AGE_COLUMN,
    DATE_TIME,
    JobCondition,
    JobPhase,
    JobSpecFields,
    StageConditionType,
    column,
    required_metadata,
)

__all__ = ["ReidJob", "ReidJobSpec", "ReidJobStatus", "ReidJobCondition", "ReidJobConditionType", "ReidJobPhase", "JOB_COLUMNS"]

ReidJobCondition = JobCondition
ReidJobConditionType = StageConditionType
ReidJobPhase = JobPhase

JOB_COLUMNS = (column("Phase", ".status.phase"), AGE_COLUMN)
"""Printer columns of the Reid and VideoAnalytics jobs."""


@dataclass(kw_only=True)
class ReidJobSpec(JobSpecFields):
    kafka_support: bool | None = api_field()


@dataclass(kw_only=True)
class ReidJobStatus(ApiType):
    """Status of a Reid or VideoAnalytics job."""

    conditions: list[JobCondition] | None = api_field()
    start_time: str | None = api_field(**DATE_TIME)
    completion_time: str | None = api_field(**DATE_TIME)
    active: int | None = api_field(minimum=0)
    succeeded: int | None = api_field(minimum=0)
    failed: int | None = api_field(minimum=0)
    phase: str | None = api_field(enum=list(JobPhase.ALL))


@dataclass(kw_only=True)
class ReidJob(Resource):
    GVR: ClassVar = REID_JOBS
    PRINTER_COLUMNS: ClassVar = JOB_COLUMNS
    SCHEMA_DESCRIPTION: ClassVar[str] = "ReidJob re-identifies target persons in the frames the tracking workers send."

    metadata: dict[str, Any] | None = required_metadata()
    spec: ReidJobSpec | None = api_field(required=True)
    status: ReidJobStatus | None = api_field()
