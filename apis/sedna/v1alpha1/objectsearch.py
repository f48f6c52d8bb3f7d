"""ObjectSearchService (objs) and ObjectTrackingService (objt) (Go ``objectsearchservice_types.go``,
``objecttrackingservice_types.go``): tracking pods at the edge, a ReID Deployment in the cloud."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...resources import OBJECT_SEARCH_SERVICES, OBJECT_TRACKING_SERVICES
from ...typed import ApiType, Resource, api_field
from .common import (
    DATE_TIME,
    DeploymentSpecFields,
    PodTemplateSpec,
    ServiceCondition,
    ServiceConditionType,
    TrackingWorker,
    required_metadata,
)
from .jointinference import SERVICE_COLUMNS

__all__ = [
    "ObjectSearchService",
    "ObjectSearchServiceSpec",
    "ObjectSearchServiceStatus",
    "ObjectSearchServiceCondition",
    "ObjectSearchServiceConditionType",
    "UserWorker",
    "ReidWorkers",
    "ObjectTrackingService",
    "ObjectTrackingServiceSpec",
    "ObjectTrackingServiceStatus",
    "ObjectTrackingServiceCondition",
    "ObjectTrackingServiceConditionType",
]

ObjectSearchServiceCondition = ObjectTrackingServiceCondition = ServiceCondition
ObjectSearchServiceConditionType = ObjectTrackingServiceConditionType = ServiceConditionType


@dataclass(kw_only=True)
class UserWorker(ApiType):
    template: PodTemplateSpec | None = api_field(required=True)


@dataclass(kw_only=True)
class ReidWorkers(DeploymentSpecFields):
    """The cloud ReID workers: an ``apps/v1`` DeploymentSpec inlined (Go ``ReidWorkers``)."""


@dataclass(kw_only=True)
class ObjectTrackingServiceSpec(ApiType):
    tracking_workers: list[TrackingWorker] | None = api_field(required=True)
    reid_workers: ReidWorkers | None = api_field(required=True, doc="An apps/v1 DeploymentSpec for the ReID workers.")


@dataclass(kw_only=True)
class ObjectSearchServiceSpec(ApiType):
    user_worker: UserWorker | None = api_field(required=True)
    tracking_workers: list[TrackingWorker] | None = api_field(required=True)
    reid_workers: ReidWorkers | None = api_field(required=True, doc="An apps/v1 DeploymentSpec for the ReID workers.")


@dataclass(kw_only=True)
class ObjectSearchServiceStatus(ApiType):
    conditions: list[ServiceCondition] | None = api_field()
    start_time: str | None = api_field(**DATE_TIME)
    active: int | None = api_field(minimum=0)
    failed: int | None = api_field(minimum=0)


ObjectTrackingServiceStatus = ObjectSearchServiceStatus


@dataclass(kw_only=True)
class ObjectSearchService(Resource):
    GVR: ClassVar = OBJECT_SEARCH_SERVICES
    PRINTER_COLUMNS: ClassVar = SERVICE_COLUMNS
    SCHEMA_DESCRIPTION: ClassVar[str] = (
        "ObjectSearchService finds a target person in video streams: a user worker, tracking workers at the edge "
        "and ReID workers in the cloud."
    )

    metadata: dict[str, Any] | None = required_metadata()
    spec: ObjectSearchServiceSpec | None = api_field(required=True)
    status: ObjectSearchServiceStatus | None = api_field()


@dataclass(kw_only=True)
class ObjectTrackingService(Resource):
    GVR: ClassVar = OBJECT_TRACKING_SERVICES
    PRINTER_COLUMNS: ClassVar = SERVICE_COLUMNS
    SCHEMA_DESCRIPTION: ClassVar[str] = (
        "ObjectTrackingService tracks objects in video streams at the edge with ReID workers in the cloud."
    )

    metadata: dict[str, Any] | None = required_metadata()
    spec: ObjectTrackingServiceSpec | None = api_field(required=True)
    status: ObjectSearchServiceStatus | None = api_field()
