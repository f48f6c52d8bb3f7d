"""Types and constants shared by the Sedna kinds (Go: ``pkg/apis/sedna/v1alpha1/common_types.go`` and the
condition/phase constants repeated in each ``*_types.go``).

Pod templates and deployment specs stay plain dicts (``PodTemplateSpec``/``DeploymentSpec`` below); their schema
is an object with ``x-kubernetes-preserve-unknown-fields: true``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...typed import ApiType, api_field
from .. import constants

__all__ = [
    "PodTemplateSpec",
    "DeploymentSpec",
    "TRAIN_TRIGGER_METRICS",
    "TRIGGER_OPERATORS",
    "DATE_TIME",
    "ConditionStatus",
    "ServiceConditionType",
    "StageConditionType",
    "Stage",
    "JobPhase",
    "Metric",
    "ParaSpec",
    "ModelRef",
    "DatasetRef",
    "HardExampleMining",
    "TrackingWorker",
    "ServiceCondition",
    "JobCondition",
    "StageCondition",
    "DeploymentSpecFields",
    "JobSpecFields",
    "required_metadata",
    "column",
    "AGE_COLUMN",
    "LAST_CONDITION_COLUMN",
]

PodTemplateSpec = dict[str, Any]
"""A ``v1.PodTemplateSpec`` kept as the plain dict the API server serves."""
DeploymentSpec = dict[str, Any]
"""An ``apps/v1`` ``DeploymentSpec`` kept as a plain dict."""

TRIGGER_OPERATORS = (">=", ">", "=", "==", "<=", "<", "!=", "ge", "gt", "eq", "le", "lt", "ne")
"""Comparison operators a trigger condition accepts (symbols and their word aliases)."""
TRAIN_TRIGGER_METRICS = ("num_of_samples",)
"""The metrics an LC evaluates a train trigger on (Sedna's LC: the round's new training samples), each a number."""

# extra schema keywords of api_field (typed as its **schema, so that mypy does not match them to its named options)
DATE_TIME: dict[str, Any] = {"format": "date-time"}


class ConditionStatus:
    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"
    ALL = (TRUE, FALSE, UNKNOWN)


class ServiceConditionType:
    """Condition types of JointInference, FeatureExtraction, ObjectSearch and ObjectTracking services."""

    PENDING = "Pending"
    FAILED = "Failed"
    RUNNING = "Running"
    ALL = (PENDING, FAILED, RUNNING)


class StageConditionType:
    """Condition types of the IL and LL stages, and of Reid and VideoAnalytics jobs (``apis.sedna.constants``)."""

    WAITING = constants.WAITING
    READY = constants.READY
    STARTING = constants.STARTING
    RUNNING = constants.RUNNING
    COMPLETED = constants.COMPLETED
    FAILED = constants.FAILED
    ALL = constants.CONDITION_TYPES


class Stage:
    """Stages of an incremental or lifelong learning job (``apis.sedna.constants``); the last condition's stage is the
    current one."""

    TRAIN = constants.TRAIN
    EVAL = constants.EVAL
    DEPLOY = constants.DEPLOY
    ALL = constants.STAGES


class JobPhase:
    """``status.phase`` of FederatedLearning, Reid and VideoAnalytics jobs."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    ALL = (PENDING, RUNNING, SUCCEEDED, FAILED)


# --------------------------------------------------------------------------------------- small shapes


@dataclass(kw_only=True)
class Metric(ApiType):
    """A ``key``/``value`` pair of strings (Go ``Metric`` and ``ParaSpec`` have this one shape)."""

    key: str | None = api_field(required=True)
    value: str | None = api_field(required=True)


ParaSpec = Metric


@dataclass(kw_only=True)
class ModelRef(ApiType):
    """A reference to a Model in the same namespace (Go: SmallModel, BigModel, TrainModel, InitialModel …)."""

    name: str | None = api_field(required=True)


@dataclass(kw_only=True)
class DatasetRef(ApiType):
    """A reference to a Dataset in the same namespace (Go: TrainDataset)."""

    name: str | None = api_field(required=True)


