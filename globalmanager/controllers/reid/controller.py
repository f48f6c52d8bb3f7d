"""The ReidJob controller (Sedna's ``reid`` controller, with the JobSpec honoured); ``VideoAnalyticsController``
subclasses it.

* One worker pod from ``spec.template`` (``workers.py``), controller-owned by the job (deleting the job deletes it).
* Status (``runtime.jobstatus``): ``phase`` ``Running`` once the pod exists; ``Succeeded`` with condition
  ``Completed``, ``completionTime`` and a Normal Event ``Completed`` when it succeeded; ``Failed`` with condition
  ``Failed`` and a Warning Event: reason ``BackoffLimitExceeded`` once its failures (failed pods, restarts of an
  ``OnFailure`` pod) exceed ``spec.backoffLimit`` (default 6, as Kubernetes; until then a failed pod is replaced),
  ``DeadlineExceeded`` once the job ran ``spec.activeDeadlineSeconds`` (its running pod is deleted), ``InvalidSpec``;
  ``Pending`` while a Model or Secret it needs is missing (VideoAnalytics). A finished job is final.
* Self-healing: a pod deleted from under a live job is replaced by ``sync``; a new pod (replacement or retry) at most
  once per 5 s, never after the job is gone (asked from the API server).
* Spec changes: a new template (or ``kafkaSupport``, or VideoAnalytics' Model) replaces a running pod built from the
  old one; ``backoffLimit``/``activeDeadlineSeconds`` apply at once without a restart.
* Edge: nothing goes down (as in Go Sedna); reports become conditions with ``data`` (``runtime.reports.report_condition``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.meta import Obj
from apis.record import NORMAL
from apis.resources import PODS, REID_JOBS, GroupVersionResource
from globalmanager.runtime.controller import KindController
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
from globalmanager.runtime.pods import count_pods, is_pod_active
from globalmanager.runtime.references import MissingReference
from globalmanager.runtime.reports import report_condition
from globalmanager.runtime.revisions import spec_hash_matches

from .workers import REID_WORKER, job_worker_param, worker_pod

__all__ = ["COND_COMPLETED", "NAME", "ReidController", "new_controller"]

COND_COMPLETED = "Completed"
TIME_FIELDS = ("lastHeartbeatTime", "lastTransitionTime")


class ReidController(KindController):
    NAME = "Reid"
    JOB_RESOURCE = REID_JOBS
    OWNS: tuple[GroupVersionResource, ...] = (PODS,)
    WORKER_TYPE = REID_WORKER
    update_from_edge = report_condition

    # -- what a kind adds (VideoAnalytics overrides these) --------------------------------------------------------
    def spec_problem(self, job: Obj) -> str:
        if not isinstance((job.get("spec") or {}).get("template"), Mapping):
            return "spec.template is required"
        return ""

    def resolve(self, job: Obj) -> Any:
        """The objects the pod is built from (none for Reid); raises ``MissingReference``."""
        return None

    def pod_source(self, job: Obj, refs: Any) -> dict[str, Any]:
        """What the pod is built from: a change of it replaces the pod."""
        spec = job.get("spec") or {}
        return {"template": spec.get("template"), "kafkaSupport": bool(spec.get("kafkaSupport")), "lcServer": self.lc_server}

    def build_pod(self, job: Obj, refs: Any, source: Any) -> dict[str, Any]:
        return worker_pod(job, job_worker_param(job, self.WORKER_TYPE, self.lc_server), source)

    def ensure_companions(self, job: Obj) -> None:
        """Objects that go with the pod (VideoAnalytics: its Service); none for Reid."""

    # -- sync -----------------------------------------------------------------------------------------------------
    def sync(self, key: str) -> bool:
        job = self.get_job(key)
        if job is None:
            self.forget_job(key)
            return True  # gone: its pod is garbage-collected (ownerReferences)
        if is_job_finished(job.get("status"), COND_COMPLETED):
            return True
        obs = JobObservation(retried=True)
        retry = False
        problem = self.spec_problem(job)
        if problem:
            obs.failure = ("InvalidSpec", problem)
        else:
            retry = create_or_wait(self, job, obs, lambda: self._reconcile(key, job, obs))
        write_job_status(self, key, job, obs, complete_type=COND_COMPLETED, time_fields=TIME_FIELDS,
                         failed_message=f"the worker of {self.kind} failed")
        return self.retry_later(key) if retry else True

    def _reconcile(self, key: str, job: Obj, obs: JobObservation) -> None:
        spec = job.get("spec") or {}
        pods = self.owned(PODS, job)
        refs: Any = None
        source: dict[str, Any] | None = None
        missing: MissingReference | None = None  # a pod that runs keeps running when its Model goes
        try:
            refs = self.resolve(job)
            source = self.pod_source(job, refs)
        except MissingReference as exc:
            missing = exc
        current = pods if source is None else [p for p in pods if spec_hash_matches(p, source)]
        self._delete(job, [p for p in pods if is_pod_active(p) and p not in current], "built from an older spec")
        obs.counts = count_pods(current)
        obs.counts["active"] += self.creations_pending(job, PODS)
        left = deadline_left(spec, job.get("status"), self.now())
        if left == 0:
            obs.failure = (DEADLINE_EXCEEDED, DEADLINE_MESSAGE)
        elif pod_failures(current) > backoff_limit(spec):
            obs.failure = (BACKOFF_LIMIT_EXCEEDED, BACKOFF_LIMIT_MESSAGE)
        if obs.failure is not None:
            self._delete(job, [p for p in current if is_pod_active(p)], f"the job failed: {obs.failure[0]}")
            obs.counts["active"] = 0
            return
        if left is not None:
            self.queue.add_after(key, left)  # the deadline ends the job even if nothing else happens
        if not obs.counts["active"] and not obs.counts["succeeded"]:
            if missing is not None:
                raise missing  # a new pod is needed: the job waits for what it references
            obs.counts["active"] += self._create_pod(job, refs, source)
        if obs.counts["active"]:
            self.ensure_companions(job)

    def _create_pod(self, job: Obj, refs: Any, source: Any) -> int:
        """Create the job's pod; after the first one (a replacement, a retry), at most one new pod per 5 s."""
        creation = self.ensure_worker(
            job, PODS, f"{meta.name(job)}-{self.WORKER_TYPE}", lambda: self.build_pod(job, refs, source),
            what=f"{self.WORKER_TYPE} pod", recreation=bool(self.owned(PODS, job)),
        )
        return 0 if creation.created is None else 1

    def _delete(self, job: Obj, pods: list[Obj], why: str) -> None:
        for pod in pods:
            if self.delete_object(PODS, meta.namespace(pod), meta.name(pod)):
                self.recorder.event(job, NORMAL, "SuccessfulDelete", f"deleted pod {meta.name(pod)}: {why}")


NAME = ReidController.NAME
new_controller = ReidController.from_context
