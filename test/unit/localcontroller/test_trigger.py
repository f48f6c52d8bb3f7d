"""localcontroller.trigger: Go Sedna's trigger_test.go ported, plus daily windows, epsilon equality and bad specs."""

from __future__ import annotations

import operator
import struct
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml
from testkit import REPO

from apis.sedna.v1alpha1.common import TRIGGER_OPERATORS
from localcontroller.trigger import (
    DEFAULT_CHECK_PERIOD_SECONDS,
    OPERATORS,
    AndTrigger,
    BinaryTrigger,
    TimerRangeTrigger,
    TriggerSpecError,
    new_trigger,
)

NOW = datetime(2024, 5, 17, 12, 30, 45)
HOUR = timedelta(hours=1)


PLAIN_COMPARISONS = {
    "gt": operator.gt, ">": operator.gt, "ge": operator.ge, ">=": operator.ge,
    "eq": operator.eq, "=": operator.eq, "==": operator.eq, "ne": operator.ne, "!=": operator.ne,
    "le": operator.le, "<=": operator.le, "lt": operator.lt, "<": operator.lt,
}


def at(moment: datetime):
    return lambda: moment


def hhmm(moment: datetime) -> str:
    return moment.strftime("%H:%M")


def f32(value: float) -> float:
    """The value as a Go float32 (Go's test uses []float32 and float32 thresholds)."""
    return struct.unpack("f", struct.pack("f", value))[0]


# --- Go: TestTimerInRange -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("start", "end", "expected"), [
    (NOW - HOUR, NOW + HOUR, True),
    (NOW - 2 * HOUR, NOW - HOUR, False),
    (NOW + HOUR, NOW + 2 * HOUR, False),
    (NOW + HOUR, NOW - HOUR, False),
    (NOW + 2 * HOUR, NOW + HOUR, True),
])
def test_timer_in_range(start: datetime, end: datetime, expected: bool) -> None:
    trigger = new_trigger({"timer": {"start": hhmm(start), "end": hhmm(end)}}, clock=at(NOW))
    assert trigger.trigger({}) is expected


# --- Go: TestCondition ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("op", "threshold", "expected"), [
    ("gt", 499, True), (">", 499, True), ("gt", 500, False), (">", 500, False),
    ("ge", 501, False), (">=", 501, False), ("ge", 500, True), (">=", 500, True),
    ("eq", 500, True), ("=", 500, True), ("=", 501, False),
    ("!=", 500, False), ("!=", 501, True),
    ("lt", 501, True), ("<", 501, True), ("lt", 500, False), ("<", 500, False),
    ("le", 501, True), ("<=", 501, True), ("le", 500, True), ("<=", 500, True),
    ("le", 499, False), ("<=", 499, False),
    # the aliases Go's table leaves out
    ("==", 500, True), ("==", 499, False), ("eq", 501, False), ("ne", 500, False), ("ne", 499, True),
])
def test_condition(op: str, threshold: int, expected: bool) -> None:
    trigger = new_trigger({"condition": {"operator": op, "metric": "numOfSamples", "threshold": threshold}})
    assert trigger.trigger({"numOfSamples": 500}) is expected


@pytest.mark.parametrize("op", sorted(TRIGGER_OPERATORS))
def test_every_operator_the_crd_admits_against_499_500_501(op: str) -> None:
    compare = PLAIN_COMPARISONS[op]
    for threshold in (499, 500, 501):
        expected = compare(500, threshold)
        trigger = new_trigger({"condition": {"operator": op, "metric": "n", "threshold": threshold}})
        assert trigger.trigger({"n": 500}) is expected, (op, threshold)


def test_the_operator_table_is_the_crd_enum() -> None:
    assert set(OPERATORS) == set(TRIGGER_OPERATORS)


# --- Go: TestIndexCondition -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("op", "threshold", "expected"), [
    ("gt", 0.3, False),
    ("gt", 0.2, False),
    ("gt", 0.1, True),
    ("ge", 0.2, True),
])
def test_index_condition(op: str, threshold: float, expected: bool) -> None:
    stats = {"pricision_delta": [f32(0.1), f32(0.2)]}
    trigger = new_trigger({"condition": {"operator": op, "metric": "pricision_delta[1]", "threshold": f32(threshold)}})
    assert trigger.trigger(stats) is expected


# --- Go: TestTimerAndCondition --------------------------------------------------------------------------------

@pytest.mark.parametrize(("start", "end", "op", "threshold", "expected"), [
    (NOW - HOUR, NOW + HOUR, "ge", 500, True),
    (NOW - HOUR, NOW + HOUR, "ge", 600, False),
    (NOW - 2 * HOUR, NOW - HOUR, "ge", 500, False),
])
def test_timer_and_condition(start: datetime, end: datetime, op: str, threshold: int, expected: bool) -> None:
    spec = {
        "timer": {"start": hhmm(start), "end": hhmm(end)},
        "condition": {"operator": op, "metric": "numOfSamples", "threshold": threshold},
    }
    assert new_trigger(spec, clock=at(NOW)).trigger({"numOfSamples": 500}) is expected


