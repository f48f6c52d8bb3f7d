"""FeatureExtractionService (``featureextractionservices.sedna.io``, fe) (Go
``featureextractionservice_types.go``): a Deployment spec inlined with a model reference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...resources import FEATURE_EXTRACTION_SERVICES
from ...typed import Resource, api_field
from .common import (
    DeploymentSpecFields,
    ModelRef,
    ServiceCondition,
    ServiceConditionType,
    required_metadata,
)
from .jointinference import SERVICE_COLUMNS, JointInferenceServiceStatus

__all__ = [
    "FeatureExtractionService",
    "FeatureExtractionServiceSpec",
    "FeatureExtractionServiceStatus",
    "FeatureExtractionServiceCondition",
    "FeatureExtractionServiceConditionType",
]

FeatureExtractionServiceCondition = ServiceCondition
FeatureExtractionServiceConditionType = ServiceConditionType


@dataclass(kw_only=True)
class FeatureExtractionServiceSpec(DeploymentSpecFields):
    kafka_support: bool | None = api_field()
    model: ModelRef | None = api_field(required=True)


FeatureExtractionServiceStatus = JointInferenceServiceStatus  # the same status as every Deployment-run service


@dataclass(kw_only=True)
class FeatureExtractionService(Resource):
    GVR: ClassVar = FEATURE_EXTRACTION_SERVICES
    PRINTER_COLUMNS: ClassVar = SERVICE_COLUMNS
    SCHEMA_DESCRIPTION: ClassVar[str] = "FeatureExtractionService runs a feature extraction model as a Deployment."

    metadata: dict[str, Any] | None = required_metadata()
    spec: FeatureExtractionServiceSpec | None = api_field(required=True)
    status: FeatureExtractionServiceStatus | None = api_field()
