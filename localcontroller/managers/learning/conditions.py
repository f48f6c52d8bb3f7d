"""An IL/LL job's ``status.conditions`` as Sedna's LC reads them (Go ``getLatestCondition``,
``getModelsFromJobConditions``, ``getEvalResult``).

Conditions are appended and the last one is the job's current stage (our GM prunes finished rounds but keeps the
latest ``<Stage>/Completed`` conditions these functions look for). Each condition's ``data`` is a JSON string
``{"input": {"models", "dataURL", ...}, "output": {"models": [...]}}`` written by the GM from an LC report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from apis.sedna.constants import condition_offset

__all__ = ["CurrentStage", "condition_models", "current_stage", "eval_metrics"]


@dataclass(frozen=True)
class CurrentStage:
    """The job's last condition. ``instance`` tells this condition apart from every other one of the job (its
    position and transition time), so that an action answers each stage instance once, whatever the GM resends."""

    stage: str
    type: str
    instance: str


def _conditions(job: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    conditions = (job.get("status") or {}).get("conditions") or []
    return [c for c in conditions if isinstance(c, Mapping)] if isinstance(conditions, list) else []


def current_stage(job: Mapping[str, Any]) -> CurrentStage | None:
    """The last condition, or ``None`` while the GM has appended none. Its position counts the conditions our GM
    pruned from finished rounds (``status.prunedConditions``), so a position is never reused."""
    conditions = _conditions(job)
    if not conditions:
        return None
    last = conditions[-1]
    position = condition_offset(job.get("status")) + len(conditions) - 1
    instance = f"{position}/{last.get('lastTransitionTime') or ''}"
    return CurrentStage(str(last.get("stage") or ""), str(last.get("type") or ""), instance)


def _data(condition: Mapping[str, Any]) -> Mapping[str, Any] | None:
    raw = condition.get("data")
    if isinstance(raw, Mapping):
        return raw
    if not isinstance(raw, str | bytes) or not raw:
        return None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return data if isinstance(data, Mapping) else None


def condition_models(job: Mapping[str, Any], stage: str, ctype: str, part: str = "output") -> list[dict[str, Any]] | None:
    """``data.<part>.models`` of the latest ``(stage, ctype)`` condition that has a ``<part>`` (Go
    ``getModelsFromJobConditions``): ``None`` when there is none, else the list (maybe empty; entries that are no
    objects dropped)."""
    for condition in reversed(_conditions(job)):
        if condition.get("stage") != stage or condition.get("type") != ctype:
            continue
        data = _data(condition)
        section = data.get(part) if data is not None else None
        if not isinstance(section, Mapping):
            continue
        models = section.get("models")
        return [dict(m) for m in models if isinstance(m, Mapping)] if isinstance(models, list) else []
    return None


def eval_metrics(models: Sequence[Mapping[str, Any]]) -> list[dict[str, list[float]]]:
    """Each model's ``metrics`` as ``metric → list of numbers`` (Go ``getEvalResult``); ``ValueError`` naming the
    model and metric whose value is not a list of numbers."""
    results = []
    for index, model in enumerate(models):
        metrics = model.get("metrics") or {}
        if not isinstance(metrics, Mapping):
            raise ValueError(f"model {index} ({model.get('url')}): metrics is not an object")
        values: dict[str, list[float]] = {}
        for name, value in metrics.items():
            if not isinstance(value, list) or not all(
                    isinstance(v, int | float) and not isinstance(v, bool) for v in value):
                raise ValueError(f"model {index} ({model.get('url')}): metric {name!r} is not a list of numbers")
            values[str(name)] = [float(v) for v in value]
        results.append(values)
    return results
