"""ElasticAIJob (``elasticaijobs.elasticdl.org``, eaijob): an ElasticDL training job.

The spec follows ElasticDL's operator design: ``jobArgs`` are master flags written ``"--flag value"``; ``master``,
``ps`` and ``worker`` describe each replica type with ElasticDL's own snake_case names (``resource_request``,
``resource_limit``, …) in the same ``key=value,…`` syntax as the ElasticDL client tool
(``cpu=1,memory=1024Mi``, ``host_path=/data,mount_path=/data``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...resources import ELASTIC_AI_JOBS
from ...typed import ApiType, Resource, api_field

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

JOB_ARG_PATTERN = r"^--[A-Za-z0-9_]+\s+\S.*$"
"""One ``jobArgs`` element: ``--flag value``."""

INVALID_SPEC_REASON = "InvalidSpec"
"""Reason of the ``Failed`` condition and of the Warning event when a spec cannot be turned into a master pod."""


class ElasticAIJobPhase:
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    ALL = (PENDING, RUNNING, SUCCEEDED, FAILED)


class ElasticAIJobConditionType:
    CREATED = "Created"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    ALL = (CREATED, RUNNING, SUCCEEDED, FAILED)


class ReplicaType:
    MASTER = "master"
    WORKER = "worker"
    PS = "ps"
    ALL = (MASTER, WORKER, PS)


@dataclass(kw_only=True)
class ReplicaSpec(ApiType):
    """One replica type (master, ps or worker), as the ElasticDL client tool's flags describe it."""

    image: str | None = api_field(doc="Container image.")
    priority: str | None = api_field(doc="Pod priority, e.g. high or high=0.5 (a fraction of the replicas).")
    resource_request: str | None = api_field("resource_request", doc="e.g. cpu=1,memory=1024Mi")
    resource_limit: str | None = api_field("resource_limit", doc="e.g. cpu=2,gpu=1,memory=2048Mi")
    volume: str | None = api_field(doc="e.g. host_path=/data,mount_path=/data")
    count: int | None = api_field(minimum=0, doc="Number of replicas.")


@dataclass(kw_only=True)
class ElasticAIJobSpec(ApiType):
    job_args: list[str] | None = api_field(
        doc='Master flags, each "--flag value".', items={"type": "string", "pattern": JOB_ARG_PATTERN}
    )
    master: ReplicaSpec | None = api_field(doc="The master pod; its absence is reported as InvalidSpec.")
    ps: ReplicaSpec | None = api_field()
    worker: ReplicaSpec | None = api_field()


@dataclass(kw_only=True)
class ElasticAIJobCondition(ApiType):
    type: str | None = api_field(required=True, enum=list(ElasticAIJobConditionType.ALL))
    status: str | None = api_field(required=True, enum=["True", "False", "Unknown"])
    reason: str | None = api_field()
    message: str | None = api_field()
    last_transition_time: str | None = api_field(format="date-time")


@dataclass(kw_only=True)
class ReplicaStatus(ApiType):
    active: int | None = api_field(minimum=0)
    succeeded: int | None = api_field(minimum=0)
    failed: int | None = api_field(minimum=0)


@dataclass(kw_only=True)
class ReplicaStatuses(ApiType):
    master: ReplicaStatus | None = api_field()
    worker: ReplicaStatus | None = api_field()
    ps: ReplicaStatus | None = api_field()


@dataclass(kw_only=True)
class ElasticAIJobStatus(ApiType):
    phase: str | None = api_field(enum=list(ElasticAIJobPhase.ALL))
    conditions: list[ElasticAIJobCondition] | None = api_field()
    start_time: str | None = api_field(format="date-time")
    completion_time: str | None = api_field(format="date-time")
    replica_statuses: ReplicaStatuses | None = api_field()
    observed_generation: int | None = api_field(
        minimum=0, doc="The metadata.generation the controller has acted on (the generation whose master runs)."
    )


@dataclass(kw_only=True)
class ElasticAIJob(Resource):
    GVR: ClassVar = ELASTIC_AI_JOBS
    PRINTER_COLUMNS: ClassVar = (
        {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    )
    SCHEMA_DESCRIPTION: ClassVar[str] = "ElasticAIJob runs an ElasticDL training job: a master pod that manages its workers and parameter servers."

    spec: ElasticAIJobSpec | None = api_field(required=True)
    status: ElasticAIJobStatus | None = api_field()
