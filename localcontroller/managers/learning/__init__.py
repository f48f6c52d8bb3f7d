"""What the incremental and lifelong learning managers share: reading the job's conditions, the round state kept in
SQLite, the data files a round writes, model descriptions and copies, and the manager skeleton (``JobManager``)."""

from .conditions import CurrentStage, condition_models, current_stage, eval_metrics
from .datafiles import DataFiles, dataset_index, write_samples
from .errors import NotReady, StageFailed
from .jobmanager import JobManager, JobRecord, upstream_message
from .models import go_model, matching_model, model_of
from .places import PATH_OUTSIDE_JOB, RULE, JobPlaces, PathOutsideJob
from .roundstate import EVAL_VERSIONS_KEPT, RoundState

__all__ = [
    "EVAL_VERSIONS_KEPT",
    "PATH_OUTSIDE_JOB",
    "CurrentStage",
    "DataFiles",
    "JobManager",
    "JobPlaces",
    "JobRecord",
    "NotReady",
    "PathOutsideJob",
    "RULE",
    "RoundState",
    "StageFailed",
    "condition_models",
    "current_stage",
    "dataset_index",
    "eval_metrics",
    "go_model",
    "matching_model",
    "model_of",
    "upstream_message",
    "write_samples",
]
