"""The steering annotations a pod gives the pod simulator, read within documented bounds.

| annotation | value | bounds |
|---|---|---|
| ``sandbox.sedna.io/start-delay-seconds`` | seconds Pending before Running (default: the simulator's ``start_delay``) | 0 … ``MAX_STEERING_SECONDS`` |
| ``sandbox.sedna.io/run-seconds`` | seconds Running before the containers exit (default: forever) | 0 … ``MAX_STEERING_SECONDS`` |
| ``sandbox.sedna.io/exit-code`` | the containers' exit code (default 0) | int32 |

A number beyond its bounds is clamped to them (``"1e308"`` or ``"inf"`` seconds → ``MAX_STEERING_SECONDS``); a
value that is not a number (or not an integer exit code, a negative or NaN number of seconds, a non-string) is
ignored: the default applies. Either way a warning is logged with the pod's key. Other ``sandbox.sedna.io/``
annotations are ignored with a warning (a typo), except those other simulators read: ``crash-loop`` (the pod
simulator), ``fail-pod-creation`` (the ReplicaSet controller) and ``worker-*`` (the worker simulator, ``workersim``).
Reading never raises.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from apis import meta
from apis.logs import get_logger

__all__ = [
    "ANNOTATION_CRASH_LOOP",
    "ANNOTATION_EXIT_CODE",
    "ANNOTATION_FAIL_POD_CREATION",
    "ANNOTATION_PREFIX",
    "ANNOTATION_RUN_SECONDS",
    "ANNOTATION_START_DELAY",
    "MAX_STEERING_SECONDS",
    "Steering",
    "steering_of",
]

log = get_logger(__name__)

ANNOTATION_PREFIX = "sandbox.sedna.io/"
ANNOTATION_START_DELAY = ANNOTATION_PREFIX + "start-delay-seconds"
ANNOTATION_RUN_SECONDS = ANNOTATION_PREFIX + "run-seconds"
ANNOTATION_EXIT_CODE = ANNOTATION_PREFIX + "exit-code"
ANNOTATION_CRASH_LOOP = ANNOTATION_PREFIX + "crash-loop"
ANNOTATION_FAIL_POD_CREATION = ANNOTATION_PREFIX + "fail-pod-creation"
MAX_STEERING_SECONDS = 365 * 24 * 3600.0  # a year: "practically forever", and far below any timer's limit
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1  # ContainerStateTerminated.exitCode is an int32
_INTEGER = re.compile(r"[+-]?[0-9]+")
_KNOWN = (ANNOTATION_START_DELAY, ANNOTATION_RUN_SECONDS, ANNOTATION_EXIT_CODE, ANNOTATION_CRASH_LOOP,
          ANNOTATION_FAIL_POD_CREATION)
_OTHER_SIMULATORS = ANNOTATION_PREFIX + "worker-"  # the worker simulator's steering (workersim.steering)


@dataclass(frozen=True)
class Steering:
    """A pod's steering: seconds Pending, seconds Running (None: forever), exit code."""

    start_delay: float = 0.0
    run_seconds: float | None = None
    exit_code: int = 0


def steering_of(pod: Mapping[str, Any], start_delay: float = 0.0) -> Steering:
    """The pod's steering annotations, validated and clamped (see the module doc); ``start_delay`` is the default
    (the simulator's) for a pod without a valid start-delay annotation; never raises."""
    annotations = meta.annotations(pod)
    if not isinstance(annotations, Mapping):
        annotations = {}
    key = f"{meta.namespace(pod)}/{meta.name(pod)}"
    for name in annotations:
        if isinstance(name, str) and name.startswith(ANNOTATION_PREFIX) and name not in _KNOWN \
                and not name.startswith(_OTHER_SIMULATORS):
            log.warning("sandbox kubelet ignoring an unknown steering annotation", key=key, annotation=name)
    return Steering(
        start_delay=_seconds(key, annotations, ANNOTATION_START_DELAY, start_delay) or 0.0,
        run_seconds=_seconds(key, annotations, ANNOTATION_RUN_SECONDS, None),
        exit_code=_exit_code(key, annotations),
    )


def _seconds(key: str, annotations: Mapping[str, Any], name: str, default: float | None) -> float | None:
    raw = annotations.get(name)
    if raw is None:
        return default
    try:
        value = float(raw) if isinstance(raw, str) else math.nan
    except ValueError:
        value = math.nan
    if math.isnan(value) or value < 0:
        _warn(key, name, raw, "ignored: expected a non-negative number of seconds")
        return default
    if value > MAX_STEERING_SECONDS:
        _warn(key, name, raw, f"clamped to {MAX_STEERING_SECONDS:g} seconds")
        return MAX_STEERING_SECONDS
    return value


def _exit_code(key: str, annotations: Mapping[str, Any]) -> int:
    raw = annotations.get(ANNOTATION_EXIT_CODE)
    if raw is None:
        return 0
    text = raw.strip() if isinstance(raw, str) else ""
    if not _INTEGER.fullmatch(text):
        _warn(key, ANNOTATION_EXIT_CODE, raw, "ignored: expected an integer exit code")
        return 0
    # (no int() of a huge digit string: Python refuses those beyond 4300 digits)
    value = int(text) if len(text) <= 20 else (_INT32_MIN if text.startswith("-") else _INT32_MAX + 1)
    clamped = min(max(value, _INT32_MIN), _INT32_MAX)
    if clamped != value:
        _warn(key, ANNOTATION_EXIT_CODE, raw, f"clamped to {clamped} (int32)")
    return clamped


def _warn(key: str, name: str, raw: object, what: str) -> None:
    log.warning("sandbox kubelet: invalid steering annotation", key=key, annotation=name, value=str(raw)[:64], action=what)
