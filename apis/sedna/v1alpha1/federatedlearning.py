"""FederatedLearningJob (``federatedlearningjobs.sedna.io``, fl) (Go ``federatedlearningjob_types.go``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...resources import FEDERATED_LEARNING_JOBS
from ...typed import ApiType, Resource, api_field
from .common import (
    AGE_COLUMN,
    DATE_TIME,
    ConditionStatus,
    DatasetRef,
    JobPhase,
    ModelRef,
    PodTemplateSpec,
    column,
)

__all__ = [
    "FederatedLearningJob",
    "FLJobSpec",
    "FLJobStatus",
    "FLJobCondition",
    "FLJobConditionType",
    "FLJobPhase",
    "AggregationWorker",
    "TrainingWorker",
    "Transmitter",
    "S3Transmitter",
    "WSTransmitter",
]

FLJobPhase = JobPhase


class FLJobConditionType:
    COMPLETE = "Complete"
    FAILED = "Failed"
    TRAINING = "Training"
    ALL = (COMPLETE, FAILED, TRAINING)


@dataclass(kw_only=True)
class AggregationWorker(ApiType):
    model: ModelRef | None = api_field(required=True)
    template: PodTemplateSpec | None = api_field(required=True)


@dataclass(kw_only=True)
class TrainingWorker(ApiType):
    dataset: DatasetRef | None = api_field(required=True)
    template: PodTemplateSpec | None = api_field(required=True)


@dataclass(kw_only=True)
class S3Transmitter(ApiType):
    agg_data_path: str | None = api_field(required=True, doc="S3 path where aggregation data is exchanged.")
    credential_name: str | None = api_field()


@dataclass(kw_only=True)
class WSTransmitter(ApiType):
    """Exchange aggregation data over websocket (the default); it has no settings."""


@dataclass(kw_only=True)
class Transmitter(ApiType):
    s3: S3Transmitter | None = api_field()
    ws: WSTransmitter | None = api_field()


@dataclass(kw_only=True)
class FLJobSpec(ApiType):
    aggregation_worker: AggregationWorker | None = api_field(required=True)
    training_workers: list[TrainingWorker] | None = api_field(required=True)
    pretrained_model: ModelRef | None = api_field()
    transmitter: Transmitter | None = api_field()


@dataclass(kw_only=True)
class FLJobCondition(ApiType):
    type: str | None = api_field(required=True)
    status: str | None = api_field(required=True, enum=list(ConditionStatus.ALL))
    last_probe_time: str | None = api_field(**DATE_TIME)
    last_heartbeat_time: str | None = api_field(**DATE_TIME)
    reason: str | None = api_field()
    message: str | None = api_field()


@dataclass(kw_only=True)
class FLJobStatus(ApiType):
    conditions: list[FLJobCondition] | None = api_field()
    start_time: str | None = api_field(**DATE_TIME)
    completion_time: str | None = api_field(**DATE_TIME)
    active: int | None = api_field(minimum=0)
    succeeded: int | None = api_field(minimum=0)
    failed: int | None = api_field(minimum=0)
    phase: str | None = api_field(enum=list(JobPhase.ALL))


@dataclass(kw_only=True)
class FederatedLearningJob(Resource):
    GVR: ClassVar = FEDERATED_LEARNING_JOBS
    PRINTER_COLUMNS: ClassVar = (column("Phase", ".status.phase"), AGE_COLUMN)
    SCHEMA_DESCRIPTION: ClassVar[str] = (
        "FederatedLearningJob trains a model on several edge nodes and aggregates the updates in the cloud."
    )

    spec: FLJobSpec | None = api_field(required=True)
    status: FLJobStatus | None = api_field()
