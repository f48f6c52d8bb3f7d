"""When to start a round: Sedna's train/deploy triggers (Go ``pkg/localcontroller/trigger``).

``new_trigger(spec)`` turns a job's ``trigger`` (``{checkPeriodSeconds?, timer?, condition?}``) into the AND of a
daily time window and a condition on one metric. Semantics are Go Sedna's:

* Operators ``gt >``, ``ge >=``, ``eq = ==``, ``ne !=``, ``le <=``, ``lt <``; two values closer than ``1e-6`` are
  equal (so ``gt`` is false and ``ge`` true for them).
* ``name[i]`` takes element ``i`` of a list-valued metric; an index out of range or a value that is no list is false.
* A missing metric, or a string that does not parse as a float (Go ``strconv.ParseFloat``), is false; any other
  non-number (a list without an index, a bool, ``None``) counts as 0.
* The window ``{start, end}`` (``HH:MM``, both ends included, minute resolution, local time) wraps around
  midnight when ``start > end``.

Deliberate differences, where Go is broken: ``timer.type: daily`` works (Go formats the clock with an empty layout,
so a daily window never fires, or always fires when it wraps); times are compared as minutes, so ``2:00`` (which the
CRD schema admits) means 02:00 rather than a string that sorts after ``10:00``; ``checkPeriodSeconds`` (default 60)
is exposed for the managers to honour (Go ignores it); a spec Go would panic on or silently never fire (unknown
operator, malformed metric or time, missing threshold) raises ``TriggerSpecError`` naming the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

__all__ = [
    "DEFAULT_CHECK_PERIOD_SECONDS",
    "EQUALITY_EPSILON",
    "OPERATORS",
    "AndTrigger",
    "BinaryTrigger",
    "Clock",
    "Stats",
    "TimerRangeTrigger",
    "Trigger",
    "TriggerSpecError",
    "new_trigger",
]

Stats = Mapping[str, object]
Clock = Callable[[], datetime]

EQUALITY_EPSILON = 1e-6
DEFAULT_CHECK_PERIOD_SECONDS = 60.0
TIMER_TYPES = ("", "daily")

_Compare = Callable[[float, float, bool], bool]
"""``compare(value, threshold, is_equal)``."""


def _gt(value: float, threshold: float, is_equal: bool) -> bool:
    return not is_equal and value > threshold


def _ge(value: float, threshold: float, is_equal: bool) -> bool:
    return is_equal or value >= threshold


def _eq(value: float, threshold: float, is_equal: bool) -> bool:
    return is_equal


def _ne(value: float, threshold: float, is_equal: bool) -> bool:
    return not is_equal


def _le(value: float, threshold: float, is_equal: bool) -> bool:
    return is_equal or value <= threshold


def _lt(value: float, threshold: float, is_equal: bool) -> bool:
    return not is_equal and value < threshold


OPERATORS: Mapping[str, _Compare] = {
    "gt": _gt, ">": _gt,
    "ge": _ge, ">=": _ge,
    "eq": _eq, "=": _eq, "==": _eq,
    "ne": _ne, "!=": _ne,
    "le": _le, "<=": _le,
    "lt": _lt, "<": _lt,
}
"""Every operator alias the CRD schema admits, with Go Sedna's comparison."""

# Go: strings.Index(metric, "[") … strings.LastIndex(metric, "]"), name trimmed, index by strconv.Atoi.
_INDEXED_METRIC = re.compile(r"^(?P<name>[^\[\]]*?)\s*\[(?P<index>\+?\d+)\]$")
# The CRD schema's pattern for a timer's start and end.
_CLOCK = re.compile(r"^(?P<hour>[01]?[0-9]|2[0-4]):(?P<minute>[0-5][0-9])$")
_GO_HEX_FLOAT = re.compile(r"^[+-]?0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*[pP][+-]?\d+$")


class TriggerSpecError(ValueError):
    """A trigger spec that cannot be evaluated; ``field`` is its path inside the trigger (``condition.operator``)."""

    def __init__(self, field_path: str, problem: str) -> None:
        super().__init__(f"trigger {field_path}: {problem}")
        self.field = field_path


class Trigger(Protocol):
    def trigger(self, stats: Stats) -> bool:
        """Whether the trigger fires for these statistics (metric name → value)."""
        ...


def parse_float(text: str) -> float | None:
    """Go ``strconv.ParseFloat(text, 64)``: ``None`` where Go returns an error (spaces, ``_``, out of range)."""
    if text != text.strip() or "_" in text:
        return None
    try:
        value = float.fromhex(text) if _GO_HEX_FLOAT.match(text) else float(text)
    except (ValueError, OverflowError):
        return None
    if math.isinf(value) and "inf" not in text.lower():
        return None  # Go: ErrRange
    return value


def to_float(value: object) -> float | None:
    """A metric value as Go's ``convertFloat`` sees it: numbers as they are, strings parsed (``None`` when they do
    not parse), anything else 0."""
    if isinstance(value, bool):
        return 0.0
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:
            return None
    if isinstance(value, str):
        return parse_float(value)
    return 0.0


