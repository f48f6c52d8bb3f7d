"""The ``sandbox.sedna.io/worker-*`` annotations that steer a simulated worker, validated and clamped.

A value that does not parse is reported through ``on_problem`` and ignored (the default applies); a number out of
range is clamped to it and reported too. Parsing never raises, so one pod's annotations never stop the simulator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = [
    "ANNOTATION_DELAY",
    "ANNOTATION_EXIT_CODE",
    "ANNOTATION_FAIL",
    "ANNOTATION_HARD_EXAMPLES",
    "ANNOTATION_INFERENCES",
    "ANNOTATION_METRICS",
    "ANNOTATION_MODEL_INFO",
    "ANNOTATION_PERIOD",
    "ANNOTATION_ROUNDS",
    "ANNOTATION_SAMPLE_COUNT",
    "ANNOTATION_SDK_QUIRKS",
    "ANNOTATION_SIMULATED",
    "FAIL_CRASH",
    "FAIL_REPORT",
    "MAX_METRICS_BYTES",
    "MODEL_INFO_FIELDS",
    "ProblemFunc",
    "Steering",
    "parse_steering",
]

PREFIX = "sandbox.sedna.io/worker-"
ANNOTATION_SIMULATED = PREFIX + "simulated"
ANNOTATION_DELAY = PREFIX + "delay-seconds"
ANNOTATION_PERIOD = PREFIX + "period-seconds"
ANNOTATION_ROUNDS = PREFIX + "rounds"
ANNOTATION_METRICS = PREFIX + "metrics"
ANNOTATION_MODEL_INFO = PREFIX + "model-info"
ANNOTATION_FAIL = PREFIX + "fail"
ANNOTATION_EXIT_CODE = PREFIX + "exit-code"
ANNOTATION_INFERENCES = PREFIX + "inferences-per-period"
ANNOTATION_HARD_EXAMPLES = PREFIX + "hard-examples-per-period"
ANNOTATION_SAMPLE_COUNT = PREFIX + "sample-count"
ANNOTATION_SDK_QUIRKS = PREFIX + "sdk-quirks"

FAIL_CRASH = "crash"
FAIL_REPORT = "report"

MAX_METRICS_BYTES = 64 * 1024
# Go runtime.Model fields a report's model may carry beyond format, url and metrics (Sedna's SDK sets none of them;
# the GM reads them, e.g. LifelongLearningJob's status.knowledgeBase)
MODEL_INFO_FIELDS = frozenset({"classes", "current_metric", "device_soc_versions", "history_metric",
                               "number_of_labeled_unseen_sample", "number_of_model", "number_of_unseen_sample"})
_MAX_METRIC_OBJECTS = 1000
_MAX_METRIC_KEYS = 64
_MAX_METRIC_VALUES = 1024

ProblemFunc = Callable[[str, str, str], None]
"""``on_problem(annotation, value, what happens)``."""

Metrics = dict[str, Any]


@dataclass(frozen=True)
class Steering:
    """How one worker behaves; the defaults are what an unannotated pod gets."""

    simulated: bool = True
    delay: float = 1.0  # seconds of work before each report (a round's, for federated training)
    period: float | None = None  # None: the SDK's period from the pod's env
    rounds: int = 3  # federated learning rounds (Sedna's example aggregator's exit_round)
    metrics: tuple[Metrics, ...] | None = None  # None: each play's default
    fail: str | None = None  # FAIL_CRASH or FAIL_REPORT
    exit_code: int = 1  # exit code of a failing worker
    inferences_per_period: int = 10
    hard_examples_per_period: int = 3
    sample_count: int = 100
    sdk_quirks: bool = True  # exactly what the SDK sends; the GM and LC cope with its two bugs
    model_info: Mapping[str, Any] | None = None  # more fields of every reported model (MODEL_INFO_FIELDS)

    def metrics_at(self, index: int) -> Metrics | None:
        """The steered metrics for the ``index``-th model or round (the last one repeats); None when not steered."""
        if not self.metrics:
            return None
        return self.metrics[min(index, len(self.metrics) - 1)]


def _number(raw: str, integer: bool) -> float:
    value = float(int(raw.strip())) if integer else float(raw)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _metric_value(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return math.isfinite(value)
    return (isinstance(value, list) and len(value) <= _MAX_METRIC_VALUES
            and all(not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) for v in value))


def _json(raw: str) -> Any:
    """A JSON annotation value of at most ``MAX_METRICS_BYTES``; ``ValueError`` saying what is wrong."""
    if len(raw.encode()) > MAX_METRICS_BYTES:
        raise ValueError(f"longer than {MAX_METRICS_BYTES} bytes")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None


def parse_metrics(raw: str) -> tuple[Metrics, ...]:
    """A JSON object or a non-empty list of objects mapping metric names to numbers or lists of numbers."""
    data = _json(raw)
    objects = data if isinstance(data, list) else [data]
    if not objects or len(objects) > _MAX_METRIC_OBJECTS:
        raise ValueError(f"expected an object or a list of 1 to {_MAX_METRIC_OBJECTS} objects")
    for obj in objects:
        if not isinstance(obj, dict) or len(obj) > _MAX_METRIC_KEYS:
            raise ValueError(f"expected objects of at most {_MAX_METRIC_KEYS} metrics")
        for key, value in obj.items():
            if not key or not _metric_value(value):
                raise ValueError(f"metric {key!r}: expected a finite number or a list of at most "
                                 f"{_MAX_METRIC_VALUES} finite numbers")
    return tuple(objects)


def parse_model_info(raw: str) -> dict[str, Any]:
    """A JSON object of ``MODEL_INFO_FIELDS`` (at most ``MAX_METRICS_BYTES``), added to every reported model."""
    data = _json(raw)
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    unknown = sorted(set(data) - MODEL_INFO_FIELDS)
    if unknown:
        raise ValueError(f"unknown model fields {unknown}; expected some of {sorted(MODEL_INFO_FIELDS)}")
    return data


def parse_steering(annotations: Mapping[str, str], on_problem: ProblemFunc) -> Steering:
    """The steering of a pod from its annotations; problems go to ``on_problem`` and never raise."""
    values: dict[str, Any] = {}

    def number(key: str, field: str, minimum: float, maximum: float, integer: bool = False) -> None:
        raw = annotations.get(key)
        if raw is None:
            return
        try:
            value = _number(str(raw), integer)
        except ValueError:
            kind = "an integer" if integer else "a number"
            on_problem(key, str(raw), f"ignored: expected {kind} from {minimum:g} to {maximum:g}")
            return
        if not minimum <= value <= maximum:
            clamped = min(max(value, minimum), maximum)
            on_problem(key, str(raw), f"clamped to {clamped:g}")
            value = clamped
        values[field] = int(value) if integer else value

    def flag(key: str, field: str) -> None:
        raw = annotations.get(key)
        if raw is None:
            return
        text = str(raw).strip().lower()
        if text not in ("true", "false"):
            on_problem(key, str(raw), 'ignored: expected "true" or "false"')
            return
        values[field] = text == "true"

    flag(ANNOTATION_SIMULATED, "simulated")
    flag(ANNOTATION_SDK_QUIRKS, "sdk_quirks")
    number(ANNOTATION_DELAY, "delay", 0.0, 3600.0)
    number(ANNOTATION_PERIOD, "period", 0.05, 3600.0)
    number(ANNOTATION_ROUNDS, "rounds", 1, 1000, integer=True)
    number(ANNOTATION_EXIT_CODE, "exit_code", 1, 255, integer=True)
    number(ANNOTATION_INFERENCES, "inferences_per_period", 0, 1_000_000, integer=True)
    number(ANNOTATION_HARD_EXAMPLES, "hard_examples_per_period", 0, 1_000_000, integer=True)
    number(ANNOTATION_SAMPLE_COUNT, "sample_count", 0, 1_000_000_000, integer=True)

    fail = annotations.get(ANNOTATION_FAIL)
    if fail is not None:
        text = str(fail).strip().lower()
        if text in (FAIL_CRASH, FAIL_REPORT):
            values["fail"] = text
        else:
            on_problem(ANNOTATION_FAIL, str(fail), f'ignored: expected "{FAIL_CRASH}" or "{FAIL_REPORT}"')

    for key, field, parse in ((ANNOTATION_METRICS, "metrics", parse_metrics),
                              (ANNOTATION_MODEL_INFO, "model_info", parse_model_info)):
        raw = annotations.get(key)
        if raw is not None:
            try:
                values[field] = parse(str(raw))
            except ValueError as exc:
                on_problem(key, str(raw)[:200], f"ignored: {exc}")

    steering = Steering(**values)
    if steering.hard_examples_per_period > steering.inferences_per_period:
        on_problem(ANNOTATION_HARD_EXAMPLES, str(steering.hard_examples_per_period),
                   f"clamped to {steering.inferences_per_period} (the inferences per period)")
        steering = Steering(**{**values, "hard_examples_per_period": steering.inferences_per_period})
    return steering
