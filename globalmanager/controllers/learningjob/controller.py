"""The rules IncrementalLearningJob and LifelongLearningJob share (Sedna's ``sync`` + ``transitJobState``):
``LearningRules``, a frozen set of the functions the two kinds differ in (their spec view, policy, references, pods
and downstream plan), whose ``sync``/``state``/``to_edge`` are the kinds' ``Kind`` rules. The kind's state
(``ctx.state``, ``LearningState``) is its ``placement.EdgePlacement`` (the edge link's state source for the kind) and
the report grace.

Each sync:
1. reads the spec through the kind's typed view; a spec the view rejects is shown on the current condition
   (``reason`` ``InvalidSpec``, the message naming the field) with a Warning Event, and nothing else is done until it
   is fixed (never ``Failed``: a learning job's conditions are its stages);
2. resolves the job's Datasets/Models from the caches (``references``); a missing one is shown on the current
   condition (``reason`` ``DatasetNotFound``/``ModelNotFound``, a message naming it) with a Warning Event, never
   ``Failed``; the job is woken when it appears (``Kind.references`` index) and goes on. A train trigger whose
   metric never fires is shown the same way (``UnknownTriggerMetric``, ``triggers``) until the spec is fixed;
3. on the first sync sets ``startTime`` (IL first creates its inference pod unless the newest one is Pending or
   Running);
4. takes one step of the state machine (``fsm.next_step``) from the last condition and the phase of the stage's
   newest pod (found through the controller-UID index and the worker-type label): creates the stage's pod from
   the last condition's ``data.input`` (only when its every path lies inside the job's places, ``places``: else the
   stage is ``Failed``, reason ``PathOutsideJob``, with a Warning Event), restarts the inference pod, or patches
   ``sedna.io/<Stage>=<node>`` on the job, then appends the next condition (while a pod it created is not in the cache yet, a Starting/Running
   stage waits for that pod: the newest one cached may be the previous cycle's);
5. places the job on the LocalControllers (``ctx.state.placement``).

The status write appends the GM's condition only if the job's last condition is still the one the step was taken
from (a report appended meanwhile wins; the job is synced again by its update), so a report is never overwritten.
A stage pod that ended is turned into ``Completed``/``Failed`` only ``report_grace`` seconds after the GM first saw
it end, unless the LC's report (which carries the stage's output) arrived first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from apis import errors, meta
from apis.meta import Obj
from apis.record import WARNING
from apis.resources import DATASETS, PODS
from apis.sedna.constants import stage_node_annotation
from apis.sedna.v1alpha1 import Trigger
from apis.sedna.v1alpha1.common import Stage, StageConditionType
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.edge import DELETE
from globalmanager.runtime.references import MissingReference
from reconcile import Result

from .conditions import REPORTED_BY_LC, InvalidConditionData, condition_data, gm_condition
from .fsm import ANNOTATE_NODE, CREATE_POD, RESTART_INFERENCE, Policy, Step, next_step, stage_worker_type
from .placement import EdgePlacement, Plan
from .places import PathOutsideJob, confine_input
from .triggers import UNKNOWN_TRIGGER_METRIC, train_trigger_problem
from .workers import Secrets

__all__ = [
    "INVALID_SPEC",
    "LearningRules",
    "LearningSpec",
    "LearningState",
    "NOTE_REASONS",
    "POD_ORDER_ANNOTATION",
    "REPORT_GRACE",
    "Resolved",
    "dataset_refs",
    "newest_pod",
    "to_edge",
]

POD_ORDER_ANNOTATION = "sedna.io/condition-count"  # conditions the job had when the pod was created: newest first
INVALID_SPEC = "InvalidSpec"
NOTE_REASONS = ("DatasetNotFound", "ModelNotFound", "NodeNotFound", "SecretNotFound", "InvalidConditionData",
                UNKNOWN_TRIGGER_METRIC, INVALID_SPEC)
REPORT_GRACE = 5.0  # seconds an ended stage pod waits for the LC's report before the GM ends its stage
_TERMINAL = ("Succeeded", "Failed")

class _TrainSpec(Protocol):
    @property
    def trigger(self) -> Trigger | None: ...


class LearningSpec(Protocol):
    """What the shared rules read of a typed IL/LL spec (``ILJobSpec``, ``LLJobSpec``)."""

    @property
    def train_spec(self) -> _TrainSpec | None: ...


SpecT = TypeVar("SpecT", bound=LearningSpec)

Resolved = dict[str, dict[str, Any]]
"""The cached Datasets/Models a job references, by role (``dataset``, ``initialModel``, ...)."""


@dataclass
class LearningState:
    """The long-lived state of an IL/LL kind (``ctx.state``): where its jobs are placed, and the report grace."""

    placement: EdgePlacement
    report_grace: float = REPORT_GRACE


Ctx = KindContext[LearningState]


def dataset_refs(job: Obj) -> list[str]:
    """The Dataset a job names (an index function: never raises, whatever the spec)."""
    return [str(((job.get("spec") or {}).get("dataset") or {}).get("name") or "")]


def dataset_node(ctx: KindContext[Any], job: Obj) -> str:
    """The node of the job's Dataset (``""`` while it is unknown)."""
    try:
        dataset = ctx.lister(DATASETS).namespaced(meta.namespace(job)).get(dataset_refs(job)[0])
    except errors.NotFoundError:
        return ""
    return str((dataset.get("spec") or {}).get("nodeName") or "")


