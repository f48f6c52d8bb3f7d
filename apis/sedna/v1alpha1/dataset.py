"""Dataset (``datasets.sedna.io``): a sample index file on an edge node (Go ``dataset_types.go``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...resources import DATASETS
from ...typed import ApiType, Resource, api_field
from .common import AGE_COLUMN, DATE_TIME, ConditionStatus, column

__all__ = ["Dataset", "DatasetCondition", "DatasetSpec", "DatasetStatus", "DATASET_FORMATS"]

DATASET_FORMATS = ("txt", "csv")
"""Index formats the LocalController can count samples in (the schema does not restrict ``format``)."""


@dataclass(kw_only=True)
class DatasetSpec(ApiType):
    url: str | None = api_field(required=True, doc="Where the dataset index lives (a local path or s3:// URL).")
    format: str | None = api_field(required=True, doc="Index format, e.g. txt or csv.")
    node_name: str | None = api_field(required=True, doc="The node whose LocalController monitors the dataset.")
    credential_name: str | None = api_field(doc="Secret holding the storage credentials for url.")


@dataclass(kw_only=True)
class DatasetCondition(ApiType):
    """A condition of a Dataset (not in Go Sedna): ``Ready`` is False, with the LocalController's reason (e.g.
    ``URLNotFound``), while the node cannot count the samples, and True again once it does."""

    type: str | None = api_field()
    status: str | None = api_field(enum=list(ConditionStatus.ALL))
    last_transition_time: str | None = api_field(**DATE_TIME)
    reason: str | None = api_field()
    message: str | None = api_field()


@dataclass(kw_only=True)
class DatasetStatus(ApiType):
    update_time: str | None = api_field(**DATE_TIME)
    number_of_samples: int | None = api_field(required=True, minimum=0)
    conditions: list[DatasetCondition] | None = api_field(
        doc="Ready=False with a reason while the node cannot count the samples (an extension of Sedna's API).")


@dataclass(kw_only=True)
class Dataset(Resource):
    """Dataset describes a set of samples that training and evaluation workers read."""

    GVR: ClassVar = DATASETS
    PRINTER_COLUMNS: ClassVar = (
        column("Format", ".spec.format"),
        column("Samples", ".status.numberOfSamples", "integer"),
        AGE_COLUMN,
    )
    SCHEMA_DESCRIPTION: ClassVar[str] = "Dataset describes a set of samples that training and evaluation workers read."

    spec: DatasetSpec | None = api_field(required=True)
    status: DatasetStatus | None = api_field()
