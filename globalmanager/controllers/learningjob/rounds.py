"""A learning job's rounds, and why its status stays small however long the job learns.

A round runs from a ``Train/Waiting`` the GM appends to the next one (after ``Deploy/Completed``, or after a stage
``Failed``). Go Sedna appends conditions forever (about 5.8 KB a round), so after a few hundred rounds the object
passes etcd's 1.5 MiB and the job's status can no longer be written. When the GM appends the next round's
``Train/Waiting`` (``start_round``, in the same status write):

* the finished round leaves the object and becomes one Event on the job (``FinishedRound``: each stage's outcome,
  the trained model, the eval metrics, what was deployed, the LC's reason for a failure; at most
  ``MAX_EVENT_MESSAGE`` characters, events.k8s.io's ``note`` limit);
* what is kept is what the next round and the LocalControllers read: for each stage, its latest ``Completed``
  condition and its latest ``Completed`` with an ``output`` (one condition, unless the latest ended from its pod
  without a report), in their order, then the new ``Train/Waiting``. A reader walking the conditions back for the
  latest ``<Stage>/Completed`` (with an output) finds what it found in the whole history: Go's LC
  (``getModelsFromJobConditions``: the trained model a next round trains from, the eval metrics of the deploy
  decision), our LC (``condition_models``), LL's ``HAS_COMPLETED_INITIAL_TRAINING`` and ``CLOUD_KB_INDEX``; and the
  last condition is still the current state;
* ``status.round`` counts the rounds and ``status.prunedConditions`` the conditions removed
  (``apis.sedna.constants.condition_offset``), so a condition's place over the job's life stays known: our LC
  answers each stage instance once by it, and the GM orders a job's pods by it (``condition_count``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from apis.sedna.constants import (
    COMPLETED,
    DEPLOY,
    FAILED,
    PRUNED_CONDITIONS_FIELD,
    READY,
    ROUND_FIELD,
    STAGES,
    TRAIN,
    WAITING,
    condition_offset,
)
from globalmanager.runtime.status import go_json

from .conditions import REPORTED_BY_LC, condition_data, input_model_urls, output_models

__all__ = ["MAX_EVENT_MESSAGE", "FinishedRound", "carried_conditions", "condition_count", "start_round"]

MAX_EVENT_MESSAGE = 1024  # events.k8s.io/v1 note limit (NoteLengthLimit); core/v1 readers show it whole too
ROUND_COMPLETED, ROUND_FAILED = "RoundCompleted", "RoundFailed"


@dataclass(frozen=True)
class FinishedRound:
    """A round that left the job's status: what its Event says."""

    number: int
    failed: bool
    message: str

    @property
    def reason(self) -> str:
        return ROUND_FAILED if self.failed else ROUND_COMPLETED


def condition_count(status: Mapping[str, Any] | None) -> int:
    """How many conditions the job has had over its life."""
    status = status or {}
    return condition_offset(status) + len(status.get("conditions") or [])


def _has_output(condition: Mapping[str, Any]) -> bool:
    """Go's test in ``getModelsFromJobConditions``: ``data`` decodes and has an ``output`` object."""
    return isinstance(condition_data(condition).get("output"), Mapping)


def carried_conditions(conditions: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Per stage, the latest ``Completed`` and the latest ``Completed`` with an output, in their order."""
    keep: set[int] = set()
    for stage in STAGES:
        latest = with_output = None
        for index, cond in enumerate(conditions):
            if cond.get("stage") == stage and cond.get("type") == COMPLETED:
                latest = index
                if _has_output(cond):
                    with_output = index
        keep.update(i for i in (latest, with_output) if i is not None)
    return [conditions[i] for i in sorted(keep)]


def _round_number(status: Mapping[str, Any], conditions: Sequence[Mapping[str, Any]]) -> int:
    number = status.get(ROUND_FIELD)
    if isinstance(number, int) and not isinstance(number, bool) and number > 0:
        return number
    # a job whose conditions a GM that prunes nothing wrote (Go Sedna, an older sedna-gm): its rounds so far
    return sum(1 for c in conditions if c.get("stage") == TRAIN and c.get("type") == WAITING)


def start_round(status: dict[str, Any], waiting: dict[str, Any]) -> FinishedRound | None:
    """Append the GM's ``Train/Waiting`` (``waiting``) as the start of the next round, in place: the conditions
    before it are pruned to ``carried_conditions``, ``round`` and ``prunedConditions`` move on. Returns the round
    that finished (``None`` for the job's first)."""
    conditions: list[dict[str, Any]] = list(status.get("conditions") or [])
    number = _round_number(status, conditions)
    finished = _finished_round(number, conditions) if conditions else None
    kept = [dict(c) for c in carried_conditions(conditions)]
    pruned = len(conditions) - len(kept)
    if pruned:
        status[PRUNED_CONDITIONS_FIELD] = condition_offset(status) + pruned
    status["conditions"] = [*kept, waiting]
    status[ROUND_FIELD] = number + 1
    return finished


def _finished_round(number: int, conditions: Sequence[Mapping[str, Any]]) -> FinishedRound:
    start = max((i for i, c in enumerate(conditions) if c.get("stage") == TRAIN and c.get("type") == WAITING),
                default=0)
    in_round = conditions[start:]
    parts = []
    for stage in STAGES:
        of_stage = [c for c in in_round if c.get("stage") == stage]
        if of_stage:
            parts.append(_stage_summary(stage, of_stage))
    last = conditions[-1]
    failed = last.get("type") == FAILED
    outcome = f"failed at {last.get('stage') or TRAIN}" if failed else "completed"
    return FinishedRound(number, failed, _cut(f"round {number} {outcome}: " + "; ".join(parts)))


def _stage_summary(stage: str, of_stage: Sequence[Mapping[str, Any]]) -> str:
    last = of_stage[-1]
    details = []
    done = next((c for c in reversed(of_stage) if c.get("type") == COMPLETED and _has_output(c)), None)
    if done is not None:
        for model in output_models(condition_data(done)):
            url = str(model.get("url") or "")
            metrics = model.get("metrics")
            details.append(f"{url} {go_json(metrics)}" if isinstance(metrics, Mapping) and metrics else
                           f"model {url}")
    if stage == DEPLOY:
        ready = next((c for c in reversed(of_stage) if c.get("type") == READY), None)
        urls = input_model_urls(condition_data(ready)) if ready is not None else []
        details.append(f"deployed {urls[0]}" if urls and urls[0] else "not deployed")
    message = str(last.get("message") or "")
    if message.startswith(f"{REPORTED_BY_LC}: "):
        details.append(message[len(REPORTED_BY_LC) + 2:])
    elif last.get("reason"):
        details.append(f"{last.get('reason')}: {message}")
    text = f"{stage} {last.get('type') or ''}"
    return f"{text} ({', '.join(details)})" if details else text


def _cut(text: str) -> str:
    return text if len(text) <= MAX_EVENT_MESSAGE else text[:MAX_EVENT_MESSAGE - 1] + "…"