def newest_pod(ctx: KindContext[Any], job: Obj, stage: str) -> Obj | None:
    """The newest pod of the stage's worker type (Go's ``getSpecifiedPods``, by label through the index)."""
    label = f"{ctx.kind.lower()}.sedna.io/worker-type"
    wanted = stage_worker_type(stage)
    pods = [p for p in ctx.owned(PODS, job) if meta.labels(p).get(label) == wanted]

    def order(pod: Obj) -> tuple[int, str, str]:
        raw = meta.annotations(pod).get(POD_ORDER_ANNOTATION, "")
        return (int(raw) if raw.isdigit() else -1, meta.creation_timestamp(pod) or "", meta.name(pod))

    return max(pods, key=order, default=None)


def annotate(ctx: KindContext[Any], job: Obj, key: str, value: str) -> None:
    """Merge-patch annotation ``key`` on the job unless the cached job has it already (Go's addJobAnnotations)."""
    if meta.annotations(job).get(key) == value:
        return
    ctx.job_client(meta.namespace(job)).patch(meta.name(job), {"metadata": {"annotations": {key: value}}}, "merge")
    ctx.log.info("annotated job", key=_key(job), annotation=key, value=value)


def to_edge(ctx: Ctx, operation: str, job: Obj, old: Obj | None) -> None:
    """``Kind.to_edge``: a deleted job leaves every node; otherwise the nodes holding it follow its plan."""
    if operation == DELETE:
        ctx.state.placement.delete(job)
    else:
        ctx.state.placement.place(_key(job))


def _no_hook(ctx: Ctx, job: Obj) -> None:
    return None


@dataclass
class _Outcome:
    step: Step
    problem: tuple[str, str] | None = None
    built: bool = False  # a pod was built this sync (its Secrets were found)
    retry: bool = False  # a wait no event ends (a Secret)
    wait: float = 0.0  # sync again after this long (a stage pod's report grace)


