"""``LearningJobController``: what IncrementalLearningJob and LifelongLearningJob share (Sedna's ``sync`` +
``transitJobState``), on ``KindController``. A kind supplies its references, its pods and its downstream plan.

Each sync:
1. resolves the job's Datasets/Models from the caches (``references``); a missing one is shown on the current
   condition (``reason`` ``DatasetNotFound``/``ModelNotFound``, a message naming it) with a Warning Event, never
   ``Failed``; the job is woken when it appears (``REFERENCES`` index) and goes on. A train trigger whose metric
   never fires is shown the same way (``UnknownTriggerMetric``, ``triggers``) until the spec is fixed;
2. on the first sync sets ``startTime`` (IL first creates its inference pod unless the newest one is Pending or
   Running);
3. takes one step of the state machine (``fsm.next_step``) from the last condition and the phase of the stage's
   newest pod (found through the controller-UID index and the worker-type label): creates the stage's pod from
   the last condition's ``data.input``, restarts the inference pod, or patches ``sedna.io/<Stage>=<node>`` on the
   job, then appends the next condition (while a pod it created is not in the cache yet, a Starting/Running
   stage waits for that pod: the newest one cached may be the previous cycle's);
4. places the job on the LocalControllers (``placement.EdgePlacement``).

The status write appends the GM's condition only if the job's last condition is still the one the step was taken
from (a report appended meanwhile wins; the job is synced again by its update), so a report is never overwritten.
A stage pod that ended is turned into ``Completed``/``Failed`` only ``report_grace`` seconds after the GM first saw
it end, unless the LC's report (which carries the stage's output) arrived first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from apis import errors, meta
from apis.record import WARNING
from apis.resources import DATASETS, PODS
from apis.sedna.constants import COMPLETED, DEPLOY, FAILED, RUNNING, STARTING, stage_node_annotation
from globalmanager.controllers.model import model_router
from globalmanager.runtime.controller import KindController
from globalmanager.runtime.edge import DELETE
from globalmanager.runtime.references import MissingReference

from .conditions import REPORTED_BY_LC, InvalidConditionData, gm_condition
from .fsm import ANNOTATE_NODE, CREATE_POD, RESTART_INFERENCE, Policy, Step, next_step, stage_worker_type
from .placement import EdgePlacement, Plan
from .triggers import UNKNOWN_TRIGGER_METRIC, train_trigger_problem
from .workers import Secrets

__all__ = ["LearningJobController", "NOTE_REASONS", "POD_ORDER_ANNOTATION", "dataset_refs"]

POD_ORDER_ANNOTATION = "sedna.io/condition-count"  # conditions the job had when the pod was created: newest first
NOTE_REASONS = ("DatasetNotFound", "ModelNotFound", "NodeNotFound", "SecretNotFound", "InvalidConditionData",
                UNKNOWN_TRIGGER_METRIC)
_TERMINAL = ("Succeeded", "Failed")


def dataset_refs(job: Mapping[str, Any]) -> list[str]:
    return [str(((job.get("spec") or {}).get("dataset") or {}).get("name") or "")]


@dataclass
class _Outcome:
    step: Step
    problem: tuple[str, str] | None = None
    built: bool = False  # a pod was built this sync (its Secrets were found)
    retry: bool = False  # a wait no event ends (a Secret)
    wait: float = 0.0  # sync again after this long (a stage pod's report grace)


class LearningJobController(KindController):
    """Base of the IL and LL controllers; see the module doc. Subclasses set ``NAME``, ``JOB_RESOURCE``,
    ``REFERENCES`` (with ``DATASETS: dataset_refs``) and implement the hooks below."""

    OWNS = (PODS,)
    USES_MODELS = False  # route the job's Models to its nodes (IL)
    INFERENCE_AT_START = False  # create the inference pod on the first sync (IL)
    report_grace = 5.0

    def __init__(self, clientset: Any, informer_factory: Any, workers: int = 2, **kwargs: Any) -> None:
        super().__init__(clientset, informer_factory, workers, **kwargs)
        self.placement = EdgePlacement(self, self.plan, self.dataset_node)
        if self.edge is not None:
            self.edge.add_state_source(self.kind, self.placement.state_for)

    @classmethod
    def from_context(cls, ctx: Any) -> Any:
        controller = super().from_context(ctx)
        if cls.USES_MODELS and ctx.edge is not None:
            controller.placement.router = model_router(ctx)
        return controller

    # -- hooks ------------------------------------------------------------------------------------------------------
    def policy(self, job: Mapping[str, Any]) -> Policy:
        raise NotImplementedError

    def references(self, job: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """The cached Datasets/Models the job needs, by role; ``MissingReference`` when one is missing."""
        raise NotImplementedError

    def stage_pod(self, job: Mapping[str, Any], stage: str, refs: dict[str, dict[str, Any]], secrets: Secrets) -> dict[str, Any]:
        """The Train or Eval pod built from the last condition's data (``InvalidConditionData`` if it lacks it)."""
        raise NotImplementedError

    def inference_pod(self, job: Mapping[str, Any], refs: dict[str, dict[str, Any]], secrets: Secrets) -> dict[str, Any]:
        raise NotImplementedError

    def plan(self, job: Mapping[str, Any], dataset_node: str) -> Plan:
        raise NotImplementedError

    def inference_created(self, job: Mapping[str, Any]) -> None:
        """Called after the inference pod was created (IL records the hot-update config file on the job)."""

    # -- edge -------------------------------------------------------------------------------------------------------
    def dataset_node(self, job: Mapping[str, Any]) -> str:
        name = dataset_refs(job)[0]
        try:
            dataset = self.reference_listers[DATASETS].namespaced(meta.namespace(job)).get(name)
        except errors.NotFoundError:
            return ""
        return str((dataset.get("spec") or {}).get("nodeName") or "")

    def sync_to_edge(self, operation: str, job: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> None:
        if operation == DELETE:
            self.placement.delete(job)
        else:
            self.placement.place(f"{meta.namespace(job)}/{meta.name(job)}")

    # -- pods -------------------------------------------------------------------------------------------------------
    def newest_pod(self, job: Mapping[str, Any], stage: str) -> Mapping[str, Any] | None:
        """The newest pod of the stage's worker type (Go's ``getSpecifiedPods``, by label through the index)."""
        label = f"{self.kind.lower()}.sedna.io/worker-type"
        wanted = stage_worker_type(stage)
        pods = [p for p in self.owned(PODS, job) if meta.labels(p).get(label) == wanted]

        def order(pod: Mapping[str, Any]) -> tuple[int, str, str]:
            raw = meta.annotations(pod).get(POD_ORDER_ANNOTATION, "")
            return (int(raw) if raw.isdigit() else -1, meta.creation_timestamp(pod) or "", meta.name(pod))

        return max(pods, key=order, default=None)

    def create_pod(self, job: Mapping[str, Any], pod: dict[str, Any]) -> bool:
        """Create a stage's pod through ``ensure_worker``, its slot being the worker type at the job's current
        condition count; False when it must wait (the slot's pod created moments ago is not cached yet, or its
        recreation limit holds: the job is synced again then)."""
        order = str(len((job.get("status") or {}).get("conditions") or []))
        pod["metadata"].setdefault("annotations", {})[POD_ORDER_ANNOTATION] = order
        worker_type = meta.labels(pod).get(f"{self.kind.lower()}.sedna.io/worker-type", "")
        creation = self.ensure_worker(job, PODS, f"{meta.name(job)}-{worker_type}-{order}", lambda: pod, what="pod")
        return creation.wait <= 0 and not creation.pending

    def restart_inference(self, job: Mapping[str, Any], refs: dict[str, dict[str, Any]], secrets: Secrets) -> bool:
        """Replace the inference pod; False when the new one must wait (``create_pod``)."""
        pod = self.inference_pod(job, refs, secrets)  # built first: a missing Secret leaves the old pod alone
        old = self.newest_pod(job, DEPLOY)
        if old is not None and self.delete_object(PODS, meta.namespace(old), meta.name(old)):
            self._log.info("deleted the inference pod to restart it", key=self._key(job), pod=meta.name(old))
        if not self.create_pod(job, pod):
            return False
        self.inference_created(job)
        return True

    def annotate(self, job: Mapping[str, Any], key: str, value: str) -> None:
        """Merge-patch annotation ``key`` on the job unless the cached job has it already (Go's addJobAnnotations)."""
        if meta.annotations(job).get(key) == value:
            return
        self.job_client(meta.namespace(job)).patch(meta.name(job), {"metadata": {"annotations": {key: value}}}, "merge")
        self._log.info("annotated job", key=self._key(job), annotation=key, value=value)

    # -- sync -------------------------------------------------------------------------------------------------------
    def sync(self, key: str) -> bool:
        job = self.get_job(key)
        if job is None:
            self.forget_job(key)
            self.placement.forget(key)
            return True  # its pods go with it (ownerReferences)
        status = job.get("status") or {}
        conditions = status.get("conditions") or []
        last = conditions[-1] if conditions else None
        problem: tuple[str, str] | None = None
        refs: dict[str, dict[str, Any]] | None = None
        try:
            refs = self.references(job)
        except MissingReference as exc:
            problem = (exc.reason, f"{exc}; waiting for it")
        problem = problem or train_trigger_problem(job)
        secrets = Secrets(self.clientset, meta.namespace(job))
        start, built, retry = not status.get("startTime"), False, False
        if start and self.INFERENCE_AT_START:
            start, built, retry, problem = self._start_inference(job, refs, secrets, problem)
        outcome = self._step(job, last, refs, secrets)
        if outcome.problem is not None:
            problem = outcome.problem
        self._write_status(key, job, last, len(conditions), outcome.step, start, problem, built or outcome.built)
        self.placement.place(key)
        if outcome.wait > 0:
            self.queue.add_after(key, outcome.wait)
        return self.retry_later(key) if retry or outcome.retry else True

    def _start_inference(self, job: Mapping[str, Any], refs: dict[str, dict[str, Any]] | None, secrets: Secrets,
                         problem: tuple[str, str] | None) -> tuple[bool, bool, bool, tuple[str, str] | None]:
        """IL's first sync: the inference pod unless the newest is Pending/Running → (start, built, retry, problem)."""
        pod = self.newest_pod(job, DEPLOY)
        if pod is not None and (pod.get("status") or {}).get("phase") in ("Pending", "Running"):
            return True, False, False, problem
        if refs is None:
            return False, False, False, problem
        if self.creations_pending(job, PODS):
            return False, False, False, problem  # created by an earlier sync; the cache has not shown it yet
        try:
            if not self.create_pod(job, self.inference_pod(job, refs, secrets)):
                return False, False, False, problem
        except MissingReference as exc:
            return False, False, True, (exc.reason, f"{exc}; waiting for it")
        self.inference_created(job)
        return True, True, False, problem

    def _step(self, job: Mapping[str, Any], last: Mapping[str, Any] | None,
              refs: dict[str, dict[str, Any]] | None, secrets: Secrets) -> _Outcome:
        stage = (last or {}).get("stage") or ""
        ctype = (last or {}).get("type") or ""
        if ctype in (STARTING, RUNNING) and self.creations_pending(job, PODS):
            # the stage's new pod is not in the cache yet: the newest one there may be the previous
            # cycle's (which would complete a stage that has not started); the new pod's event wakes us
            return _Outcome(Step())
        pod = self.newest_pod(job, stage) if last is not None else None
        phase = (pod.get("status") or {}).get("phase") if pod is not None else None
        step = next_step(stage, ctype, phase, self.policy(job))
        if step.type == ctype:
            step = Step(step.action)  # Go appends only when the type changes
        if ctype in (STARTING, RUNNING) and phase in _TERMINAL and step.type in (COMPLETED, FAILED):
            wait = self._grace_left(job, pod)
            if wait > 0:
                return _Outcome(Step(), wait=wait)
        if step.action == ANNOTATE_NODE:
            node = str(((pod or {}).get("spec") or {}).get("nodeName") or "")
            if node:
                self.annotate(job, stage_node_annotation(stage), node)
            return _Outcome(step)
        if step.action not in (CREATE_POD, RESTART_INFERENCE):
            return _Outcome(step)
        if refs is None:
            return _Outcome(Step())  # the missing reference is shown already
        if self.creations_pending(job, PODS):
            return _Outcome(Step())  # a pod created moments ago is not in the cache yet; its event wakes us
        try:
            if step.action == CREATE_POD:
                created = self.create_pod(job, self.stage_pod(job, stage, refs, secrets))
            else:
                created = self.restart_inference(job, refs, secrets)
        except MissingReference as exc:
            return _Outcome(Step(), (exc.reason, f"{exc}; waiting for it"), retry=True)
        except InvalidConditionData as exc:
            return _Outcome(Step(), ("InvalidConditionData", f"cannot create the {stage.lower()} pod: {exc}"))
        return _Outcome(step, built=True) if created else _Outcome(Step())

    def _grace_left(self, job: Mapping[str, Any], pod: Mapping[str, Any] | None) -> float:
        """Seconds until an ended stage pod may complete its stage without the LC's report."""
        if self.report_grace <= 0 or pod is None:
            return 0.0
        state, uid, now = self.job_state(job), meta.uid(pod), self.job_states.timer()
        if state.ended_stage_pod is None or state.ended_stage_pod[0] != uid:
            state.ended_stage_pod = (uid, now)
        return max(0.0, state.ended_stage_pod[1] + self.report_grace - now)

    # -- status -----------------------------------------------------------------------------------------------------
    def _write_status(self, key: str, job: Mapping[str, Any], last: Mapping[str, Any] | None, count: int, step: Step,
                      start: bool, problem: tuple[str, str] | None, built: bool) -> None:
        now = self.now()
        new = gm_condition(step.stage, step.type, now) if step.appends else None
        expected = _identity(last)

        def mutate(obj: dict[str, Any]) -> bool:
            status = obj.get("status")
            if not isinstance(status, dict):
                status = obj["status"] = {}
            changed = False
            if start and not status.get("startTime"):
                status["startTime"] = now
                changed = True
            conditions = status.get("conditions") or []
            if len(conditions) != count or _identity(conditions[-1] if conditions else None) != expected:
                return changed  # a report was appended meanwhile: the next sync starts from it
            if new is not None:
                conditions.append(dict(new))
                status["conditions"] = conditions
                changed = True
            if conditions:
                changed = _note(conditions[-1], problem, built) or changed
            return changed

        written = self.update_job_status(job, mutate)
        if written is None:
            return
        after = ((written.get("status") or {}).get("conditions") or [None])[-1] or {}
        if new is not None and (after.get("stage"), after.get("type")) == (new["stage"], new["type"]):
            self._log.info("job state changed", key=key, stage=after.get("stage"), type=after.get("type"),
                           previous=f"{(last or {}).get('stage', '')}/{(last or {}).get('type', '')}")
        noted = (after.get("reason"), after.get("message"))
        if problem is not None and noted[0] == problem[0] and noted != ((last or {}).get("reason"), (last or {}).get("message")):
            self._log.warning("job waits", key=key, reason=problem[0], detail=problem[1])
            self.recorder.event(job, WARNING, problem[0], problem[1])

    @staticmethod
    def _key(job: Mapping[str, Any]) -> str:
        return f"{meta.namespace(job)}/{meta.name(job)}"


def _identity(cond: Mapping[str, Any] | None) -> tuple[Any, ...] | None:
    if cond is None:
        return None
    return tuple(cond.get(k) for k in ("type", "stage", "data", "lastTransitionTime"))


def _reported_message(cond: Mapping[str, Any]) -> str:
    """The message of a reported condition without a note (``""`` for the GM's own). A note never lands on a
    condition carrying an LC's reason: only ``Failed`` ones do, and the GM moves past them in the same write."""
    if not cond.get("data"):
        return ""
    message = str(cond.get("message") or "")
    if cond.get("reason") in NOTE_REASONS or not message.startswith(REPORTED_BY_LC):
        return REPORTED_BY_LC
    return message


def _note(cond: dict[str, Any], problem: tuple[str, str] | None, built: bool) -> bool:
    """Show ``problem`` on the current condition, or clear a note that no longer holds; True when changed."""
    base = _reported_message(cond)
    if problem is not None:
        reason, detail = problem
        message = f"{base}; {detail}" if base else detail
        if cond.get("reason") == reason and cond.get("message") == message:
            return False
        cond["reason"], cond["message"] = reason, message
        return True
    reason = str(cond.get("reason") or "")
    if reason not in NOTE_REASONS or (reason in ("SecretNotFound", "InvalidConditionData") and not built):
        return False
    del cond["reason"]
    if base:
        cond["message"] = base
    else:
        cond.pop("message", None)
    return True

