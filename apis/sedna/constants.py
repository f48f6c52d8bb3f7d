"""Names of Sedna's contract that the GM and the LC both use: the stages of a learning job, the condition types of
its stages, and the annotations the GM writes on a job (or on the copy it sends to an LC) for the LC to read.

``apis`` is the only layer both programs import, so the one definition lives here; ``v1alpha1``'s ``Stage`` and
``StageConditionType`` (the enums of the CRD schemas) are built from these.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "ACCESS_KEY_ID",
    "ANNOTATION_PREFIX",
    "COMPLETED",
    "CONDITION_TYPES",
    "CREDENTIAL_ANNOTATION",
    "DEPLOY",
    "EVAL",
    "FAILED",
    "MODEL_HOT_UPDATE_ANNOTATION",
    "MODEL_HOT_UPDATE_CONFIG_FILE",
    "MODEL_HOT_UPDATE_CONTAINER_PREFIX",
    "MODEL_HOT_UPDATE_HOST_PREFIX",
    "PRUNED_CONDITIONS_FIELD",
    "READY",
    "ROUND_FIELD",
    "RUNNING",
    "S3_ENDPOINT_KEY",
    "S3_USE_HTTPS_KEY",
    "SECRET_ACCESS_KEY",
    "STAGES",
    "STAGE_NODE_ANNOTATIONS",
    "STARTING",
    "TRAIN",
    "WAITING",
    "condition_offset",
    "stage_node_annotation",
]

# The stages of an IncrementalLearningJob / LifelongLearningJob, in order; the last condition's stage is the current one.
TRAIN = "Train"
EVAL = "Eval"
DEPLOY = "Deploy"
STAGES = (TRAIN, EVAL, DEPLOY)

# Condition types of a stage (IL/LL), also those of Reid and VideoAnalytics jobs.
WAITING = "Waiting"
READY = "Ready"
STARTING = "Starting"
RUNNING = "Running"
COMPLETED = "Completed"
FAILED = "Failed"
CONDITION_TYPES = (WAITING, READY, STARTING, RUNNING, COMPLETED, FAILED)

# Status fields of an IL/LL job beyond Go Sedna's (its status stays bounded: docs/globalmanager.md, "Rounds").
ROUND_FIELD = "round"
"""The job's current round: 1 from its first Train/Waiting, one more at each Train/Waiting the GM appends after."""
PRUNED_CONDITIONS_FIELD = "prunedConditions"
"""How many conditions of finished rounds the GM removed from ``status.conditions``."""


def condition_offset(status: object) -> int:
    """``status.prunedConditions`` (0 from a GM that prunes nothing): ``condition_offset(status) +
    len(conditions)`` is how many conditions the job has had, so the current (last) condition is number
    ``condition_offset(status) + len(conditions) - 1`` over the job's life, never reused."""
    value = status.get(PRUNED_CONDITIONS_FIELD) if isinstance(status, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

ANNOTATION_PREFIX = "sedna.io/"

CREDENTIAL_ANNOTATION = ANNOTATION_PREFIX + "credential"
"""On the copy of an object sent to an LC: the S3 credential of its ``spec.credentialName`` Secret, as JSON."""

# Keys of an S3 credential, the same in the Secret and in the ``sedna.io/credential`` JSON (Go Sedna's
# ``S3EndpointKey``, ``S3UseHTTPSKey``, ``AccessKeyID``, ``SecretAccessKey``).
S3_ENDPOINT_KEY = "s3-endpoint"
S3_USE_HTTPS_KEY = "s3-usehttps"
ACCESS_KEY_ID = "ACCESS_KEY_ID"
SECRET_ACCESS_KEY = "SECRET_ACCESS_KEY"


def stage_node_annotation(stage: str) -> str:
    """``sedna.io/<Stage>``: on a learning job, the node that stage's worker ran on (Eval's LC takes the deploy
    decision, Deploy's writes the hot update)."""
    return ANNOTATION_PREFIX + stage


STAGE_NODE_ANNOTATIONS = tuple(stage_node_annotation(stage) for stage in STAGES)

MODEL_HOT_UPDATE_ANNOTATION = ANNOTATION_PREFIX + "model-hot-update-config"
"""On an IncrementalLearningJob with hot update: the host path of the model config file the LC writes."""
MODEL_HOT_UPDATE_HOST_PREFIX = "/var/lib/sedna/model-hot-update"
"""Host directory under which every hot-update config file lives (the LC writes nowhere else)."""
MODEL_HOT_UPDATE_CONTAINER_PREFIX = "/model-hot-update"
"""Where the inference worker sees that host directory."""
MODEL_HOT_UPDATE_CONFIG_FILE = "model_config.json"
