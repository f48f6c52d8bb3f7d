"""Conditions of IL/LL jobs and the data they carry (Sedna's ``IncrementalCondData``/``ConditionData``).

* ``gm_condition(stage, type, now)``: a condition the GM appends (Go's ``NewJobCondition``: no reason, message or
  data).
* ``reported_condition(report, now)``: the condition an LC report becomes: ``status: True``, ``message: "reported by
  lc"`` (``"reported by lc: <reason>"`` when our LC says why a stage failed: the report's optional ``message``,
  which a Go LC never sends; with its optional ``reason``, a CamelCase word such as ``PathOutsideJob``, that is the
  condition's ``reason``), ``data`` = JSON of ``{input, output}`` keeping only the fields Go's types have, in
  Go's field order.
* ``parse_report(content)``: ``{"phase", "status", "input"?, "output"?}`` → ``Report``; anything Go's
  ``updateFromEdge`` refuses (unknown phase or status, a field of the wrong type) raises ``InvalidReport``.
* ``is_resent(conditions, condition)``: whether the current cycle (from the last ``Train/Waiting`` on) already has
  a condition with the same stage, type and data: a report delivered twice is applied once. Only LC reports carry
  ``data`` (at least ``{}``), so a GM condition never matches.
* ``out_of_stage(conditions, report)``: why a report does not answer the job's current condition (``""`` when it
  does): its stage must be the current one, that stage must not have ended (``Completed``/``Failed``), and a
  ``Ready`` answers only ``Waiting``. A report that cannot tell its round (Sedna's SDK reports ``deploy completed``
  with nothing else) is matched by stage alone.
* ``ended_without_report(conditions, report)``: for a late ``Completed`` report with an output (the trained model,
  the eval metrics), the index of the ``Completed`` that the GM wrote for that stage from its pod's end, with no
  report, when that is the stage's last end; ``None`` otherwise. The report fills it in (``upstream``): the model is
  kept where the LCs look for it, the last ``<Stage>/Completed`` with an output.
* ``condition_data(condition)``: the decoded ``data`` (``{}`` when absent or not JSON).
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from apis.sedna.constants import COMPLETED, FAILED, READY, STAGES, TRAIN, WAITING
from globalmanager.runtime.edge import InvalidReport
from globalmanager.runtime.status import go_json

__all__ = [
    "InvalidConditionData",
    "REPORTED_BY_LC",
    "Report",
    "condition_data",
    "condition_input",
    "gm_condition",
    "input_model_urls",
    "is_resent",
    "model_json",
    "ended_without_report",
    "out_of_stage",
    "output_models",
    "parse_report",
    "reported_condition",
]

REPORTED_BY_LC = "reported by lc"
MAX_REASON_CHARS = 1024  # an LC's reason beyond this is cut (a condition's message stays small)
_EVENT_REASON = re.compile(r"[A-Z][A-Za-z0-9]{0,127}")
_PHASES = {s.lower(): s for s in STAGES}
_STATUSES = {t.lower(): t for t in (READY, COMPLETED, FAILED, WAITING)}


@dataclass(frozen=True)
class Report:
    stage: str
    type: str
    data: dict[str, Any]  # {input?, output?} normalized as Go marshals IncrementalCondData
    reason: str = ""  # the LC's optional "message": why the stage failed
    event_reason: str = ""  # the LC's optional "reason" (a CamelCase word, e.g. PathOutsideJob)


def gm_condition(stage: str, ctype: str, now: str) -> dict[str, Any]:
    return {"type": ctype, "status": "True", "stage": stage, "lastHeartbeatTime": now, "lastTransitionTime": now}


def reported_condition(report: Report, now: str) -> dict[str, Any]:
    cond = gm_condition(report.stage, report.type, now)
    cond["message"] = f"{REPORTED_BY_LC}: {report.reason}" if report.reason else REPORTED_BY_LC
    if report.event_reason:
        cond["reason"] = report.event_reason
    cond["data"] = go_json(report.data, sort_keys=False)  # struct order, maps sorted
    return cond


def condition_data(condition: Mapping[str, Any] | None) -> dict[str, Any]:
    raw = (condition or {}).get("data")
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except (TypeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _models_of(part: Any) -> list[Mapping[str, Any]]:
    """Go's ``joinModelURLs`` source: ``model`` when set, else ``models``."""
    if not isinstance(part, Mapping):
        return []
    if isinstance(part.get("model"), Mapping):
        return [part["model"]]
    return [m for m in part.get("models") or [] if isinstance(m, Mapping)]


def input_model_urls(data: Mapping[str, Any]) -> list[str]:
    return [str(m.get("url") or "") for m in _models_of(data.get("input"))]


