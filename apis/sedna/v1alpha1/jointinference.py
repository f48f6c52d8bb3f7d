"""JointInferenceService (``jointinferenceservices.sedna.io``, ji): edge + cloud inference with hard example
mining (Go ``jointinferenceservice_types.go``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...resources import JOINT_INFERENCE_SERVICES
from ...typed import ApiType, Resource, api_field
from .common import (
    AGE_COLUMN,
    DATE_TIME,
    HardExampleMining,
    Metric,
    ModelRef,
    PodTemplateSpec,
    ServiceCondition,
    ServiceConditionType,
    column,
    required_metadata,
)

__all__ = [
    "JointInferenceService",
    "JointInferenceServiceSpec",
    "JointInferenceServiceStatus",
    "JointInferenceServiceCondition",
    "JointInferenceServiceConditionType",
    "EdgeWorker",
    "CloudWorker",
    "HPA",
    "SERVICE_COLUMNS",
]

JointInferenceServiceCondition = ServiceCondition
JointInferenceServiceConditionType = ServiceConditionType

SERVICE_COLUMNS = (
    column("Status", ".status.conditions[-1].type"),
    column("Active", ".status.active", "integer"),
    column("Failed", ".status.failed", "integer"),
    AGE_COLUMN,
)
"""Printer columns of the service kinds (JI, FE, ObjectSearch, ObjectTracking)."""


@dataclass(kw_only=True)
class HPA(ApiType):
    """Horizontal autoscaling of a worker's Deployment; metrics/behavior are autoscaling/v2 shapes."""

    min_replicas: int | None = api_field(minimum=1)
    max_replicas: int | None = api_field(required=True, minimum=1)
    metrics: list[dict[str, Any]] | None = api_field()
    behavior: dict[str, Any] | None = api_field()


@dataclass(kw_only=True)
class EdgeWorker(ApiType):
    model: ModelRef | None = api_field(required=True)
    hard_example_mining: HardExampleMining | None = api_field(required=True)
    template: PodTemplateSpec | None = api_field(required=True)
    hpa: HPA | None = api_field()


@dataclass(kw_only=True)
class CloudWorker(ApiType):
    model: ModelRef | None = api_field(required=True)
    template: PodTemplateSpec | None = api_field(required=True)
    hpa: HPA | None = api_field()


@dataclass(kw_only=True)
class JointInferenceServiceSpec(ApiType):
    edge_worker: EdgeWorker | None = api_field(required=True)
    cloud_worker: CloudWorker | None = api_field(required=True)


@dataclass(kw_only=True)
class JointInferenceServiceStatus(ApiType):
    conditions: list[ServiceCondition] | None = api_field()
    start_time: str | None = api_field(**DATE_TIME)
    active: int | None = api_field(minimum=0)
    failed: int | None = api_field(minimum=0)
    metrics: list[Metric] | None = api_field()


@dataclass(kw_only=True)
class JointInferenceService(Resource):
    GVR: ClassVar = JOINT_INFERENCE_SERVICES
    PRINTER_COLUMNS: ClassVar = SERVICE_COLUMNS
    SCHEMA_DESCRIPTION: ClassVar[str] = (
        "JointInferenceService runs a small model on an edge node and a big model in the cloud; hard examples "
        "found at the edge are sent to the cloud."
    )

    metadata: dict[str, Any] | None = required_metadata()
    spec: JointInferenceServiceSpec | None = api_field(required=True)
    status: JointInferenceServiceStatus | None = api_field()
