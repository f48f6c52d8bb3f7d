"""IncrementalLearningJob (``incrementallearningjobs.sedna.io``, il/ij) (Go ``incrementallearningjob_types.go``).

The job cycles Train → Eval → Deploy; each step appends a ``StageCondition`` and the last one is the current
state. ``Trigger``/``Timer``/``TriggerCondition`` are shared with LifelongLearningJob (Go ``LLTrigger`` …).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...resources import INCREMENTAL_LEARNING_JOBS
from ...typed import ApiType, Resource, api_field
from .common import (
    AGE_COLUMN,
    DATE_TIME,
    TRIGGER_OPERATORS,
    HardExampleMining,
    ModelRef,
    PodTemplateSpec,
    Stage,
    StageCondition,
    StageConditionType,
    column,
    required_metadata,
)

__all__ = [
    "IncrementalLearningJob",
    "ILJobSpec",
    "ILJobStatus",
    "ILJobCondition",
    "ILJobStageConditionType",
    "ILJobStage",
    "ILDataset",
    "TrainSpec",
    "EvalSpec",
    "DeploySpec",
    "DeployModel",
    "Trigger",
    "Timer",
    "TriggerCondition",
    "PRUNED_DOC",
    "ROUND_DOC",
    "STAGE_COLUMNS",
]

ILJobCondition = StageCondition
ILJobStageConditionType = StageConditionType
ILJobStage = Stage

STAGE_COLUMNS = (
    column("Round", ".status.round", "integer"),
    column("Stage", ".status.conditions[-1].stage"),
    column("Status", ".status.conditions[-1].type"),
    AGE_COLUMN,
)
"""Printer columns of the IL and LL jobs: the round, the current stage and its state (the last condition)."""

_CLOCK = r"^([01]?[0-9]|2[0-4]):[0-5][0-9]$"


@dataclass(kw_only=True)
class Timer(ApiType):
    """A daily window ``start``–``end`` (``HH:MM``; a window may wrap around midnight)."""

    start: str | None = api_field(required=True, pattern=_CLOCK)
    end: str | None = api_field(required=True, pattern=_CLOCK)


@dataclass(kw_only=True)
class TriggerCondition(ApiType):
    """``metric operator threshold``, e.g. ``num_of_samples > 500`` (Go ``Condition``/``LLCondition``)."""

    operator: str | None = api_field(required=True, enum=list(TRIGGER_OPERATORS))
    threshold: float | None = api_field(required=True)
    metric: str | None = api_field(required=True, doc="Metric name; metric[i] indexes a list-valued metric.")


@dataclass(kw_only=True)
class Trigger(ApiType):
    check_period_seconds: int | None = api_field(minimum=1)
    timer: Timer | None = api_field()
    condition: TriggerCondition | None = api_field(required=True)


@dataclass(kw_only=True)
class ILDataset(ApiType):
    name: str | None = api_field(required=True)
    train_prob: float | None = api_field(required=True, minimum=0, maximum=1, doc="Fraction of samples used for training.")


@dataclass(kw_only=True)
class TrainSpec(ApiType):
    template: PodTemplateSpec | None = api_field(required=True)
    trigger: Trigger | None = api_field(required=True)


@dataclass(kw_only=True)
class EvalSpec(ApiType):
    initial_eval_model: ModelRef | None = api_field()
    template: PodTemplateSpec | None = api_field(required=True)


@dataclass(kw_only=True)
class DeployModel(ApiType):
    name: str | None = api_field(required=True)
    hot_update_enabled: bool | None = api_field(doc="Reload the model in place instead of restarting the worker.")
    poll_period_seconds: int | None = api_field(
        minimum=1, default=60, doc="How often the worker polls the model config file (hot update only)."
    )


@dataclass(kw_only=True)
class DeploySpec(ApiType):
    model: DeployModel | None = api_field(required=True)
    trigger: Trigger | None = api_field(required=True)
    hard_example_mining: HardExampleMining | None = api_field(required=True)
    template: PodTemplateSpec | None = api_field(required=True)


@dataclass(kw_only=True)
class ILJobSpec(ApiType):
    dataset: ILDataset | None = api_field(required=True)
    initial_model: ModelRef | None = api_field(required=True)
    train_spec: TrainSpec | None = api_field(required=True)
    eval_spec: EvalSpec | None = api_field(required=True)
    deploy_spec: DeploySpec | None = api_field(required=True)
    credential_name: str | None = api_field(doc="Secret holding the storage credentials for outputDir.")
    output_dir: str | None = api_field(required=True)


ROUND_DOC = "The job's current round (beyond Sedna): 1 from the first Train/Waiting, +1 at each next one."
PRUNED_DOC = ("How many conditions of finished rounds were removed from conditions (beyond Sedna: each finished "
              "round is an Event on the job; the latest Completed of each stage is kept).")


@dataclass(kw_only=True)
class ILJobStatus(ApiType):
    conditions: list[StageCondition] | None = api_field()
    round: int | None = api_field(minimum=0, doc=ROUND_DOC)
    pruned_conditions: int | None = api_field(minimum=0, doc=PRUNED_DOC)
    start_time: str | None = api_field(**DATE_TIME)
    completion_time: str | None = api_field(**DATE_TIME)


@dataclass(kw_only=True)
class IncrementalLearningJob(Resource):
    GVR: ClassVar = INCREMENTAL_LEARNING_JOBS
    PRINTER_COLUMNS: ClassVar = STAGE_COLUMNS
    SCHEMA_DESCRIPTION: ClassVar[str] = (
        "IncrementalLearningJob retrains a deployed model on new samples when a trigger fires, evaluates it "
        "and deploys it when it is better."
    )

    metadata: dict[str, Any] | None = required_metadata()
    spec: ILJobSpec | None = api_field(required=True)
    status: ILJobStatus | None = api_field()
