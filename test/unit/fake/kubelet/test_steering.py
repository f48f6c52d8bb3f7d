"""Steering annotations are validated and clamped to documented bounds; reading them never raises."""

from __future__ import annotations

import pytest
from testkit.logs import capture_library_logs

from sandbox.steering import (
    ANNOTATION_EXIT_CODE,
    ANNOTATION_RUN_SECONDS,
    ANNOTATION_START_DELAY,
    MAX_STEERING_SECONDS,
    Steering,
    steering_of,
)


def pod(**annotations: object) -> dict:
    return {"metadata": {"name": "p", "namespace": "ns", "annotations": annotations}}


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("0.2", 0.2),
        ("1e308", MAX_STEERING_SECONDS),
        ("inf", MAX_STEERING_SECONDS),
        ("9" * 5000, MAX_STEERING_SECONDS),
        ("nan", 0.0),
        ("-1", 0.0),
        ("soon", 0.0),
        (5, 0.0),  # not a string: ignored
        ([1], 0.0),
    ],
)
def test_start_delay_is_clamped_or_ignored(raw: object, expected: float) -> None:
    assert steering_of(pod(**{ANNOTATION_START_DELAY: raw})).start_delay == expected


@pytest.mark.parametrize("raw, expected", [("0", 0.0), ("1e308", MAX_STEERING_SECONDS), ("x", None), ("-3", None)])
def test_run_seconds(raw: str, expected: float | None) -> None:
    assert steering_of(pod(**{ANNOTATION_RUN_SECONDS: raw})).run_seconds == expected


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("3", 3),
        (" -1 ", -1),
        ("2147483648", 2**31 - 1),
        ("-99999999999999999999999999", -(2**31)),
        ("9" * 5000, 2**31 - 1),
        ("1.5", 0),
        ("three", 0),
        (3, 0),
    ],
)
def test_exit_code_is_an_int32(raw: object, expected: int) -> None:
    assert steering_of(pod(**{ANNOTATION_EXIT_CODE: raw})).exit_code == expected


def test_defaults_and_warnings_name_the_pod() -> None:
    assert steering_of({"metadata": {"name": "p"}}) == Steering()
    assert steering_of({"metadata": {"annotations": "not a map"}}) == Steering()
    with capture_library_logs() as logs:
        steering_of(pod(**{ANNOTATION_START_DELAY: "1e308", "sandbox.sedna.io/typo-seconds": "1"}))
    assert {(e["key"], e["annotation"]) for e in logs} == {
        ("ns/p", ANNOTATION_START_DELAY),
        ("ns/p", "sandbox.sedna.io/typo-seconds"),
    }


def test_annotations_of_the_other_simulators_are_not_typos() -> None:
    with capture_library_logs() as logs:
        steering_of(pod(**{"sandbox.sedna.io/worker-delay-seconds": "0.5", "sandbox.sedna.io/worker-fail": "report",
                           "sandbox.sedna.io/crash-loop": "true", "sandbox.sedna.io/fail-pod-creation": "quota",
                           "sandbox.sedna.io/workers": "1"}))
    assert [e["annotation"] for e in logs] == ["sandbox.sedna.io/workers"]
