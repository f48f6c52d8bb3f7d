"""LC → Dataset: ``{"numberOfSamples": N}`` → ``status.numberOfSamples`` and ``status.updateTime`` (Go Sedna's
``dataset/upstream.go``), written through the status subresource with conflict retry, touching only those fields and
the ``Ready`` condition.

Our LC adds ``"error": {"reason": ..., "message": ...}`` when it cannot count the samples (the file is missing, the
format unknown...), once per change, and ``"error": null`` with the next count (Go's GM reads a report as a
``DatasetStatus`` and ignores the field). An error sets the condition ``Ready`` to ``False`` with the LC's reason; a
count without an error sets an existing ``Ready`` condition back to ``True`` (reason ``SamplesCounted``). A Dataset
that never had a problem has no condition, as in Go Sedna.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from apis import errors, meta
from apis.client import ClientsetBase
from apis.sedna.v1alpha1.common import ConditionStatus
from globalmanager.runtime.edge import InvalidReport, UpstreamMessage
from globalmanager.runtime.status import get_condition, set_condition, update_status
from informers import Lister

__all__ = [
    "CONDITION_READY",
    "REASON_SAMPLES_COUNTED",
    "CountError",
    "ReportOutcome",
    "apply_report",
    "count_error",
    "number_of_samples",
]

CONDITION_READY = "Ready"
REASON_SAMPLES_COUNTED = "SamplesCounted"
MAX_REASON_CHARS = 128
MAX_MESSAGE_CHARS = 1024
_REASON = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")  # metav1.Condition's reason


@dataclass(frozen=True)
class CountError:
    """Why the LC of ``node`` cannot count a Dataset's samples."""

    reason: str
    message: str


@dataclass(frozen=True)
class ReportOutcome:
    """What a report changed: ``ready_before``/``ready_after`` are the ``Ready`` condition's status (``None``:
    no condition)."""

    dataset: Mapping[str, Any]
    error: CountError | None
    ready_before: str | None
    ready_after: str | None

    @property
    def ready_changed(self) -> bool:
        return self.ready_before != self.ready_after


def number_of_samples(message: UpstreamMessage) -> int:
    value = message.content.get("numberOfSamples")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidReport(f"numberOfSamples must be a non-negative integer, got {value!r}")
    return value


def count_error(message: UpstreamMessage) -> CountError | None:
    """The report's ``error`` (``None`` when absent or null); ``InvalidReport`` for a malformed one. The message is
    cut to ``MAX_MESSAGE_CHARS``."""
    value = message.content.get("error")
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidReport(f"error must be an object with reason and message, got {type(value).__name__}")
    reason, text = value.get("reason"), value.get("message", "")
    if not isinstance(reason, str) or len(reason) > MAX_REASON_CHARS or not _REASON.fullmatch(reason):
        raise InvalidReport(f"error.reason must be a CamelCase word of at most {MAX_REASON_CHARS} characters, "
                            f"got {str(reason)[:MAX_REASON_CHARS]!r}")
    if not isinstance(text, str):
        raise InvalidReport(f"error.message must be a string, got {type(text).__name__}")
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[:MAX_MESSAGE_CHARS - 1] + "…"
    return CountError(reason, text)


def _ready(obj: Mapping[str, Any]) -> str | None:
    condition = get_condition((obj.get("status") or {}).get("conditions"), CONDITION_READY)
    return condition.get("status") if condition is not None else None


def apply_report(clientset: ClientsetBase, lister: Lister, message: UpstreamMessage) -> ReportOutcome | None:
    """Write the report onto the Dataset; ``None`` when the Dataset is gone or nothing changed."""
    count = number_of_samples(message)
    error = count_error(message)
    try:
        dataset = lister.namespaced(message.namespace).get(message.name)
    except errors.NotFoundError:
        return None
    now = meta.now_rfc3339()
    seen: dict[str, str | None] = {}

    def mutate(obj: dict) -> bool:
        status = obj.get("status")
        if not isinstance(status, dict):
            status = obj["status"] = {}
        seen["before"] = _ready(obj)
        status["numberOfSamples"] = count
        status["updateTime"] = now
        conditions = status.get("conditions")
        if error is not None or seen["before"] is not None:
            if not isinstance(conditions, list):
                conditions = status["conditions"] = []
            if error is not None:
                set_condition(conditions, CONDITION_READY, ConditionStatus.FALSE, error.reason,
                              f"node {message.node}: {error.message}", now)
            else:
                set_condition(conditions, CONDITION_READY, ConditionStatus.TRUE, REASON_SAMPLES_COUNTED,
                              f"the LocalController of node {message.node} counts the samples", now)
        return True

    client = clientset.sedna_v1alpha1().datasets(message.namespace)
    written = update_status(client, dataset, mutate)
    if written is None:
        return None
    return ReportOutcome(written, error, seen.get("before"), _ready(written))
