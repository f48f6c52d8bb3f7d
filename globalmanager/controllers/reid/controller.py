"""The ReidJob kind (Sedna's ``reid`` controller, with the JobSpec honoured) and the rules of a job run as one
worker pod (``OnePodJob``), which VideoAnalytics reuses with its Model and Service.

* One worker pod from ``spec.template`` (``workers.py``), controller-owned by the job (deleting the job deletes it).
* Status (``runtime.jobstatus``): ``phase`` ``Running`` once the pod exists; ``Succeeded`` with condition
  ``Completed``, ``completionTime`` and a Normal Event ``Completed`` when it succeeded; ``Failed`` with condition
  ``Failed`` and a Warning Event: reason ``BackoffLimitExceeded`` once its failures (failed pods, restarts of an
  ``OnFailure`` pod) exceed ``spec.backoffLimit`` (default 6, as Kubernetes; until then a failed pod is replaced),
  ``DeadlineExceeded`` once the job ran ``spec.activeDeadlineSeconds`` (its running pod is deleted), ``InvalidSpec``
  (a spec the typed view rejects, or a missing template); ``Pending`` while a Model or Secret it needs is missing
  (VideoAnalytics). A finished job is final.
* Self-healing: a pod deleted from under a live job is replaced by ``sync``; a new pod (replacement or retry) at most
  once per 5 s, never after the job is gone (asked from the API server).
* Spec changes: a new template (or ``kafkaSupport``, or VideoAnalytics' Model) replaces a running pod built from the
  old one; ``backoffLimit``/``activeDeadlineSeconds`` apply at once without a restart.
* Edge: nothing goes down (as in Go Sedna); reports become conditions with ``data`` (``runtime.reports.report_condition``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from apis import meta
from apis.meta import Obj
from apis.record import NORMAL
from apis.resources import PODS, REID_JOBS
from apis.sedna.v1alpha1 import ReidJobSpec
from apis.typed import spec_of
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.jobspec import (
    BACKOFF_LIMIT_EXCEEDED,
    BACKOFF_LIMIT_MESSAGE,
    DEADLINE_EXCEEDED,
    DEADLINE_MESSAGE,
    backoff_limit,
    deadline_left,
    pod_failures,
)
from globalmanager.runtime.jobstatus import JobObservation, create_or_wait, is_job_finished, write_job_status
from globalmanager.runtime.kind import Kind
from globalmanager.runtime.pods import count_pods, is_pod_active
from globalmanager.runtime.references import MissingReference
from globalmanager.runtime.reports import report_condition
from globalmanager.runtime.revisions import spec_hash_matches
from reconcile import Result

from .workers import REID_WORKER, job_worker_param, worker_pod

__all__ = ["COND_COMPLETED", "KIND", "NAME", "OnePodJob"]

COND_COMPLETED = "Completed"
TIME_FIELDS = ("lastHeartbeatTime", "lastTransitionTime")

Ctx = KindContext[None]


def reid_spec(job: Obj) -> ReidJobSpec:
    """The typed spec; ``ValueError`` naming the field for a spec the view rejects."""
    spec = spec_of(ReidJobSpec, job)
    if spec is None or spec.template is None:
        raise ValueError("spec.template is required")
    return spec


def _no_references(ctx: Ctx, job: Obj) -> Obj | None:
    return None


def _reid_source(ctx: Ctx, job: Obj, spec: ReidJobSpec, refs: Obj | None) -> dict[str, Any]:
    return {"template": spec.template, "kafkaSupport": bool(spec.kafka_support),
            "lcServer": ctx.lc_server}


def _reid_pod(ctx: Ctx, job: Obj, refs: Obj | None, source: dict[str, Any]) -> dict[str, Any]:
    return worker_pod(job, job_worker_param(job, REID_WORKER, ctx.lc_server), source)


def _no_companions(ctx: Ctx, job: Obj) -> None:
    return None


@dataclass(frozen=True)
class OnePodJob:
    """The rules of a job run as one worker pod; what differs between the kinds that use them:

    ``spec(job)`` the typed spec (``ValueError``: the job fails ``InvalidSpec``); ``resolve(ctx, job)`` the object
    the pod is built from (``MissingReference``: the job waits); ``source(ctx, job, spec, refs)`` what the pod is
    built from (a change replaces it); ``build(ctx, job, refs, source)`` the pod; ``companions(ctx, job)`` objects
    that go with a running pod (a Service)."""

    worker_type: str
    spec: Callable[[Obj], ReidJobSpec] = reid_spec
    resolve: Callable[[Ctx, Obj], Obj | None] = _no_references
    source: Callable[[Ctx, Obj, ReidJobSpec, Obj | None], dict[str, Any]] = _reid_source
    build: Callable[[Ctx, Obj, Obj | None, dict[str, Any]], dict[str, Any]] = _reid_pod
    companions: Callable[[Ctx, Obj], None] = _no_companions

    def sync(self, ctx: Ctx, key: str, job: Obj) -> Result | None:
        if is_job_finished(job.get("status"), COND_COMPLETED):
            return None
        obs = JobObservation(retried=True)
        retry = False
        try:
            spec = self.spec(job)
        except ValueError as exc:
            obs.failure = ("InvalidSpec", str(exc))
        else:
            retry = create_or_wait(ctx, job, obs, lambda: self._reconcile(ctx, key, job, spec, obs))
        write_job_status(ctx, key, job, obs, complete_type=COND_COMPLETED, time_fields=TIME_FIELDS,
                         failed_message=f"the worker of {ctx.kind} failed")
        return Result(requeue=True) if retry else None

    def _reconcile(self, ctx: Ctx, key: str, job: Obj, spec: ReidJobSpec, obs: JobObservation) -> None:
        pods = ctx.owned(PODS, job)
        refs: Obj | None = None
        source: dict[str, Any] | None = None
        missing: MissingReference | None = None  # a pod that runs keeps running when its Model goes
        try:
            refs = self.resolve(ctx, job)
            source = self.source(ctx, job, spec, refs)
        except MissingReference as exc:
            missing = exc
        current = pods if source is None else [p for p in pods if spec_hash_matches(p, source)]
        _delete(ctx, job, [p for p in pods if is_pod_active(p) and p not in current], "built from an older spec")
        obs.counts = count_pods(current)
        obs.counts["active"] += ctx.creations_pending(job, PODS)
        left = deadline_left(spec, (job.get("status") or {}).get("startTime"), ctx.now())
        if left == 0:
            obs.failure = (DEADLINE_EXCEEDED, DEADLINE_MESSAGE)
        elif pod_failures(current) > backoff_limit(spec):
            obs.failure = (BACKOFF_LIMIT_EXCEEDED, BACKOFF_LIMIT_MESSAGE)
        if obs.failure is not None:
            _delete(ctx, job, [p for p in current if is_pod_active(p)], f"the job failed: {obs.failure[0]}")
            obs.counts["active"] = 0
            return
        if left is not None:
            ctx.requeue_after(key, left)  # the deadline ends the job even if nothing else happens
        if not obs.counts["active"] and not obs.counts["succeeded"]:
            if source is None:
                assert missing is not None  # the source is unknown only when a reference is missing
                raise missing  # a new pod is needed: the job waits for what it references
            # after the first pod (a replacement, a retry), at most one new pod per 5 s
            creation = ctx.ensure_worker(
                job, PODS, f"{meta.name(job)}-{self.worker_type}", lambda: self.build(ctx, job, refs, source),
                what=f"{self.worker_type} pod", recreation=bool(pods),
            )
            obs.counts["active"] += 0 if creation.created is None else 1
        if obs.counts["active"]:
            self.companions(ctx, job)


def _delete(ctx: Ctx, job: Obj, pods: list[Obj], why: str) -> None:
    for pod in pods:
        if ctx.delete_object(PODS, meta.namespace(pod), meta.name(pod)):
            ctx.events.event(job, NORMAL, "SuccessfulDelete", f"deleted pod {meta.name(pod)}: {why}")


REID = OnePodJob(worker_type=REID_WORKER)

KIND: Kind[None] = Kind(name="Reid", resource=REID_JOBS, sync=REID.sync, owns=(PODS,), from_edge=report_condition)
NAME = KIND.name