def output_models(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``output.models`` (only ``models``, as LL's knowledge base and CLOUD_KB_INDEX read it)."""
    output = data.get("output")
    return [m for m in (output.get("models") or []) if isinstance(m, Mapping)] if isinstance(output, Mapping) else []


def is_resent(conditions: list[Mapping[str, Any]], condition: Mapping[str, Any]) -> bool:
    start = 0
    for i in range(len(conditions) - 1, -1, -1):
        if conditions[i].get("stage") == TRAIN and conditions[i].get("type") == WAITING:
            start = i
            break
    data = condition_data(condition)
    return any(
        c.get("stage") == condition.get("stage") and c.get("type") == condition.get("type") and c.get("data")
        and condition_data(c) == data
        for c in conditions[start:]
    )


def out_of_stage(conditions: list[Mapping[str, Any]], report: Report) -> str:
    if not conditions:
        return "the job has no condition yet"
    last = conditions[-1]
    stage, ctype = last.get("stage"), last.get("type")
    if report.stage != stage:
        return f"the job is at {stage}/{ctype}"
    if ctype in (COMPLETED, FAILED):
        return f"the job's {stage} stage has ended ({ctype})"
    if report.type == READY and ctype != WAITING:
        return f"{stage}/Ready answers {stage}/Waiting; the job is at {stage}/{ctype}"
    return ""


def ended_without_report(conditions: list[Mapping[str, Any]], report: Report) -> int | None:
    if report.type != COMPLETED or not output_models(report.data):
        return None
    for i in range(len(conditions) - 1, -1, -1):
        cond = conditions[i]
        if cond.get("stage") == report.stage and cond.get("type") in (COMPLETED, FAILED):
            return i if cond.get("type") == COMPLETED and "data" not in cond else None
    return None


# -- parsing ---------------------------------------------------------------------------------------------------------
def parse_report(content: Mapping[str, Any]) -> Report:
    phase, status = content.get("phase"), content.get("status")
    if not isinstance(phase, str) or phase.lower() not in _PHASES:
        raise InvalidReport(f"invalid condition stage: {phase!r} (expected train, eval or deploy)")
    if not isinstance(status, str) or status.lower() not in _STATUSES:
        raise InvalidReport(f"invalid condition type: {status!r} (expected ready, completed, failed or waiting)")
    data: dict[str, Any] = {}
    if content.get("input") is not None:
        data["input"] = _part(content["input"], "input", ("dataURL", "dataIndexURL", "outputDir"))
    if content.get("output") is not None:
        data["output"] = _part(content["output"], "output", ())
    reason = content.get("message")  # an extension: never a reason to refuse the report
    reason = " ".join(reason.split()) if isinstance(reason, str) else ""
    if len(reason) > MAX_REASON_CHARS:
        reason = reason[:MAX_REASON_CHARS - 1] + "…"
    event_reason = content.get("reason")  # an extension too: ignored unless a CamelCase word
    if not isinstance(event_reason, str) or not _EVENT_REASON.fullmatch(event_reason):
        event_reason = ""
    return Report(_PHASES[phase.lower()], _STATUSES[status.lower()], data, reason, event_reason)


def _part(value: Any, where: str, strings: tuple[str, ...]) -> dict[str, Any]:
    obj = _object(value, where)
    out: dict[str, Any] = {}
    if obj.get("model") is not None:
        out["model"] = model_json(obj["model"], f"{where}.model")
    models = _list(obj.get("models"), f"{where}.models")
    if models:
        out["models"] = [model_json(m, f"{where}.models[{i}]") for i, m in enumerate(models)]
    for key in strings:
        text = _string(obj.get(key), f"{where}.{key}")
        if text:
            out[key] = text
    return out


def model_json(value: Any, where: str = "model") -> dict[str, Any]:
    """A model as Go's ``runtime.Model`` (un)marshals it: known fields, Go's order, float32 where Go has one."""
    obj = _object(value, where)
    out: dict[str, Any] = {"format": _string(obj.get("format"), f"{where}.format"),
                           "url": _string(obj.get("url"), f"{where}.url")}
    devices = [_string(d, f"{where}.device_soc_versions[]") for d in _list(obj.get("device_soc_versions"), where)]
    if devices:
        out["device_soc_versions"] = devices
    metrics = obj.get("metrics")
    if metrics is not None:
        metrics = _object(metrics, f"{where}.metrics")
        if metrics:
            out["metrics"] = dict(sorted(metrics.items()))
    history = _float32(obj.get("history_metric"), f"{where}.history_metric")
    if history:
        out["history_metric"] = history
    current = obj.get("current_metric")
    if current is not None:
        current = {name: {k: _float32(v, f"{where}.current_metric.{name}.{k}") for k, v in
                          sorted(_object(values, f"{where}.current_metric.{name}").items())}
                   for name, values in sorted(_object(current, f"{where}.current_metric").items())}
        if current:
            out["current_metric"] = current
    classes = obj.get("classes")
    out["classes"] = None if classes is None else [_string(c, f"{where}.classes[]") for c in _list(classes, where)]
    for key in ("number_of_labeled_unseen_sample", "number_of_model", "number_of_unseen_sample"):
        number = _int(obj.get(key), f"{where}.{key}")
        if number:
            out[key] = number
    return out


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidReport(f"{where} must be an object, got {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidReport(f"{where} must be a list, got {type(value).__name__}")
    return value


def _string(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidReport(f"{where} must be a string, got {type(value).__name__}")
    return value


def _int(value: Any, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidReport(f"{where} must be an integer, got {value!r}")
    return value


def _float32(value: Any, where: str) -> float:
    """``value`` as Go's float32 holds it, printed as Go prints a float32 (shortest form that reads back)."""
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidReport(f"{where} must be a number, got {value!r}")
    try:
        single = float(struct.unpack("f", struct.pack("f", float(value)))[0])
    except OverflowError:
        raise InvalidReport(f"{where} does not fit a float32: {value!r}") from None
    for digits in range(1, 10):
        text = f"{single:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            return float(text)
    return single




class InvalidConditionData(Exception):
    """The current condition's ``data`` lacks what the stage's pod is built from (Go: ``empty input from condData``)."""


def condition_input(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """``data.input``; ``InvalidConditionData`` when it is missing (the GM cannot build the stage's pod)."""
    inp = data.get("input")
    if not isinstance(inp, Mapping):
        raise InvalidConditionData("the Ready condition carries no data.input")
    return inp