@dataclass(kw_only=True)
class HardExampleMining(ApiType):
    name: str | None = api_field(required=True)
    parameters: list[ParaSpec] | None = api_field()


@dataclass(kw_only=True)
class TrackingWorker(ApiType):
    template: PodTemplateSpec | None = api_field(required=True)


# ------------------------------------------------------------------------------------------ conditions


@dataclass(kw_only=True)
class ServiceCondition(ApiType):
    """A condition of a JointInference, FeatureExtraction, ObjectSearch or ObjectTracking service."""

    type: str | None = api_field(required=True)
    status: str | None = api_field(required=True, enum=list(ConditionStatus.ALL))
    last_heartbeat_time: str | None = api_field(**DATE_TIME)
    last_transition_time: str | None = api_field(**DATE_TIME)
    reason: str | None = api_field()
    message: str | None = api_field()


@dataclass(kw_only=True)
class JobCondition(ServiceCondition):
    """A condition of a Reid or VideoAnalytics job: a service condition plus ``data`` (a JSON string)."""

    data: str | None = api_field(doc="The JSON data related to this condition.")


@dataclass(kw_only=True)
class StageCondition(JobCondition):
    """A condition of an incremental or lifelong learning job: ``(stage, type)``, appended, the last is current."""

    stage: str | None = api_field(required=True, enum=list(Stage.ALL))


# --------------------------------------------------------------------------- inlined Kubernetes specs


@dataclass(kw_only=True)
class DeploymentSpecFields(ApiType):
    """The fields of an inlined ``apps/v1`` DeploymentSpec (Go ``appsv1.DeploymentSpec `json:",inline"```)."""

    replicas: int | None = api_field(minimum=0)
    selector: dict[str, Any] | None = api_field(required=True, doc="A metav1.LabelSelector; required, as in apps/v1.")
    template: PodTemplateSpec | None = api_field(required=True)
    strategy: dict[str, Any] | None = api_field()
    min_ready_seconds: int | None = api_field(minimum=0)
    revision_history_limit: int | None = api_field(minimum=0)
    paused: bool | None = api_field()
    progress_deadline_seconds: int | None = api_field(minimum=0)


@dataclass(kw_only=True)
class JobSpecFields(ApiType):
    """The fields of an inlined ``batch/v1`` JobSpec (Go ``batchv1.JobSpec `json:",inline"```)."""

    parallelism: int | None = api_field(minimum=0)
    completions: int | None = api_field(minimum=0)
    active_deadline_seconds: int | None = api_field(minimum=0)
    pod_failure_policy: dict[str, Any] | None = api_field()
    success_policy: dict[str, Any] | None = api_field()
    backoff_limit: int | None = api_field(minimum=0)
    backoff_limit_per_index: int | None = api_field(minimum=0)
    max_failed_indexes: int | None = api_field(minimum=0)
    selector: dict[str, Any] | None = api_field()
    manual_selector: bool | None = api_field()
    template: PodTemplateSpec | None = api_field(required=True)
    ttl_seconds_after_finished: int | None = api_field(minimum=0)
    completion_mode: str | None = api_field()
    suspend: bool | None = api_field()
    pod_replacement_policy: str | None = api_field()
    managed_by: str | None = api_field()


def required_metadata() -> Any:
    """The root ``metadata`` field of a kind whose Go ``ObjectMeta`` has no ``omitempty``: its CRD lists
    ``metadata`` as required, as Sedna's generated CRD does."""
    return api_field(required=True, replace_schema={"type": "object"})


# ------------------------------------------------------------------------------------ printer columns


def column(name: str, json_path: str, type: str = "string", priority: int | None = None) -> dict[str, Any]:
    """One ``additionalPrinterColumns`` entry of a CRD version."""
    col: dict[str, Any] = {"name": name, "type": type, "jsonPath": json_path}
    if priority is not None:
        col["priority"] = priority
    return col


AGE_COLUMN = column("Age", ".metadata.creationTimestamp", "date")
LAST_CONDITION_COLUMN = column("Status", ".status.conditions[-1].type")