@dataclass(frozen=True)
class LearningRules(Generic[SpecT]):
    """The rules of IL and LL; what differs between the two kinds:

    ``spec(job)`` the typed spec (``ValueError`` naming the field: the job waits, ``InvalidSpec``; it must have
    ``train_spec``); ``policy(spec)`` how Deploy goes (``fsm.Policy``); ``references(ctx, job, spec)`` the cached
    Datasets/Models it needs (``MissingReference``: the job waits); ``stage_pod(ctx, job, stage, refs, secrets)`` the
    Train or Eval pod built from the last condition's data (``InvalidConditionData`` if it lacks it);
    ``inference_pod(ctx, job, spec, refs, secrets)``; ``inference_created(ctx, job)`` after the inference pod was created
    (IL records the hot-update config file on the job); ``plan(ctx, job, dataset_node)`` where the job goes
    (``placement.Plan``); ``inference_at_start``: the inference pod is created on the first sync (IL)."""

    spec: Callable[[Obj], SpecT]
    policy: Callable[[SpecT], Policy]
    references: Callable[[Ctx, Obj, SpecT], Resolved]
    stage_pod: Callable[[Ctx, Obj, str, Resolved, Secrets], dict[str, Any]]
    inference_pod: Callable[[Ctx, Obj, SpecT, Resolved, Secrets], dict[str, Any]]
    plan: Callable[[Ctx, Obj, str], Plan]
    inference_created: Callable[[Ctx, Obj], None] = _no_hook
    inference_at_start: bool = False

    # -- Kind rules -------------------------------------------------------------------------------------------------
    def state(self, ctx: Ctx) -> LearningState:
        """``Kind.state``: the kind's placement, registered as the edge link's state source for the kind."""
        placement = EdgePlacement(ctx, functools.partial(self.plan, ctx), functools.partial(dataset_node, ctx))
        if ctx.edge is not None:
            ctx.edge.add_state_source(ctx.kind, placement.state_for)
        return LearningState(placement)

    def sync(self, ctx: Ctx, key: str, job: Obj) -> Result | None:
        status = job.get("status") or {}
        conditions = status.get("conditions") or []
        last = conditions[-1] if conditions else None
        problem: tuple[str, str] | None = None
        refs: Resolved | None = None
        spec: SpecT | None = None
        try:
            spec = self.spec(job)
        except ValueError as exc:
            problem = (INVALID_SPEC, f"{exc}; waiting for the spec to be fixed")
        if spec is not None:
            try:
                refs = self.references(ctx, job, spec)
            except MissingReference as exc:
                problem = (exc.reason, f"{exc}; waiting for it")
            trigger = spec.train_spec.trigger if spec.train_spec is not None else None
            condition = trigger.condition if trigger is not None else None
            problem = problem or train_trigger_problem(condition.metric if condition is not None else None)
        secrets = Secrets(ctx.clientset, meta.namespace(job))
        start, built, retry = not status.get("startTime") and spec is not None, False, False
        if start and self.inference_at_start and spec is not None:
            start, built, retry, problem = self._start_inference(ctx, job, spec, refs, secrets, problem)
        outcome = self._step(ctx, job, spec, last, refs, secrets) if spec is not None else _Outcome(Step())
        if outcome.problem is not None:
            problem = outcome.problem
        _write_status(ctx, key, job, last, len(conditions), outcome.step, start, problem, built or outcome.built)
        ctx.state.placement.place(key)
        if outcome.wait > 0:
            ctx.requeue_after(key, outcome.wait)
        return Result(requeue=True) if retry or outcome.retry else None

    # -- pods -------------------------------------------------------------------------------------------------------
    def _create_pod(self, ctx: Ctx, job: Obj, pod: dict[str, Any]) -> bool:
        """Create a stage's pod through ``ensure_worker``, its slot being the worker type at the job's current
        condition count; False when it must wait (the slot's pod created moments ago is not cached yet, or its
        recreation limit holds: the job is synced again then)."""
        order = str(len((job.get("status") or {}).get("conditions") or []))
        pod["metadata"].setdefault("annotations", {})[POD_ORDER_ANNOTATION] = order
        worker_type = meta.labels(pod).get(f"{ctx.kind.lower()}.sedna.io/worker-type", "")
        creation = ctx.ensure_worker(job, PODS, f"{meta.name(job)}-{worker_type}-{order}", lambda: pod, what="pod")
        return creation.wait <= 0 and not creation.pending

    def _restart_inference(self, ctx: Ctx, job: Obj, spec: SpecT, refs: Resolved, secrets: Secrets) -> bool:
        """Replace the inference pod; False when the new one must wait (``_create_pod``)."""
        pod = self.inference_pod(ctx, job, spec, refs, secrets)  # built first: a missing Secret leaves the old pod alone
        old = newest_pod(ctx, job, Stage.DEPLOY)
        if old is not None and ctx.delete_object(PODS, meta.namespace(old), meta.name(old)):
            ctx.log.info("deleted the inference pod to restart it", key=_key(job), pod=meta.name(old))
        if not self._create_pod(ctx, job, pod):
            return False
        self.inference_created(ctx, job)
        return True

    def _start_inference(self, ctx: Ctx, job: Obj, spec: SpecT, refs: Resolved | None, secrets: Secrets,
                         problem: tuple[str, str] | None) -> tuple[bool, bool, bool, tuple[str, str] | None]:
        """IL's first sync: the inference pod unless the newest is Pending/Running → (start, built, retry, problem)."""
        pod = newest_pod(ctx, job, Stage.DEPLOY)
        if pod is not None and (pod.get("status") or {}).get("phase") in ("Pending", "Running"):
            return True, False, False, problem
        if refs is None:
            return False, False, False, problem
        if ctx.creations_pending(job, PODS):
            return False, False, False, problem  # created by an earlier sync; the cache has not shown it yet
        try:
            if not self._create_pod(ctx, job, self.inference_pod(ctx, job, spec, refs, secrets)):
                return False, False, False, problem
        except MissingReference as exc:
            return False, False, True, (exc.reason, f"{exc}; waiting for it")
        self.inference_created(ctx, job)
        return True, True, False, problem

    def _step(self, ctx: Ctx, job: Obj, spec: SpecT, last: Mapping[str, Any] | None, refs: Resolved | None,
              secrets: Secrets) -> _Outcome:
        stage = (last or {}).get("stage") or ""
        ctype = (last or {}).get("type") or ""
        active = (StageConditionType.STARTING, StageConditionType.RUNNING)
        if ctype in active and ctx.creations_pending(job, PODS):
            # the stage's new pod is not in the cache yet: the newest one there may be the previous
            # cycle's (which would complete a stage that has not started); the new pod's event wakes us
            return _Outcome(Step())
        pod = newest_pod(ctx, job, stage) if last is not None else None
        phase = (pod.get("status") or {}).get("phase") if pod is not None else None
        step = next_step(stage, ctype, phase, self.policy(spec))
        if step.type == ctype:
            step = Step(step.action)  # Go appends only when the type changes
        ended = (StageConditionType.COMPLETED, StageConditionType.FAILED)
        if ctype in active and phase in _TERMINAL and step.type in ended:
            wait = _grace_left(ctx, job, pod)
            if wait > 0:
                return _Outcome(Step(), wait=wait)
        if step.action == ANNOTATE_NODE:
            node = str(((pod or {}).get("spec") or {}).get("nodeName") or "")
            if node:
                annotate(ctx, job, stage_node_annotation(stage), node)
            return _Outcome(step)
        if step.action not in (CREATE_POD, RESTART_INFERENCE):
            return _Outcome(step)
        if refs is None:
            return _Outcome(Step())  # the missing reference is shown already
        if ctx.creations_pending(job, PODS):
            return _Outcome(Step())  # a pod created moments ago is not in the cache yet; its event wakes us
        try:
            if step.action == CREATE_POD:
                confine_input(job, stage, condition_data(last), refs)
                created = self._create_pod(ctx, job, self.stage_pod(ctx, job, stage, refs, secrets))
            else:
                created = self._restart_inference(ctx, job, spec, refs, secrets)
        except MissingReference as exc:
            return _Outcome(Step(), (exc.reason, f"{exc}; waiting for it"), retry=True)
        except InvalidConditionData as exc:
            return _Outcome(Step(), ("InvalidConditionData", f"cannot create the {stage.lower()} pod: {exc}"))
        except PathOutsideJob as exc:
            return _Outcome(Step(stage=stage, type=StageConditionType.FAILED), (exc.reason, str(exc)))
        return _Outcome(step, built=True) if created else _Outcome(Step())