# --- beyond Go's tests ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("now", "expected"), [
    (datetime(2024, 1, 1, 1, 59, 59), False),
    (datetime(2024, 1, 1, 2, 0, 0), True),      # start is included
    (datetime(2024, 1, 1, 6, 0, 59), True),     # end is included, to the minute
    (datetime(2024, 1, 1, 6, 1, 0), False),
])
def test_daily_window_works_and_includes_both_ends(now: datetime, expected: bool) -> None:
    # Go formats the clock with an empty layout for "daily", so this window never fires there.
    trigger = new_trigger({"timer": {"start": "02:00", "end": "06:00", "type": "daily"}}, clock=at(now))
    assert trigger.trigger({}) is expected


@pytest.mark.parametrize(("now", "expected"), [
    (datetime(2024, 1, 1, 23, 0), True),
    (datetime(2024, 1, 1, 23, 59), True),
    (datetime(2024, 1, 2, 0, 0), True),
    (datetime(2024, 1, 2, 1, 0), True),
    (datetime(2024, 1, 2, 1, 1), False),
    (datetime(2024, 1, 1, 12, 0), False),
    (datetime(2024, 1, 1, 22, 59), False),
])
def test_daily_window_wraps_around_midnight(now: datetime, expected: bool) -> None:
    trigger = new_trigger({"timer": {"start": "23:00", "end": "01:00", "type": "daily"}}, clock=at(now))
    assert trigger.trigger({}) is expected


def test_single_digit_hours_are_times_not_strings() -> None:
    # "2:00" sorts after "10:00" as a string (Go); as a time it is before it.
    trigger = new_trigger({"timer": {"start": "2:00", "end": "10:00"}}, clock=at(datetime(2024, 1, 1, 5, 0)))
    assert trigger.trigger({}) is True


def test_the_clock_is_read_at_every_evaluation() -> None:
    moments = iter([datetime(2024, 1, 1, 3, 0), datetime(2024, 1, 1, 9, 0)])
    trigger = new_trigger({"timer": {"start": "02:00", "end": "04:00"}}, clock=lambda: next(moments))
    assert [trigger.trigger({}), trigger.trigger({})] == [True, False]


@pytest.mark.parametrize(("value", "op", "expected"), [
    (500 + 5e-7, "eq", True),
    (500 + 5e-7, "gt", False),
    (500 - 5e-7, "ge", True),
    (500 - 5e-7, "lt", False),
    (500 + 5e-7, "le", True),
    (500 + 5e-7, "ne", False),
    (500 + 2e-6, "eq", False),
    (500 + 2e-6, "gt", True),
    (500 - 2e-6, "lt", True),
    (500 - 2e-6, "ge", False),
])
def test_equality_has_an_epsilon_of_1e_6(value: float, op: str, expected: bool) -> None:
    trigger = new_trigger({"condition": {"operator": op, "metric": "m", "threshold": 500}})
    assert trigger.trigger({"m": value}) is expected


@pytest.mark.parametrize(("stats", "expected"), [
    ({}, False),                                # missing metric
    ({"m": "abc"}, False),                      # unparsable string
    ({"m": " 5"}, False),                       # Go's ParseFloat takes no spaces
    ({"m": "1_0"}, False),                      # nor underscores
    ({"m": "1e400"}, False),                    # out of range is an error in Go
    ({"m": "5"}, True),                         # a parsable string counts
    ({"m": "0x1.4p2"}, True),                   # Go parses hex floats too
    ({"m": 5.0}, True),
    ({"m": [7, 8]}, False),                     # a list without an index is 0
    ({"m": None}, False),                       # so is anything else
    ({"m": True}, False),
])
def test_metric_values_convert_as_in_go(stats: dict, expected: bool) -> None:
    assert new_trigger({"condition": {"operator": ">", "metric": "m", "threshold": 4}}).trigger(stats) is expected


def test_non_numbers_count_as_zero() -> None:
    zero = new_trigger({"condition": {"operator": "eq", "metric": "m", "threshold": 0}})
    assert zero.trigger({"m": [1, 2]}) is True
    assert zero.trigger({"m": {"a": 1}}) is True


@pytest.mark.parametrize(("metric", "stats", "expected"), [
    ("m[0]", {"m": [0.5, 0.1]}, True),
    ("m[2]", {"m": [0.5, 0.1]}, False),          # out of range
    ("m[0]", {"m": 0.5}, False),                  # not a list
    ("m[0]", {"m": "0.5"}, False),                # a string is no list
    ("m[0]", {"m": ["0.5"]}, True),               # elements convert like values
    ("m[0]", {"m": ["x"]}, False),
    ("m[+1]", {"m": [0, 0.5]}, True),             # Go's Atoi takes a sign
    (" m [1]", {"m": [0, 0.5]}, True),            # the name is trimmed, as in Go
    ("m[0]", {"m": (0.5,)}, True),
])
def test_indexed_metrics(metric: str, stats: dict, expected: bool) -> None:
    trigger = new_trigger({"condition": {"operator": ">", "metric": metric, "threshold": 0.2}})
    assert trigger.trigger(stats) is expected


