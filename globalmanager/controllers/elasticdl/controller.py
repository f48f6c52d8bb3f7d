"""The ElasticAIJob controller (ElasticDL operator design): one master pod per job, the job's status tracks it.

* The controller launches only the master pod ``elasticdl-<job>-master``; the master launches worker and ps pods
  (labelled ``elasticdl-job-name=<job>``, ``elasticdl-replica-type=worker|ps``, owned by the master pod). The
  controller counts them into ``status.replicaStatuses`` and deletes the remaining ones once the job has finished.
* Self-healing (the runtime's, for pods): a master pod deleted by hand while the job runs is recreated by
  ``delete_pod`` at most once per 5 s, never while the job's spec is being rolled out (the job's
  ``JobState.prevent_recreation``), never for a
  finished job or a job that is gone, never when the deleted master itself had finished (Succeeded/Failed). ``sync``
  also creates a missing master of an unfinished job, under the same rules: a master recreated less than 5 s ago is
  not created again but the job is requeued for when the 5 s are over (so the limit holds end to end), and a finished
  master seen by ``delete_pod`` is remembered so that the job completes from it instead of running again.
* A pod with the master's name that is not controlled by the job: a Warning event ``FailedCreate``, condition
  ``Created=False``/``FailedCreate``, no retry; the job is woken up when that pod goes.
* A spec change (``metadata.generation`` differs from the master pod's ``elasticdl.org/job-generation`` annotation)
  restarts the master: the old one is deleted and, once it is gone, a new one is created.
* An invalid spec → condition ``Failed``/``InvalidSpec`` naming the field, a Warning event ``InvalidSpec``, no pod.
  That includes a name that cannot make valid pod names and labels (``spec.check_job_name``).
* Status is written only through the status subresource, re-reading on conflict and changing only our fields;
  ``status.observedGeneration`` names the generation the controller has acted on.
* ``update_job`` ignores updates with an unchanged resourceVersion, as Sedna's controllers do: a periodic resync
  delivers such updates for every job, and a job's sync only depends on the job and its pods, whose own events
  already wake it (a resync would only redo the same sync). Pod resyncs still reach the job through the pod handlers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from apis import errors, meta
from apis.client import ClientsetBase
from apis.record import NORMAL, WARNING
from apis.resources import ELASTIC_AI_JOBS, PODS
from globalmanager.runtime.controller import KindController
from globalmanager.runtime.indexes import ensure_index
from globalmanager.runtime.revisions import is_current_generation

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
)

__all__ = ["ElasticAIJobController", "NAME"]

NAME = "ElasticAIJob"

_MASTER_NAME_RE = re.compile(r"^elasticdl-(.+)-master$")
_TERMINAL_PHASES = ("Succeeded", "Failed")
REPLICA_INDEX = "elasticdl-job"  # worker/ps pods (owned by the master pod) by "<namespace>/<job name>"
FINISHED_MASTER = "finished-master"  # JobState marker: the finished master pod delete_pod saw go


def replica_index_func(pod: Any) -> list[str]:
    lbls = meta.labels(pod)
    if lbls.get(APP_LABEL) != APP_NAME or lbls.get(REPLICA_TYPE_LABEL) not in ("worker", "ps"):
        return []
    return [f"{meta.namespace(pod)}/{lbls.get(JOB_NAME_LABEL, '')}"]


class ElasticAIJobController(KindController):
    NAME = NAME
    JOB_RESOURCE = ELASTIC_AI_JOBS
    OWNS = RECREATES = (PODS,)

    def __init__(self, clientset: ClientsetBase, informer_factory: Any, workers: int = 2, **kwargs: Any) -> None:
        super().__init__(clientset, informer_factory, workers, **kwargs)
        ensure_index(self.pod_informer.informer(), REPLICA_INDEX, replica_index_func)

    # -- handlers -------------------------------------------------------------------------------------------------
    def update_job(self, old: Any, cur: Any) -> None:
        if meta.resource_version(old) != meta.resource_version(cur) and meta.generation(old) != meta.generation(cur):
            # the master is about to be replaced on purpose: its deletion must not trigger a recreation
            self.job_state(cur).prevent_recreation = True
        super().update_job(old, cur)

    def delete_pod(self, obj: Any) -> None:
        pod = getattr(obj, "obj", obj)
        if isinstance(pod, Mapping) and self._is_finished_master(pod):
            job = self.resolve_controller_ref(meta.namespace(pod), meta.get_controller_of(pod))
            if job is not None:
                self.job_state(job).markers[FINISHED_MASTER] = pod
        super().delete_pod(obj)

    def enqueue_by_pod(self, pod: Mapping[str, Any], immediate: bool) -> None:
        job = self.resolve_controller_ref(meta.namespace(pod), meta.get_controller_of(pod))
        if job is None:
            lbls = meta.labels(pod)
            if lbls.get(APP_LABEL) == APP_NAME and lbls.get(REPLICA_TYPE_LABEL) in ("worker", "ps"):
                # worker/ps pods are owned by the master pod; they name their job in a label
                job_name = lbls.get(JOB_NAME_LABEL, "")
            else:
                # a pod that is not ours but has a master's name blocks that job's master: wake the job on its events
                m = _MASTER_NAME_RE.match(meta.name(pod))
                if m is None:
                    return
                job_name = m.group(1)
            try:
                job = self.job_lister.namespaced(meta.namespace(pod)).get(job_name)
            except errors.NotFoundError:
                return
        self.enqueue_controller(job, immediate)

    def should_recreate(self, gvr: Any, job: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
        if meta.labels(pod).get(REPLICA_TYPE_LABEL) != "master":
            return False
        if (pod.get("status") or {}).get("phase") in _TERMINAL_PHASES:
            return False  # the master had finished: the job is over whatever its status says yet
        if is_finished(job.get("status"), meta.generation(job)):
            return False
        return is_current_generation(pod, job, GENERATION_ANNOTATION)

    @staticmethod
    def _is_finished_master(pod: Mapping[str, Any]) -> bool:
        return (
            meta.labels(pod).get(REPLICA_TYPE_LABEL) == "master"
            and (pod.get("status") or {}).get("phase") in _TERMINAL_PHASES
        )

    # -- sync -----------------------------------------------------------------------------------------------------
    def sync(self, key: str) -> bool:
        ns, name = key.split("/", 1)
        job = self.get_job(key)
        if job is None:
            self.forget_job(key)
            return True  # gone: owner references let the garbage collector remove its pods
        state = self.job_state(job)
        generation = meta.generation(job)
        replicas = self._replica_pods(ns, name)
        if is_finished(job.get("status"), generation):
            self._cleanup_replicas(key, replicas)
            state.prevent_recreation = False
            state.markers.pop(FINISHED_MASTER, None)
            return True

        try:
            spec = parse_spec(job)
        except SpecError as exc:
            self._stop_outdated_pods(key, job, replicas)
            return self._record_invalid_spec(key, job, str(exc))

        obs = Observation(generation=generation, master_name=master_pod_name(name))
        master = self.get_cached(PODS, ns, obs.master_name)
        if master is not None and not meta.is_controlled_by(master, job):
            return self._record_conflict(key, job, obs, replicas)
        if master is not None and not is_current_generation(master, job, GENERATION_ANNOTATION):
            obs.restarting = True
            state.prevent_recreation = True
            if meta.deletion_timestamp(master) is None:
                self.delete_object(PODS, ns, obs.master_name)
                self.recorder.event(job, NORMAL, "Restarting", f"spec changed: restarting master pod {obs.master_name}")
            for pod in replicas["worker"] + replicas["ps"]:
                if meta.deletion_timestamp(pod) is None:
                    self.delete_object(PODS, ns, meta.name(pod))
            master = None
        elif master is None:
            master = self._finished_master(job)
            if master is None:
                wait = self._recreation_wait(key, job, obs.master_name)
                if wait > 0:
                    # recreated moments ago (usually by delete_pod, and our cache has not seen it yet): look again
                    # once the TTL is over; the status is left as it is meanwhile
                    self.queue.add_after(key, wait)
                    return True
                obs.master_created = self._create_master(job, spec)
                if obs.master_created:
                    if not state.prevent_recreation and (job.get("status") or {}).get("startTime"):
                        # a creation after the first start is a recreation: it counts against the TTL too
                        self.mark_recreated(job, PODS, obs.master_name)
                    state.prevent_recreation = False
        else:
            state.prevent_recreation = False
        obs.master = master
        if master is not None or obs.master_created:
            obs.observed_generation = generation
        obs.replicas = {
            "master": count_pods([master] if master is not None else []),
            "worker": count_pods(replicas["worker"]),
            "ps": count_pods(replicas["ps"]),
        }
        if obs.master_created:
            obs.replicas["master"]["active"] = 1
        old_phase = (job.get("status") or {}).get("phase")
        written = self._write_status(job, obs)
        new_phase = ((written or {}).get("status") or {}).get("phase", old_phase)
        if written is not None and new_phase != old_phase:
            self._log.info("job phase changed", key=key, phase=new_phase, previous=old_phase)
            if new_phase == PHASE_SUCCEEDED:
                self.recorder.event(job, NORMAL, "Succeeded", f"master pod {obs.master_name} succeeded")
            elif new_phase == PHASE_FAILED and master is not None:
                self.recorder.event(job, WARNING, "Failed", f"master pod {obs.master_name} failed")
        if new_phase in (PHASE_SUCCEEDED, PHASE_FAILED):
            # a finished master is forgotten only once the cache shows the job finished (the branch above)
            self._cleanup_replicas(key, replicas)
        return True

    # -- helpers --------------------------------------------------------------------------------------------------
    def _write_status(self, job: dict[str, Any], obs: Observation) -> dict[str, Any] | None:
        return self.update_job_status(job, lambda obj: apply_observation(obj.setdefault("status", {}), obs, self.now()))

    def _record_invalid_spec(self, key: str, job: dict[str, Any], message: str) -> bool:
        zero = {"active": 0, "succeeded": 0, "failed": 0}
        obs = Observation(
            generation=meta.generation(job),
            master_name=master_pod_name(meta.name(job)),
            invalid_spec=message,
            observed_generation=meta.generation(job),
            replicas={"master": dict(zero), "worker": dict(zero), "ps": dict(zero)},  # every pod of ours is going
        )
        if self._write_status(job, obs) is not None:
            self._log.warning("invalid spec", key=key, error=message)
            self.recorder.event(job, WARNING, INVALID_SPEC, message)
        return True

    def _record_conflict(
        self, key: str, job: dict[str, Any], obs: Observation, replicas: dict[str, list[Mapping[str, Any]]]
    ) -> bool:
        """A same-name pod that is not ours holds the master's name: report it once (no hot retry); the pod's
        deletion wakes the job (``enqueue_by_pod``)."""
        ns = meta.namespace(job)
        message = (
            f"pod {ns}/{obs.master_name} exists and is not controlled by {JOB_GVK.kind} {key}: "
            "delete it or rename the job"
        )
        obs.conflict = message
        obs.replicas = {"master": count_pods([]), "worker": count_pods(replicas["worker"]), "ps": count_pods(replicas["ps"])}
        if self._write_status(job, obs) is not None:
            self._log.warning("master pod name taken by a pod that is not ours", key=key, pod=f"{ns}/{obs.master_name}")
            self.recorder.event(job, WARNING, "FailedCreate", message)
        return True

    def _finished_master(self, job: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The finished master of this job and generation that ``delete_pod`` saw go, if any."""
        markers = self.job_state(job).markers
        pod: Mapping[str, Any] | None = markers.get(FINISHED_MASTER)
        if pod is None:
            return None
        if not is_current_generation(pod, job, GENERATION_ANNOTATION):
            markers.pop(FINISHED_MASTER, None)
            return None
        return pod

    def _recreation_wait(self, key: str, job: Mapping[str, Any], pod_name: str) -> float:
        """Seconds before the missing master may be created again (0 = now): a master recreated less than the
        recreation TTL ago is not created again, except during a spec roll (the old master was deleted on purpose)."""
        if self.job_state(job).prevent_recreation:
            return 0.0
        wait = self.recreation_wait(job, PODS, pod_name)
        if wait > 0:
            self._log.info("master recreated moments ago; not creating it again yet", key=key,
                           pod=f"{meta.namespace(job)}/{pod_name}", retry_in=round(wait, 3))
        return wait

    def _stop_outdated_pods(self, key: str, job: dict[str, Any], replicas: dict[str, list[Mapping[str, Any]]]) -> None:
        """A spec edited into an invalid one: the master built from the previous spec and its replicas go."""
        ns = meta.namespace(job)
        master = self.get_cached(PODS, ns, master_pod_name(meta.name(job)))
        if (
            master is not None
            and meta.is_controlled_by(master, job)
            and not is_current_generation(master, job, GENERATION_ANNOTATION)
        ):
            self.job_state(job).prevent_recreation = True
            if meta.deletion_timestamp(master) is None:
                self.delete_object(PODS, ns, meta.name(master))
        self._cleanup_replicas(key, replicas)

    def _create_master(self, job: dict[str, Any], spec: Any) -> bool:
        if not self.job_is_live(job):
            return False  # deleted meanwhile: its delete event is on the way
        # None: the pod exists already (our cache is behind; its events will bring us back)
        return self.create_owned(PODS, job, build_master_pod(job, spec), "master pod") is not None

    def _replica_pods(self, ns: str, job_name: str) -> dict[str, list[Mapping[str, Any]]]:
        """The job's worker and ps pods, looked up by index (the master owns them; they name the job in a label)."""
        out: dict[str, list[Mapping[str, Any]]] = {"worker": [], "ps": []}
        for pod in self.pod_informer.informer().get_indexer().by_index(REPLICA_INDEX, f"{ns}/{job_name}"):
            out[meta.labels(pod)[REPLICA_TYPE_LABEL]].append(pod)
        return out

    def _cleanup_replicas(self, key: str, replicas: dict[str, list[Mapping[str, Any]]]) -> None:
        """Delete the worker and ps pods still around (the job has finished, or its spec became invalid)."""
        for pod in replicas["worker"] + replicas["ps"]:
            if meta.deletion_timestamp(pod) is None:
                self._log.info("deleting replica pod", key=key, pod=meta.name(pod))
                self.delete_object(PODS, meta.namespace(pod), meta.name(pod))


new_controller = ElasticAIJobController.from_context
