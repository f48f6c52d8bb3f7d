"""LifelongLearningJob (``lifelonglearningjobs.sedna.io``, ll) (Go ``lifelonglearningjob_types.go``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...resources import LIFELONG_LEARNING_JOBS
from ...typed import ApiType, Resource, api_field
from .common import DATE_TIME, PodTemplateSpec, Stage, StageCondition, StageConditionType, required_metadata
from .incrementallearning import (
    PRUNED_DOC,
    ROUND_DOC,
    STAGE_COLUMNS,
    ILDataset,
    Timer,
    Trigger,
    TriggerCondition,
)

__all__ = [
    "LifelongLearningJob",
    "LLJobSpec",
    "LLJobStatus",
    "LLJobCondition",
    "LLJobStageConditionType",
    "LLJobStage",
    "LLDataset",
    "LLTrainSpec",
    "LLEvalSpec",
    "LLDeploySpec",
    "LLTrigger",
    "LLTimer",
    "LLCondition",
    "KnowledgeBase",
    "AIModels",
    "AIModel",
    "AIClasses",
    "Samples",
    "OverallStatus",
]

LLJobCondition = StageCondition
LLJobStageConditionType = StageConditionType
LLJobStage = Stage
LLDataset = ILDataset
LLTrigger = Trigger
LLTimer = Timer
LLCondition = TriggerCondition


@dataclass(kw_only=True)
class LLTrainSpec(ApiType):
    template: PodTemplateSpec | None = api_field(required=True)
    trigger: Trigger | None = api_field(required=True)


@dataclass(kw_only=True)
class LLEvalSpec(ApiType):
    """A worker pod template (the eval and deploy specs of a lifelong learning job have this one shape)."""

    template: PodTemplateSpec | None = api_field(required=True)


LLDeploySpec = LLEvalSpec


@dataclass(kw_only=True)
class LLJobSpec(ApiType):
    dataset: ILDataset | None = api_field(required=True)
    train_spec: LLTrainSpec | None = api_field(required=True)
    eval_spec: LLEvalSpec | None = api_field(required=True)
    deploy_spec: LLDeploySpec | None = api_field(required=True)
    credential_name: str | None = api_field(doc="Secret holding the storage credentials for outputDir.")
    output_dir: str | None = api_field(required=True)


@dataclass(kw_only=True)
class AIModel(ApiType):
    model_id: str | None = api_field("modelID", required=True)
    average_precision: float | None = api_field(required=True)
    number_of_train_samples: int | None = api_field(required=True)


@dataclass(kw_only=True)
class AIModels(ApiType):
    number_of_ai_models: int | None = api_field("numberOfAIModels", required=True)
    list_of_ai_models: list[AIModel] | None = api_field("listOfAIModels")


@dataclass(kw_only=True)
class AIClasses(ApiType):
    number_of_ai_classes: int | None = api_field("numberOfAIClasses", required=True)
    list_of_ai_classes: list[str] | None = api_field("listOfAIClasses")


@dataclass(kw_only=True)
class Samples(ApiType):
    number_of_labeled_unseen_sample: int | None = api_field(required=True)
    number_of_unseen_sample: int | None = api_field(required=True)


@dataclass(kw_only=True)
class KnowledgeBase(ApiType):
    ai_models: AIModels | None = api_field("AIModels", required=True)
    ai_classes: AIClasses | None = api_field("AIClasses", required=True)
    samples: Samples | None = api_field(required=True)


@dataclass(kw_only=True)
class OverallStatus(ApiType):
    """Knowledge-base totals carried by a LifelongLearningJobList (``overallStatus``), not by a job."""

    number_of_unseen_sample: int | None = api_field()
    number_of_new_unseen_sample: int | None = api_field()
    number_of_ai_models: int | None = api_field("numberOfAIModels")
    percent_of_new_ai_models: float | None = api_field("percentOfNewAIModels")
    number_of_classes: int | None = api_field()
    percent_of_new_classes: float | None = api_field()


@dataclass(kw_only=True)
class LLJobStatus(ApiType):
    conditions: list[StageCondition] | None = api_field()
    round: int | None = api_field(minimum=0, doc=ROUND_DOC)
    pruned_conditions: int | None = api_field(minimum=0, doc=PRUNED_DOC)
    knowledge_base: KnowledgeBase | None = api_field()
    start_time: str | None = api_field(**DATE_TIME)
    completion_time: str | None = api_field(**DATE_TIME)


@dataclass(kw_only=True)
class LifelongLearningJob(Resource):
    GVR: ClassVar = LIFELONG_LEARNING_JOBS
    PRINTER_COLUMNS: ClassVar = STAGE_COLUMNS
    SCHEMA_DESCRIPTION: ClassVar[str] = (
        "LifelongLearningJob keeps learning unseen tasks at the edge, with a knowledge base of models in the cloud."
    )

    metadata: dict[str, Any] | None = required_metadata()
    spec: LLJobSpec | None = api_field(required=True)
    status: LLJobStatus | None = api_field()
