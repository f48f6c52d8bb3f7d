"""The FederatedLearningJob kind (Sedna's ``federatedlearning`` controller, state kept per job): ``KIND``.

* A job's workers (``workers.py``): the aggregation pod, its Service ``<job>-aggregation`` (port 7363) and one
  training pod per ``spec.trainingWorkers[i]``; every sync creates exactly the workers that have no pod of the
  current generation (the rest of a set whose creation failed part-way, a pod whose recreation was refused); all are
  controller-owned by the job (deleting it deletes them).
* Status (``runtime.jobstatus``): phase ``Running``; ``Failed`` with condition ``Failed``/``workerFailed`` and a
  Warning Event as soon as a worker failed; ``Succeeded`` with condition ``Complete``, ``completionTime`` and a Normal
  Event ``Completed`` once every worker succeeded; ``Pending`` while a Model, Dataset or Secret it needs is missing
  (Warning Event naming it; the job is woken when the Model or Dataset appears). A finished job is final.
* Spec change (a new ``metadata.generation``): that job's pods, built from the old generation (their
  ``sedna.io/job-generation`` annotation), are deleted and a new set is created from the new spec; the job itself is
  never written back (no ``update`` of the object). Another job is never touched.
* Self-healing, all per job (``JobState``): a pod deleted from under a live job is recreated (by the delete handler,
  else by ``sync``, which waits out the limit and requeues the job) at most once per 5 s per worker, never while
  that job's pods are being replaced (from the spec change until the old pods are gone), never a pod of an older
  generation or a worker whose pod had finished, never after the job is gone (asked from the API server).
* Edge: ``downstream.py`` (to each training node) and ``upstream.py`` (rounds, the aggregation Model's metrics).
* The spec is read through the typed view (``FederatedLearningJob``); a spec it rejects, or one without an
  aggregation template or training workers, fails the job ``InvalidSpec`` naming the field.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from typing import Any

from apis import meta
from apis.meta import Obj
from apis.record import NORMAL
from apis.resources import DATASETS, FEDERATED_LEARNING_JOBS, MODELS, PODS, SERVICES, GroupVersionResource
from apis.sedna.v1alpha1 import FLJobConditionType, FLJobSpec
from apis.typed import spec_of
from globalmanager.runtime.context import KindContext, recreation_key
from globalmanager.runtime.jobstatus import JobObservation, create_or_wait, is_job_finished, write_job_status
from globalmanager.runtime.kind import Kind
from globalmanager.runtime.pods import count_pods, is_pod_terminal
from globalmanager.runtime.revisions import is_current_generation
from globalmanager.runtime.services import ensure_service, service_name_error
from reconcile import Result

from .downstream import to_edge
from .refs import dataset_refs, model_refs, resolve_refs
from .upstream import from_edge
from .workers import (
    AGG_PORT,
    AGGREGATION,
    AGGREGATION_SLOT,
    aggregation_pod,
    missing_workers,
    participants,
    training_pod,
    training_slot,
    worker_slot,
)

__all__ = ["KIND", "NAME", "create_workers", "fl_spec"]

COND_COMPLETE = FLJobConditionType.COMPLETE
FAILED_MESSAGE = "the worker of FederatedLearningJob failed"

Ctx = KindContext[None]


def fl_spec(job: Obj) -> FLJobSpec:
    """The typed spec; ``ValueError`` naming the field for a spec the job cannot run with."""
    spec = spec_of(FLJobSpec, job)
    if spec is None:
        raise ValueError("spec is required")
    if spec.aggregation_worker is None or spec.aggregation_worker.template is None:
        raise ValueError("spec.aggregationWorker.template is required")
    if not spec.training_workers:
        raise ValueError("spec.trainingWorkers: at least one training worker is required")
    for i, worker in enumerate(spec.training_workers):
        if worker.template is None:
            raise ValueError(f"spec.trainingWorkers[{i}].template is required")
    problem = service_name_error(job, AGGREGATION)
    if problem:
        raise ValueError(problem)
    return spec


# -- self-healing: the delete handler ------------------------------------------------------------------------------
def should_recreate(ctx: Ctx, gvr: GroupVersionResource, job: Obj, pod: Obj) -> bool:
    return (
        not is_pod_terminal(pod)
        and is_current_generation(pod, job)
        and not is_job_finished(job.get("status"), COND_COMPLETE)
    )


def recreate(ctx: Ctx, gvr: GroupVersionResource, obj: Obj) -> bool:
    """The delete handler's recreation, limited per worker as well as per pod name, so that it and ``sync`` never
    both bring back the same worker."""
    job = ctx.resolve_controller_ref(meta.namespace(obj), meta.get_controller_of(obj))
    slot = worker_slot(job, obj) if job is not None and is_current_generation(obj, job) else None
    if job is None or slot is None:
        return ctx.recreate_deleted(gvr, obj)
    if is_pod_terminal(obj):
        finished_workers(ctx, job).add(slot)
        return False
    if not ctx.mark_recreated(job, PODS, slot_key(job, slot)):  # claims the worker's slot, atomically
        ctx.log.info("worker recreated moments ago, not recreating again; the job's sync will",
                     key=f"{meta.namespace(job)}/{meta.name(job)}", pod=meta.name(obj), worker=slot)
        return False
    if ctx.recreate_deleted(gvr, obj):
        return True
    ctx.recreated_pods.unmark(recreation_key(PODS, meta.namespace(job), slot_key(job, slot)))
    return False


# -- sync ------------------------------------------------------------------------------------------------------------
def sync(ctx: Ctx, key: str, job: Obj) -> Result | None:
    if is_job_finished(job.get("status"), COND_COMPLETE):
        ctx.prevent_recreation.discard(key)
        return None
    pods = ctx.owned(PODS, job)
    current = [p for p in pods if is_current_generation(p, job)]
    outdated = [p for p in pods if not is_current_generation(p, job)]
    if outdated:
        _replace_outdated(ctx, job, outdated)
    finished = finished_workers(ctx, job)
    for pod in current:
        slot = worker_slot(job, pod) if is_pod_terminal(pod) else None
        if slot is not None:
            finished.add(slot)
    obs = JobObservation(counts=count_pods(current))
    on_their_way = ctx.creations_pending(job, PODS)  # created or recreated, not in the cache yet
    obs.counts["active"] += on_their_way
    retry = False
    try:
        spec = fl_spec(job)
    except ValueError as exc:
        obs.failure = ("InvalidSpec", str(exc))
    else:
        waiting = obs.counts["failed"] or on_their_way  # a failed job creates nothing; a pending one waits for it
        missing = [] if waiting else missing_workers(job, participants(spec), current, finished)
        if missing:

            def create() -> None:
                # a worker missing while others of this generation exist is a recreation: limited as the
                # handler's; one that must wait is counted active: the job is not done without it
                obs.counts["active"] += create_workers(ctx, job, spec, missing, recreation=bool(current))

            retry = create_or_wait(ctx, job, obs, create)
    if not outdated:
        ctx.prevent_recreation.discard(key)
    write_job_status(ctx, key, job, obs, complete_type=COND_COMPLETE, failed_message=FAILED_MESSAGE)
    return Result(requeue=True) if retry else None


def _replace_outdated(ctx: Ctx, job: Obj, outdated: Collection[Obj]) -> None:
    """The spec changed: delete this job's pods of older generations (their deletion is not undone)."""
    ctx.prevent_recreation.add(f"{meta.namespace(job)}/{meta.name(job)}")
    deleting = [p for p in outdated if meta.deletion_timestamp(p) is None]
    for pod in deleting:
        ctx.delete_object(PODS, meta.namespace(pod), meta.name(pod))
    if deleting:
        ctx.log.info("spec changed: replacing the job's pods", key=f"{meta.namespace(job)}/{meta.name(job)}",
                     generation=meta.generation(job), deleted=len(deleting))
        ctx.events.event(job, NORMAL, "SpecChanged", f"deleted {len(deleting)} pods of an older spec; "
                         f"creating them from generation {meta.generation(job)}")