def test_string_threshold_parses_like_go() -> None:
    assert new_trigger({"condition": {"operator": ">", "metric": "m", "threshold": "0.5"}}).trigger({"m": 1}) is True


def test_check_period_defaults_to_60_and_is_kept() -> None:
    assert new_trigger({}).check_period_seconds == DEFAULT_CHECK_PERIOD_SECONDS == 60
    assert new_trigger({"checkPeriodSeconds": 15}).check_period_seconds == 15


def test_empty_spec_always_fires() -> None:
    assert new_trigger(None).trigger() is True
    assert new_trigger({}).trigger({"anything": 1}) is True


def test_a_window_and_a_condition_must_both_fire() -> None:
    spec = {"timer": {"start": "02:00", "end": "04:00"}, "condition": {"operator": ">", "metric": "n", "threshold": 1}}
    inside, outside = new_trigger(spec, clock=at(datetime(2024, 1, 1, 3))), new_trigger(spec, clock=at(NOW))
    assert [inside.trigger({"n": 2}), inside.trigger({"n": 0}), outside.trigger({"n": 2})] == [True, False, False]
    assert isinstance(inside, AndTrigger)
    assert [type(part) for part in inside.triggers] == [TimerRangeTrigger, BinaryTrigger]


@pytest.mark.parametrize(("spec", "field"), [
    ({"condition": {"operator": "~", "metric": "n", "threshold": 1}}, "condition.operator"),
    ({"condition": {"metric": "n", "threshold": 1}}, "condition.operator"),
    ({"condition": {"operator": ">", "metric": "", "threshold": 1}}, "condition.metric"),
    ({"condition": {"operator": ">", "threshold": 1}}, "condition.metric"),
    ({"condition": {"operator": ">", "metric": "m[", "threshold": 1}}, "condition.metric"),
    ({"condition": {"operator": ">", "metric": "m[x]", "threshold": 1}}, "condition.metric"),
    ({"condition": {"operator": ">", "metric": "m[-1]", "threshold": 1}}, "condition.metric"),
    ({"condition": {"operator": ">", "metric": "m[1]x", "threshold": 1}}, "condition.metric"),
    ({"condition": {"operator": ">", "metric": "[1]", "threshold": 1}}, "condition.metric"),
    ({"condition": {"operator": ">", "metric": "n"}}, "condition.threshold"),
    ({"condition": {"operator": ">", "metric": "n", "threshold": "lots"}}, "condition.threshold"),
    ({"condition": {"operator": ">", "metric": "n", "threshold": True}}, "condition.threshold"),
    ({"condition": "n > 1"}, "condition"),
    ({"timer": ["02:00", "04:00"]}, "timer"),
    ({"timer": {"start": "2am", "end": "04:00"}}, "timer.start"),
    ({"timer": {"start": "02:00", "end": "25:00"}}, "timer.end"),
    ({"timer": {"start": "02:00", "end": "04:60"}}, "timer.end"),
    ({"timer": {"start": "02:00"}}, "timer.end"),
    ({"timer": {"start": "02:00", "end": "04:00", "type": "weekly"}}, "timer.type"),
    ({"checkPeriodSeconds": 0}, "checkPeriodSeconds"),
    ({"checkPeriodSeconds": "10"}, "checkPeriodSeconds"),
])
def test_bad_specs_name_the_field(spec: dict, field: str) -> None:
    with pytest.raises(ValueError, match=f"^trigger {field}: ") as caught:
        new_trigger(spec)
    assert isinstance(caught.value, TriggerSpecError)
    assert caught.value.field == field


def test_the_chart_samples_deploy_trigger_fires_on_a_precision_gain():
    """The IL sample deploys a model whose precision (a list, as Sedna's eval workers report it) gained > 0.1; its
    upstream original (``metric: precision_delta``, no index) never fires."""
    sample = yaml.safe_load((REPO / "charts/sedna/samples/incrementallearningjob.yaml").read_text())
    deploy = new_trigger(sample["spec"]["deploySpec"]["trigger"])
    assert deploy.trigger({"precision": [0.9], "precision_delta": [0.2]})
    assert not deploy.trigger({"precision": [0.8], "precision_delta": [0.05]})
    upstream = yaml.safe_load((Path(__file__).parents[1] / "apis/data/upstream_samples/"
                               "incrementallearningjob_v1alpha1.yaml").read_text())
    assert not new_trigger(upstream["spec"]["deploySpec"]["trigger"]).trigger({"precision_delta": [0.2]})
