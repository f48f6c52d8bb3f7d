"""``parse_steering``: every annotation validated and clamped; a bad value is reported and the default kept."""

from __future__ import annotations

import pytest

from workersim import Steering, parse_steering
from workersim.steering import MAX_METRICS_BYTES

P = "sandbox.sedna.io/worker-"


def parse(**annotations):
    problems = []
    steering = parse_steering({P + k.replace("_", "-"): v for k, v in annotations.items()},
                              lambda key, value, action: problems.append((key.removeprefix(P), action)))
    return steering, problems


def test_no_annotations_give_the_defaults():
    assert parse() == (Steering(), [])
    assert Steering().delay == 1.0 and Steering().rounds == 3 and Steering().fail is None


def test_valid_values():
    steering, problems = parse(delay_seconds="0.25", period_seconds="2", rounds="5", fail="REPORT", exit_code="42",
                               inferences_per_period="8", hard_examples_per_period="2", sample_count="640",
                               sdk_quirks="False", simulated="false", metrics='{"precision": [0.5, 1], "f1": 0.7}')
    assert problems == []
    assert steering == Steering(simulated=False, delay=0.25, period=2.0, rounds=5,
                                metrics=({"precision": [0.5, 1], "f1": 0.7},), fail="report", exit_code=42,
                                inferences_per_period=8, hard_examples_per_period=2, sample_count=640,
                                sdk_quirks=False)


@pytest.mark.parametrize("annotation, value, action, field, expected", [
    ("delay_seconds", "-1", "clamped to 0", "delay", 0.0),
    ("delay_seconds", "1e9", "clamped to 3600", "delay", 3600.0),
    ("delay_seconds", "nan", "ignored", "delay", 1.0),
    ("delay_seconds", "inf", "ignored", "delay", 1.0),
    ("period_seconds", "0", "clamped to 0.05", "period", 0.05),
    ("rounds", "0", "clamped to 1", "rounds", 1),
    ("rounds", "2.5", "ignored", "rounds", 3),
    ("exit_code", "0", "clamped to 1", "exit_code", 1),
    ("exit_code", "300", "clamped to 255", "exit_code", 255),
    ("sample_count", "x", "ignored", "sample_count", 100),
    ("fail", "sometimes", "ignored", "fail", None),
    ("sdk_quirks", "yes", "ignored", "sdk_quirks", True),
])
def test_bad_or_out_of_range_values(annotation, value, action, field, expected):
    steering, problems = parse(**{annotation: value})
    assert getattr(steering, field) == expected
    assert len(problems) == 1 and problems[0][0] == annotation.replace("_", "-")
    assert problems[0][1].startswith(action)


def test_hard_examples_never_exceed_inferences():
    steering, problems = parse(inferences_per_period="2", hard_examples_per_period="5")
    assert steering.hard_examples_per_period == 2
    assert problems == [("hard-examples-per-period", "clamped to 2 (the inferences per period)")]


@pytest.mark.parametrize("metrics", [
    "{", "[]", "3", '"precision"', '{"precision": "high"}', '{"precision": [0.1, "x"]}', '{"precision": true}',
    '{"precision": [true]}', '{"precision": NaN}', '{"precision": {"nested": 1}}', '{"": 1}', '[{"a": 1}, 2]',
    '{"a": [' + ",".join(["1"] * 1025) + "]}", "{" + ",".join(f'"m{i}": 1' for i in range(65)) + "}",
    '{"a": "' + "x" * MAX_METRICS_BYTES + '"}',
])
def test_bad_metrics_are_ignored(metrics):
    steering, problems = parse(metrics=metrics)
    assert steering.metrics is None
    assert [p[0] for p in problems] == ["metrics"] and problems[0][1].startswith("ignored")


def test_metrics_list_is_taken_in_order_and_the_last_repeats():
    steering, _ = parse(metrics='[{"a": 1}, {"a": 2}]')
    assert [steering.metrics_at(i) for i in range(4)] == [{"a": 1}, {"a": 2}, {"a": 2}, {"a": 2}]
    assert Steering().metrics_at(0) is None


def test_model_info_adds_known_model_fields_only():
    steering, problems = parse(model_info='{"classes": ["a"], "number_of_labeled_unseen_sample": 4}')
    assert problems == [] and steering.model_info == {"classes": ["a"], "number_of_labeled_unseen_sample": 4}
    for bad, why in (('{"url": "/x"}', "unknown model fields ['url']"), ("[1]", "expected a JSON object"),
                     ("{", "not JSON"), ('{"classes": "' + "x" * MAX_METRICS_BYTES + '"}', "longer than")):
        steering, problems = parse(model_info=bad)
        assert steering.model_info is None
        assert len(problems) == 1 and problems[0][0] == "model-info" and problems[0][1].startswith("ignored: " + why)