@dataclass(frozen=True)
class BinaryTrigger:
    """``metric operator threshold``, e.g. ``num_of_samples > 500`` or ``precision_delta[1] >= 0.1``."""

    operator: str
    metric: str
    threshold: float
    _compare: _Compare = field(init=False, repr=False, compare=False)
    _name: str = field(init=False, repr=False, compare=False)
    _index: int | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        compare = OPERATORS.get(self.operator) if isinstance(self.operator, str) else None
        if compare is None:
            raise TriggerSpecError("condition.operator", f"unsupported operator {self.operator!r} "
                                   f"(want one of {', '.join(OPERATORS)})")
        if not isinstance(self.metric, str) or not self.metric.strip():
            raise TriggerSpecError("condition.metric", f"want a metric name, got {self.metric!r}")
        name, index = self.metric, None
        if "[" in self.metric:
            match = _INDEXED_METRIC.match(self.metric)
            if match is None or not match["name"].strip():
                raise TriggerSpecError("condition.metric", f"{self.metric!r} is neither a name nor name[index]")
            name, index = match["name"].strip(), int(match["index"])
        object.__setattr__(self, "_compare", compare)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_index", index)

    @property
    def name(self) -> str:
        """The metric's name (without ``[index]``)."""
        return self._name

    def trigger(self, stats: Stats) -> bool:
        if self._name not in stats:
            return False
        value = stats[self._name]
        if self._index is not None:
            if not isinstance(value, list | tuple) or self._index >= len(value):
                return False
            value = value[self._index]
        number = to_float(value)
        if number is None:
            return False
        is_equal = abs(number - self.threshold) < EQUALITY_EPSILON
        return self._compare(number, self.threshold, is_equal)


def _minutes(text: object, field_path: str) -> int:
    match = _CLOCK.match(text) if isinstance(text, str) else None
    if match is None:
        raise TriggerSpecError(field_path, f"want a time HH:MM, got {text!r}")
    return int(match["hour"]) * 60 + int(match["minute"])


@dataclass(frozen=True)
class TimerRangeTrigger:
    """Fires every day between ``start`` and ``end`` (``HH:MM``, inclusive), wrapping around midnight when
    ``start > end`` (``23:00``–``01:00``). ``clock`` gives the local time (injectable for tests)."""

    start: str
    end: str
    timer_type: str = "daily"
    clock: Clock = field(default=datetime.now, repr=False, compare=False)
    _start: int = field(init=False, repr=False, compare=False)
    _end: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.timer_type not in TIMER_TYPES:
            raise TriggerSpecError("timer.type", f"unsupported type {self.timer_type!r} (want 'daily')")
        object.__setattr__(self, "_start", _minutes(self.start, "timer.start"))
        object.__setattr__(self, "_end", _minutes(self.end, "timer.end"))

    def trigger(self, stats: Stats) -> bool:
        now = self.clock()
        minute = now.hour * 60 + now.minute
        if self._start > self._end:
            return self._start <= minute or minute <= self._end
        return self._start <= minute <= self._end


@dataclass(frozen=True)
class AndTrigger:
    """Fires when every part fires (so with no parts, always). ``check_period_seconds`` is how often the owner
    should evaluate it."""

    triggers: tuple[Trigger, ...] = ()
    check_period_seconds: float = DEFAULT_CHECK_PERIOD_SECONDS

    def trigger(self, stats: Stats | None = None) -> bool:
        stats = stats if stats is not None else {}
        return all(part.trigger(stats) for part in self.triggers)

    def missing_metrics(self, stats: Stats) -> list[str]:
        """The metrics (as the spec names them) of the conditions whose metric ``stats`` lacks: those never fire."""
        return [part.metric for part in self.triggers if isinstance(part, BinaryTrigger) and part.name not in stats]


def _mapping(spec: Mapping[str, object], key: str) -> Mapping[str, object] | None:
    value = spec.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TriggerSpecError(key, f"want an object, got {value!r}")
    return value


def _check_period(spec: Mapping[str, object]) -> float:
    value = spec.get("checkPeriodSeconds")
    if value is None:
        return DEFAULT_CHECK_PERIOD_SECONDS
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0 or math.isinf(value):
        raise TriggerSpecError("checkPeriodSeconds", f"want a positive number of seconds, got {value!r}")
    return float(value)


def _threshold(condition: Mapping[str, object]) -> float:
    value = condition.get("threshold")
    number = to_float(value) if isinstance(value, int | float | str) and not isinstance(value, bool) else None
    if number is None:
        raise TriggerSpecError("condition.threshold", f"want a number, got {value!r}")
    return number


def new_trigger(spec: Mapping[str, object] | None, clock: Clock = datetime.now) -> AndTrigger:
    """The trigger a job's ``trigger`` spec describes (Go ``NewTrigger``): AND(timer?, condition?).
    ``TriggerSpecError`` (a ``ValueError``) names the field of a spec that cannot be evaluated."""
    spec = spec or {}
    parts: list[Trigger] = []
    timer = _mapping(spec, "timer")
    if timer is not None:
        timer_type = timer.get("type") or ""
        parts.append(TimerRangeTrigger(start=timer.get("start"), end=timer.get("end"),  # type: ignore[arg-type]
                                       timer_type=timer_type, clock=clock))  # type: ignore[arg-type]
    condition = _mapping(spec, "condition")
    if condition is not None:
        parts.append(BinaryTrigger(operator=condition.get("operator"),  # type: ignore[arg-type]
                                   metric=condition.get("metric"),  # type: ignore[arg-type]
                                   threshold=_threshold(condition)))
    return AndTrigger(tuple(parts), _check_period(spec))