def create_workers(ctx: Ctx, job: Obj, spec: FLJobSpec, workers: Collection[str] | None = None,
                   recreation: bool = False) -> int:
    """Sedna's ``createWorkers``: the aggregation pod, its Service, the training pods (Sedna's order), or of the pods
    only ``workers`` (``workers.worker_slot`` names), through ``ensure_worker`` (``recreation``: the job had pods of
    this generation); returns how many pods are on their way (created, or due once their recreation limit ends)."""
    refs = resolve_refs(ctx, job, spec)
    on_their_way = 0

    def ensure(slot: str, build: Callable[[], dict[str, Any]]) -> None:
        nonlocal on_their_way
        if workers is None or slot in workers:
            creation = ctx.ensure_worker(job, PODS, slot_key(job, slot), build, what="pod", recreation=recreation)
            on_their_way += creation.on_its_way

    ensure(AGGREGATION_SLOT, lambda: aggregation_pod(job, spec, refs))
    ensure_service(ctx, job, AGGREGATION, AGG_PORT)
    for i in range(len(refs.datasets)):
        ensure(training_slot(i), functools.partial(training_pod, job, spec, i, refs, ctx.lc_server))
    return on_their_way


# -- per-worker recreation limit -------------------------------------------------------------------------------------
def slot_key(job: Obj, slot: str) -> str:
    # never a pod's name (pods get a 5-character random suffix); per generation: a new spec's worker is a first
    # creation, not a recreation
    return f"{meta.name(job)}-{meta.generation(job)}-{slot}"


def finished_workers(ctx: Ctx, job: Obj) -> set[str]:
    """The workers of the job's current generation whose pod finished (never created again)."""
    by_generation = ctx.job_state(job).finished_workers
    generation = meta.generation(job)
    for old in [g for g in by_generation if g != generation]:
        del by_generation[old]  # an older generation's pods are never recreated
    return by_generation.setdefault(generation, set())


KIND: Kind[None] = Kind(
    name="FederatedLearning",
    resource=FEDERATED_LEARNING_JOBS,
    sync=sync,
    owns=(PODS, SERVICES),
    recreates=(PODS,),
    references={MODELS: model_refs, DATASETS: dataset_refs},
    checks_nodes=True,
    to_edge=to_edge,
    from_edge=from_edge,
    should_recreate=should_recreate,
    recreate=recreate,
    replaces_workers_on_new_generation=True,
)
NAME = KIND.name
