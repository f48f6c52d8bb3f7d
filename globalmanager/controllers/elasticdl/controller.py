"""The ElasticAIJob controller (ElasticDL operator design): one master pod per job, the job's status tracks it.

* The controller launches only the master pod ``elasticdl-<job>-master``; the master launches worker and ps pods
  (labelled ``elasticdl-job-name=<job>``, ``elasticdl-replica-type=worker|ps``, owned by the master pod). The
  controller counts them into ``status.replicaStatuses`` and deletes the remaining ones once the job has finished.
* Self-healing: a master pod deleted by hand while the job runs is recreated by ``delete_pod`` at most once per 5 s
  (``recreated_pods``), never while the job's spec is being rolled out (``prevent_recreation``, per job), never for a
  finished job or a job that is gone; ``sync`` also creates a missing master of an unfinished job.
* A spec change (``metadata.generation`` differs from the master pod's ``elasticdl.org/job-generation`` annotation)
  restarts the master: the old one is deleted and, once it is gone, a new one is created.
* An invalid spec → condition ``Failed``/``InvalidSpec`` naming the field, a Warning event ``InvalidSpec``, no pod.
* Status is written only through the status subresource, re-reading on conflict and changing only our fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from apis import errors, meta
from apis.client import ClientsetBase
from apis.resources import ELASTIC_AI_JOBS
from globalmanager.runtime.controller import BaseController
from globalmanager.runtime.events import NORMAL, WARNING, EventRecorder
from globalmanager.runtime.status import update_status

from .pods import (
    APP_LABEL,
    APP_NAME,
    GENERATION_ANNOTATION,
    JOB_GVK,
    JOB_NAME_LABEL,
    REPLICA_TYPE_LABEL,
    build_master_pod,
    master_pod_name,
)
from .spec import SpecError, parse_spec
from .status import (
    INVALID_SPEC,
    PHASE_FAILED,
    PHASE_SUCCEEDED,
    Observation,
    apply_observation,
    count_pods,
    is_finished,
    master_is_current,
)

__all__ = ["ElasticAIJobController", "NAME"]

NAME = "ElasticAIJob"


def _typed(job: Mapping[str, Any]) -> dict[str, Any]:
    """A shallow copy with apiVersion/kind set (list items from some servers lack them)."""
    out = dict(job)
    out.setdefault("apiVersion", JOB_GVK.api_version)
    out.setdefault("kind", JOB_GVK.kind)
    return out


class ElasticAIJobController(BaseController):
    kind = JOB_GVK.kind

    def __init__(
        self,
        clientset: ClientsetBase,
        informer_factory: Any,
        workers: int = 2,
        *,
        recorder: EventRecorder | None = None,
        now: Callable[[], str] = meta.now_rfc3339,
        **kwargs: Any,
    ) -> None:
        super().__init__(NAME, clientset, informer_factory, ELASTIC_AI_JOBS, workers, recorder=recorder, **kwargs)
        self.now = now

    # -- handlers -------------------------------------------------------------------------------------------------
    def update_job(self, old: Any, cur: Any) -> None:
        if meta.resource_version(old) == meta.resource_version(cur):
            return
        if meta.generation(old) != meta.generation(cur):
            # the master is about to be replaced on purpose: its deletion must not trigger a recreation
            self.prevent_recreation.add(f"{meta.namespace(cur)}/{meta.name(cur)}")
        self.enqueue_controller(cur, immediate=True)

    def delete_job(self, obj: Any) -> None:
        job = getattr(obj, "obj", obj)
        self.prevent_recreation.discard(f"{meta.namespace(job)}/{meta.name(job)}")
        self.enqueue_controller(obj, immediate=True)

    def enqueue_by_pod(self, pod: Mapping[str, Any], immediate: bool) -> None:
        job = self.resolve_controller_ref(meta.namespace(pod), meta.get_controller_of(pod))
        if job is None:
            # worker/ps pods are owned by the master pod; they name their job in a label
            lbls = meta.labels(pod)
            if lbls.get(APP_LABEL) != APP_NAME or lbls.get(REPLICA_TYPE_LABEL) not in ("worker", "ps"):
                return
            try:
                job = self.job_lister.namespaced(meta.namespace(pod)).get(lbls.get(JOB_NAME_LABEL, ""))
            except errors.NotFoundError:
                return
        self.enqueue_controller(job, immediate)

    def should_recreate_pod(self, job: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
        if meta.labels(pod).get(REPLICA_TYPE_LABEL) != "master":
            return False
        if is_finished(job.get("status"), meta.generation(job)):
            return False
        return master_is_current(pod, meta.generation(job), GENERATION_ANNOTATION)

    # -- sync -----------------------------------------------------------------------------------------------------
    def sync(self, key: str) -> bool:
        ns, name = key.split("/", 1)
        try:
            job = _typed(self.job_lister.namespaced(ns).get(name))
        except errors.NotFoundError:
            self.prevent_recreation.discard(key)
            return True  # gone: owner references let the garbage collector remove its pods
        generation = meta.generation(job)
        replicas = self._replica_pods(ns, name)
        if is_finished(job.get("status"), generation):
            self._cleanup_replicas(key, replicas)
            self.prevent_recreation.discard(key)
            return True

        try:
            spec = parse_spec(job)
        except SpecError as exc:
            self._stop_outdated_pods(key, job, replicas)
            return self._record_invalid_spec(key, job, str(exc))

        obs = Observation(generation=generation, master_name=master_pod_name(name))
        master = self._get_pod(ns, obs.master_name)
        if master is not None and not meta.is_controlled_by(master, job):
            raise RuntimeError(f"pod {ns}/{obs.master_name} exists and is not controlled by this job")
        if master is not None and not master_is_current(master, generation, GENERATION_ANNOTATION):
            obs.restarting = True
            self.prevent_recreation.add(key)
            if meta.deletion_timestamp(master) is None:
                self._delete_pod(ns, obs.master_name)
                self.recorder.event(job, NORMAL, "Restarting", f"spec changed: restarting master pod {obs.master_name}")
            for pod in replicas["worker"] + replicas["ps"]:
                if meta.deletion_timestamp(pod) is None:
                    self._delete_pod(ns, meta.name(pod))
            master = None
        elif master is None:
            obs.master_created = self._create_master(key, job, spec, obs.master_name)
            if obs.master_created:
                self.prevent_recreation.discard(key)
        else:
            self.prevent_recreation.discard(key)
        obs.master = master
        obs.replicas = {
            "master": count_pods([master] if master is not None else []),
            "worker": count_pods(replicas["worker"]),
            "ps": count_pods(replicas["ps"]),
        }
        if obs.master_created:
            obs.replicas["master"]["active"] = 1
        old_phase = (job.get("status") or {}).get("phase")
        written = update_status(self.job_client(ns), job, lambda obj: apply_observation(obj.setdefault("status", {}), obs, self.now()))
        new_phase = ((written or {}).get("status") or {}).get("phase", old_phase)
        if written is not None and new_phase != old_phase:
            self._log.info("job phase changed", key=key, phase=new_phase, previous=old_phase)
            if new_phase == PHASE_SUCCEEDED:
                self.recorder.event(job, NORMAL, "Succeeded", f"master pod {obs.master_name} succeeded")
            elif new_phase == PHASE_FAILED and master is not None:
                self.recorder.event(job, WARNING, "Failed", f"master pod {obs.master_name} failed")
        if new_phase in (PHASE_SUCCEEDED, PHASE_FAILED):
            self._cleanup_replicas(key, replicas)
        return True

    # -- helpers --------------------------------------------------------------------------------------------------
    def _record_invalid_spec(self, key: str, job: dict[str, Any], message: str) -> bool:
        obs = Observation(generation=meta.generation(job), master_name=master_pod_name(meta.name(job)), invalid_spec=message)
        written = update_status(
            self.job_client(meta.namespace(job)), job, lambda obj: apply_observation(obj.setdefault("status", {}), obs, self.now())
        )
        if written is not None:
            self._log.warning("invalid spec", key=key, error=message)
            self.recorder.event(job, WARNING, INVALID_SPEC, message)
        return True

    def _stop_outdated_pods(self, key: str, job: dict[str, Any], replicas: dict[str, list[Mapping[str, Any]]]) -> None:
        """A spec edited into an invalid one: the master built from the previous spec and its replicas go."""
        ns = meta.namespace(job)
        master = self._get_pod(ns, master_pod_name(meta.name(job)))
        if master is None or not meta.is_controlled_by(master, job):
            return
        if master_is_current(master, meta.generation(job), GENERATION_ANNOTATION):
            return
        self.prevent_recreation.add(key)
        if meta.deletion_timestamp(master) is None:
            self._delete_pod(ns, meta.name(master))
        self._cleanup_replicas(key, replicas)

    def _create_master(self, key: str, job: dict[str, Any], spec: Any, pod_name: str) -> bool:
        pod = build_master_pod(job, spec)
        if not self.job_is_live(job):
            return False  # deleted meanwhile: its delete event is on the way
        try:
            self.clientset.core_v1().pods(meta.namespace(job)).create(pod)
        except errors.AlreadyExistsError:
            return False  # our cache is behind; the pod's events will bring us back
        except errors.ApiError as exc:
            self.recorder.event(job, WARNING, "FailedCreate", f"error creating master pod {pod_name}: {exc.message}")
            raise
        self._log.info("created master pod", key=key, pod=pod_name)
        self.recorder.event(job, NORMAL, "SuccessfulCreate", f"created master pod {pod_name}")
        return True

    def _get_pod(self, ns: str, name: str) -> Mapping[str, Any] | None:
        try:
            return self.pod_lister.namespaced(ns).get(name)
        except errors.NotFoundError:
            return None

    def _replica_pods(self, ns: str, job_name: str) -> dict[str, list[Mapping[str, Any]]]:
        selector = meta.selector_from_set({APP_LABEL: APP_NAME, JOB_NAME_LABEL: job_name})
        out: dict[str, list[Mapping[str, Any]]] = {"worker": [], "ps": []}
        for pod in self.pod_lister.namespaced(ns).list(selector):
            role = meta.labels(pod).get(REPLICA_TYPE_LABEL)
            if role in out:
                out[role].append(pod)
        return out

    def _delete_pod(self, ns: str, name: str) -> None:
        try:
            self.clientset.core_v1().pods(ns).delete(name)
        except errors.NotFoundError:
            pass

    def _cleanup_replicas(self, key: str, replicas: dict[str, list[Mapping[str, Any]]]) -> None:
        """Delete the worker and ps pods still around once the job has finished."""
        for pod in replicas["worker"] + replicas["ps"]:
            if meta.deletion_timestamp(pod) is None:
                self._log.info("deleting replica pod of finished job", key=key, pod=meta.name(pod))
                self._delete_pod(meta.namespace(pod), meta.name(pod))


def new_controller(ctx: Any) -> ElasticAIJobController:
    """Registry factory."""
    return ElasticAIJobController(
        ctx.clientset,
        ctx.informer_factory,
        ctx.workers_for(NAME),
        recorder=ctx.recorder,
        registry=ctx.registry,
        drain_timeout=ctx.drain_timeout,
    )
