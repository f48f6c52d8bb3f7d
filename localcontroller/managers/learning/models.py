"""Models as the LC reports them: Go's ``runtime.Model`` (``{"format", "url", "device_soc_versions"?, "metrics"?,
..., "classes"}``), built from a Model object or from a worker's output, and Go's choice of the trained model that
fits a reference model (``getModelFromJobConditions``' ``getModel``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["go_model", "matching_model", "model_of"]

# runtime.Model's JSON fields after format/url/devices: (key, accepted type); all omitempty but "classes".
_OPTIONAL: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("metrics", dict),
    ("history_metric", (int, float)),
    ("current_metric", dict),
)
_COUNTS = ("number_of_labeled_unseen_sample", "number_of_model", "number_of_unseen_sample")


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def go_model(model: Mapping[str, Any]) -> dict[str, Any]:
    """``model`` as Go marshals a ``runtime.Model`` decoded from it: ``format`` and ``url`` always, ``classes``
    always (``null`` when absent), the other known fields only when set; unknown fields dropped."""
    out: dict[str, Any] = {"format": str(model.get("format") or ""), "url": str(model.get("url") or "")}
    devices = _strings(model.get("device_soc_versions"))
    if devices:
        out["device_soc_versions"] = devices
    for key, kind in _OPTIONAL:
        value = model.get(key)
        if value and isinstance(value, kind) and not isinstance(value, bool):
            out[key] = value
    classes = model.get("classes")
    out["classes"] = _strings(classes) if isinstance(classes, list) else None
    for key in _COUNTS:
        value = model.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value:
            out[key] = value
    return out


def model_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A Model object's ``{format, url, device_soc_versions?}`` (Go ``loadTrainModel``/``loadDeployModel``)."""
    spec = obj.get("spec") or {}
    out: dict[str, Any] = {"format": str(spec.get("format") or ""), "url": str(spec.get("url") or "")}
    devices = _strings(spec.get("device_soc_versions"))
    if devices:
        out["device_soc_versions"] = devices
    return out


def matching_model(reference: Mapping[str, Any], models: Sequence[Mapping[str, Any]] | None
                   ) -> dict[str, Any] | None:
    """The first of ``models`` with the reference's format (and, when the reference lists devices and the model
    names exactly one, one of those devices); ``None`` when none fits."""
    wanted = _strings(reference.get("device_soc_versions"))
    for model in models or ():
        if model.get("format") != reference.get("format"):
            continue
        devices = _strings(model.get("device_soc_versions"))
        if wanted and len(devices) == 1:
            if devices[0] in wanted:
                return dict(model)
        else:
            return dict(model)
    return None
