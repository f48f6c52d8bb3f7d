"""Model (``models.sedna.io``): a stored AI model (Go ``model_types.go``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...resources import MODELS
from ...typed import ApiType, Resource, api_field
from .common import AGE_COLUMN, DATE_TIME, Metric, column

__all__ = ["Model", "ModelSpec", "ModelStatus"]


@dataclass(kw_only=True)
class ModelSpec(ApiType):
    url: str | None = api_field(required=True, doc="Where the model lives (a local path or s3:// URL).")
    format: str | None = api_field(required=True, doc="Model format, e.g. pb, ckpt, pkl, onnx.")
    device_soc_versions: list[str] | None = api_field("device_soc_versions", doc="SoC versions the model runs on.")
    credential_name: str | None = api_field(doc="Secret holding the storage credentials for url.")


@dataclass(kw_only=True)
class ModelStatus(ApiType):
    update_time: str | None = api_field(**DATE_TIME)
    metrics: list[Metric] | None = api_field()


@dataclass(kw_only=True)
class Model(Resource):
    GVR: ClassVar = MODELS
    PRINTER_COLUMNS: ClassVar = (column("Format", ".spec.format"), AGE_COLUMN)
    SCHEMA_DESCRIPTION: ClassVar[str] = "Model describes an AI model that workers load or produce."

    spec: ModelSpec | None = api_field(required=True)
    status: ModelStatus | None = api_field()
