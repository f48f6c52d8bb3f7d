"""What the ``batch/v1`` JobSpec inlined in a Sedna job (ReidJob, VideoAnalyticsJob) means for its worker pod, read
as the Kubernetes Job controller reads it.

The spec is the typed view (``apis.sedna.v1alpha1.JobSpecFields``).

* ``backoff_limit(spec)``: ``spec.backoffLimit``, 6 when unset (Kubernetes' default): the failures tolerated
  (retried with a new pod) before the job fails with reason ``BackoffLimitExceeded``.
* ``pod_failures(pods)``: failed pods plus, for pods with ``restartPolicy: OnFailure`` (restarted in place by the
  kubelet), their containers' restarts (Kubernetes' ``pastBackoffLimitOnFailure``).
* ``deadline_left(spec, start_time, now)``: seconds left of ``spec.activeDeadlineSeconds``, counted from
  ``status.startTime``; ``None`` without a deadline (or before the job started). At 0 the job fails with reason
  ``DeadlineExceeded`` and its running pods are deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from apis import meta
from apis.sedna.v1alpha1 import JobSpecFields

__all__ = [
    "BACKOFF_LIMIT_EXCEEDED",
    "BACKOFF_LIMIT_MESSAGE",
    "DEADLINE_EXCEEDED",
    "DEADLINE_MESSAGE",
    "DEFAULT_BACKOFF_LIMIT",
    "backoff_limit",
    "deadline_left",
    "pod_failures",
]

DEFAULT_BACKOFF_LIMIT = 6
BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
BACKOFF_LIMIT_MESSAGE = "Job has reached the specified backoff limit"
DEADLINE_EXCEEDED = "DeadlineExceeded"
DEADLINE_MESSAGE = "Job was active longer than specified deadline"


def backoff_limit(spec: JobSpecFields) -> int:
    return DEFAULT_BACKOFF_LIMIT if spec.backoff_limit is None else spec.backoff_limit


def pod_failures(pods: Iterable[Mapping[str, Any]]) -> int:
    failures = 0
    for pod in pods:
        status = pod.get("status") or {}
        if status.get("phase") == "Failed":
            failures += 1
        elif (pod.get("spec") or {}).get("restartPolicy") == "OnFailure" and status.get("phase") != "Succeeded":
            statuses = [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]
            failures += sum(int(c.get("restartCount") or 0) for c in statuses)
    return failures


def deadline_left(spec: JobSpecFields, start_time: str | None, now: str) -> float | None:
    deadline = spec.active_deadline_seconds
    if deadline is None or not start_time:
        return None
    elapsed = (meta.parse_time(now) - meta.parse_time(start_time)).total_seconds()
    return max(0.0, float(deadline) - elapsed)
