"""Typed view of ElasticDL's ``elasticdl.org/v1alpha1`` ElasticAIJob (see ``elasticaijob``)."""

from __future__ import annotations

from .elasticaijob import (
    INVALID_SPEC_REASON,
    JOB_ARG_PATTERN,
    ElasticAIJob,
    ElasticAIJobCondition,
    ElasticAIJobConditionType,
    ElasticAIJobPhase,
    ElasticAIJobSpec,
    ElasticAIJobStatus,
    ReplicaSpec,
    ReplicaStatus,
    ReplicaStatuses,
    ReplicaType,
)

__all__ = [
    "ElasticAIJob",
    "ElasticAIJobSpec",
    "ElasticAIJobStatus",
    "ElasticAIJobCondition",
    "ElasticAIJobConditionType",
    "ElasticAIJobPhase",
    "ReplicaSpec",
    "ReplicaStatus",
    "ReplicaStatuses",
    "ReplicaType",
    "JOB_ARG_PATTERN",
    "INVALID_SPEC_REASON",
]