def _grace_left(ctx: Ctx, job: Obj, pod: Obj | None) -> float:
    """Seconds until an ended stage pod may complete its stage without the LC's report."""
    grace = ctx.state.report_grace
    if grace <= 0 or pod is None:
        return 0.0
    state, uid, now = ctx.job_state(job), meta.uid(pod), ctx.job_states.timer()
    if state.ended_stage_pod is None or state.ended_stage_pod[0] != uid:
        state.ended_stage_pod = (uid, now)
    return max(0.0, state.ended_stage_pod[1] + grace - now)


# -- status -----------------------------------------------------------------------------------------------------------
def _write_status(ctx: Ctx, key: str, job: Obj, last: Mapping[str, Any] | None, count: int, step: Step,
                  start: bool, problem: tuple[str, str] | None, built: bool) -> None:
    now = ctx.now()
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

    written = ctx.update_job_status(job, mutate)
    if written is None:
        return
    after = ((written.get("status") or {}).get("conditions") or [None])[-1] or {}
    if new is not None and (after.get("stage"), after.get("type")) == (new["stage"], new["type"]):
        ctx.log.info("job state changed", key=key, stage=after.get("stage"), type=after.get("type"),
                     previous=f"{(last or {}).get('stage', '')}/{(last or {}).get('type', '')}")
    noted = (after.get("reason"), after.get("message"))
    if problem is not None and noted[0] == problem[0] and noted != ((last or {}).get("reason"), (last or {}).get("message")):
        failed = new is not None and new["type"] == StageConditionType.FAILED
        ctx.log.warning("stage failed" if failed else "job waits", key=key, reason=problem[0], detail=problem[1])
        ctx.events.event(job, WARNING, problem[0], problem[1])


def _key(job: Obj) -> str:
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

