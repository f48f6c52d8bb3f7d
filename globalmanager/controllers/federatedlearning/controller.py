"""The FederatedLearningJob controller (Sedna's ``federatedlearning`` controller, state kept per job).

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
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from typing import Any

from apis import meta
from apis.record import NORMAL
from apis.resources import DATASETS, FEDERATED_LEARNING_JOBS, MODELS, PODS, SERVICES, GroupVersionResource
from globalmanager.runtime.controller import KindController
from globalmanager.runtime.jobstatus import JobObservation, create_or_wait, is_job_finished, write_job_status
from globalmanager.runtime.pods import count_pods, is_pod_terminal
from globalmanager.runtime.references import get_credential, get_referenced
from globalmanager.runtime.revisions import is_current_generation
from globalmanager.runtime.services import ensure_service, service_name_error

from . import downstream, upstream
from .workers import (
    AGG_PORT,
    AGGREGATION,
    AGGREGATION_SLOT,
    Refs,
    aggregation_pod,
    missing_workers,
    training_pod,
    training_slot,
    worker_slot,
)

__all__ = ["FederatedLearningController", "NAME", "new_controller"]

COND_COMPLETE = "Complete"
FAILED_MESSAGE = "the worker of FederatedLearningJob failed"


def _spec(job: Mapping[str, Any]) -> Mapping[str, Any]:
    return job.get("spec") or {}


def model_refs(job: Mapping[str, Any]) -> list[str]:
    spec = _spec(job)
    return [
        str(((spec.get("aggregationWorker") or {}).get("model") or {}).get("name") or ""),
        str((spec.get("pretrainedModel") or {}).get("name") or ""),
    ]


def dataset_refs(job: Mapping[str, Any]) -> list[str]:
    return [str(((w or {}).get("dataset") or {}).get("name") or "") for w in _spec(job).get("trainingWorkers") or []]


class FederatedLearningController(KindController):
    NAME = "FederatedLearning"
    JOB_RESOURCE = FEDERATED_LEARNING_JOBS
    OWNS = (PODS, SERVICES)
    RECREATES = (PODS,)
    REFERENCES = {MODELS: model_refs, DATASETS: dataset_refs}
    CHECKS_NODES = True
    sync_to_edge = downstream.sync_to_edge
    update_from_edge = upstream.update_from_edge

    def update_job(self, old: Any, cur: Any) -> None:
        if meta.resource_version(old) != meta.resource_version(cur) and meta.generation(old) != meta.generation(cur):
            # this job's pods are about to be replaced: their deletion must not trigger recreations
            self.prevent_recreation.add(f"{meta.namespace(cur)}/{meta.name(cur)}")
        super().update_job(old, cur)

    def should_recreate(self, gvr: Any, job: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
        return (
            not is_pod_terminal(pod)
            and is_current_generation(pod, job)
            and not is_job_finished(job.get("status"), COND_COMPLETE)
        )

    def maybe_recreate(self, gvr: GroupVersionResource, obj: Mapping[str, Any]) -> bool:
        """The delete handler's recreation, limited per worker as well as per pod name, so that it and ``sync``
        never both bring back the same worker."""
        job = self.resolve_controller_ref(meta.namespace(obj), meta.get_controller_of(obj))
        slot = worker_slot(job, obj) if job is not None and is_current_generation(obj, job) else None
        if job is None or slot is None:
            return super().maybe_recreate(gvr, obj)
        if is_pod_terminal(obj):
            self._finished_workers(job).add(slot)
            return False
        if not self.mark_recreated(job, PODS, self._slot_key(job, slot)):  # claims the worker's slot, atomically
            self._log.info("worker recreated moments ago, not recreating again; the job's sync will",
                           key=f"{meta.namespace(job)}/{meta.name(job)}", pod=meta.name(obj), worker=slot)
            return False
        if super().maybe_recreate(gvr, obj):
            return True
        self.recreated_pods.unmark(self.recreation_key(PODS, meta.namespace(job), self._slot_key(job, slot)))
        return False

    # -- sync -----------------------------------------------------------------------------------------------------
    def sync(self, key: str) -> bool:
        job = self.get_job(key)
        if job is None:
            self.forget_job(key)
            return True  # gone: its pods and Service are garbage-collected (ownerReferences)
        if is_job_finished(job.get("status"), COND_COMPLETE):
            self.prevent_recreation.discard(key)
            return True
        pods = self.owned(PODS, job)
        current = [p for p in pods if is_current_generation(p, job)]
        outdated = [p for p in pods if not is_current_generation(p, job)]
        if outdated:
            self._replace_outdated(job, outdated)
        finished = self._finished_workers(job)
        for pod in current:
            slot = worker_slot(job, pod) if is_pod_terminal(pod) else None
            if slot is not None:
                finished.add(slot)
        obs = JobObservation(counts=count_pods(current))
        on_their_way = self.creations_pending(job, PODS)  # created or recreated, not in the cache yet
        obs.counts["active"] += on_their_way
        retry = False
        problem = self._spec_problem(job)
        if problem:
            obs.failure = ("InvalidSpec", problem)
        elif not obs.counts["failed"] and not on_their_way:
            missing = missing_workers(job, current, finished)
            if missing:

                def create() -> None:
                    # a worker missing while others of this generation exist is a recreation: limited as the
                    # handler's; one that must wait is counted active: the job is not done without it
                    obs.counts["active"] += self.create_workers(job, missing, recreation=bool(current))

                retry = create_or_wait(self, job, obs, create)
        if not outdated:
            self.prevent_recreation.discard(key)
        write_job_status(self, key, job, obs, complete_type=COND_COMPLETE, failed_message=FAILED_MESSAGE)
        return self.retry_later(key) if retry else True

    def _spec_problem(self, job: Mapping[str, Any]) -> str:
        spec = _spec(job)
        if not isinstance((spec.get("aggregationWorker") or {}).get("template"), Mapping):
            return "spec.aggregationWorker.template is required"
        workers = spec.get("trainingWorkers") or []
        if not workers:
            return "spec.trainingWorkers: at least one training worker is required"
        for i, worker in enumerate(workers):
            if not isinstance((worker or {}).get("template"), Mapping):
                return f"spec.trainingWorkers[{i}].template is required"
        return service_name_error(job, AGGREGATION)

    def _replace_outdated(self, job: Mapping[str, Any], outdated: Collection[Mapping[str, Any]]) -> None:
        """The spec changed: delete this job's pods of older generations (their deletion is not undone)."""
        self.prevent_recreation.add(f"{meta.namespace(job)}/{meta.name(job)}")
        deleting = [p for p in outdated if meta.deletion_timestamp(p) is None]
        for pod in deleting:
            self.delete_object(PODS, meta.namespace(pod), meta.name(pod))
        if deleting:
            self._log.info("spec changed: replacing the job's pods", key=f"{meta.namespace(job)}/{meta.name(job)}",
                           generation=meta.generation(job), deleted=len(deleting))
            self.recorder.event(job, NORMAL, "SpecChanged", f"deleted {len(deleting)} pods of an older spec; "
                                f"creating them from generation {meta.generation(job)}")

    def _refs(self, job: Mapping[str, Any]) -> Refs:
        ns, spec = meta.namespace(job), _spec(job)
        agg_model, pretrained_name = model_refs(job)

        def credential(obj: Mapping[str, Any], what: str) -> Mapping[str, Any] | None:
            return get_credential(self.clientset, ns, str((obj.get("spec") or {}).get("credentialName") or ""), what)

        model = get_referenced(self.reference_listers[MODELS], "Model", ns, agg_model, " (aggregation model)")
        pretrained = get_referenced(self.reference_listers[MODELS], "Model", ns, pretrained_name, " (pretrained model)") \
            if pretrained_name else None
        datasets = []
        for name in dataset_refs(job):
            dataset = get_referenced(self.reference_listers[DATASETS], "Dataset", ns, name)
            self.nodes.check(job, dataset)
            datasets.append((dataset, credential(dataset, f"dataset {name}")))
        s3 = (spec.get("transmitter") or {}).get("s3") or {}
        return Refs(
            model=model,
            model_secret=credential(model, f"model {agg_model}"),
            pretrained=pretrained,
            pretrained_secret=credential(pretrained, f"model {pretrained_name}") if pretrained is not None else None,
            transmitter_secret=get_credential(self.clientset, ns, str(s3.get("credentialName") or ""), "the s3 transmitter"),
            datasets=datasets,
        )

    def create_workers(self, job: Mapping[str, Any], workers: Collection[str] | None = None,
                       recreation: bool = False) -> int:
        """The aggregation pod, its Service, the training pods (Sedna's order), or of the pods only ``workers``
        (``workers.worker_slot`` names), through ``ensure_worker`` (``recreation``: the job had pods of this
        generation); returns how many pods are on their way (created, or due once their recreation limit ends)."""
        refs = self._refs(job)
        on_their_way = 0

        def ensure(slot: str, build: Callable[[], dict[str, Any]]) -> None:
            nonlocal on_their_way
            if workers is None or slot in workers:
                creation = self.ensure_worker(job, PODS, self._slot_key(job, slot), build, what="pod",
                                              recreation=recreation)
                on_their_way += creation.on_its_way

        ensure(AGGREGATION_SLOT, lambda: aggregation_pod(job, refs))
        ensure_service(self, job, AGGREGATION, AGG_PORT)
        for i in range(len(refs.datasets)):
            ensure(training_slot(i), functools.partial(training_pod, job, i, refs, self.lc_server))
        return on_their_way

    # -- per-worker recreation limit ------------------------------------------------------------------------------
    @staticmethod
    def _slot_key(job: Mapping[str, Any], slot: str) -> str:
        # never a pod's name (pods get a 5-character random suffix); per generation: a new spec's worker is a
        # first creation, not a recreation
        return f"{meta.name(job)}-{meta.generation(job)}-{slot}"

    def _finished_workers(self, job: Mapping[str, Any]) -> set[str]:
        """The workers of the job's current generation whose pod finished (never created again)."""
        by_generation = self.job_state(job).finished_workers
        generation = meta.generation(job)
        for old in [g for g in by_generation if g != generation]:
            del by_generation[old]  # an older generation's pods are never recreated
        return by_generation.setdefault(generation, set())


NAME = FederatedLearningController.NAME
new_controller = FederatedLearningController.from_context
