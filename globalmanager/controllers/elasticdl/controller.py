"""The ElasticAIJob kind (ElasticDL operator design): one master pod per job, the job's status tracks it.

* The controller launches only the master pod ``elasticdl-<job>-master``; the master launches worker and ps pods
  (labelled ``elasticdl-job-name=<job>``, ``elasticdl-replica-type=worker|ps``, owned by the master pod). The
  controller counts them into ``status.replicaStatuses`` and deletes the remaining ones once the job has finished.
* Self-healing (the runtime's, for pods): a master pod deleted by hand while the job runs is recreated by the
  delete handler (``should_recreate`` says which pods qualify) at most once per 5 s, never while the job's spec is being rolled out (the job's
  ``prevent_recreation``), never for a
  finished job or a job that is gone, never when the deleted master itself had finished (Succeeded/Failed). ``sync``
  also creates a missing master of an unfinished job, under the same rules: a master recreated less than 5 s ago is
  not created again but the job is requeued for when the 5 s are over (so the limit holds end to end), and a finished
  master seen by the delete handler is remembered (``on_deleted``) so that the job completes from it instead of running again.
* A pod with the master's name that is not controlled by the job: a Warning event ``FailedCreate``, condition
  ``Created=False``/``FailedCreate``, no retry; the job is woken up when that pod goes.
* A spec change (``metadata.generation`` differs from the master pod's ``elasticdl.org/job-generation`` annotation)
  restarts the master: the old one is deleted and, once it is gone, a new one is created.
* An invalid spec → condition ``Failed``/``InvalidSpec`` naming the field, a Warning event ``InvalidSpec``, no pod.
  That includes a name that cannot make valid pod names and labels (``spec.check_job_name``).
* Status is written only through the status subresource, re-reading on conflict and changing only our fields;
  ``status.observedGeneration`` names the generation the controller has acted on.
* Worker and ps pods are owned by the master pod, not the job: they name their job in a label (``job_of`` maps
  their events to it; ``REPLICA_INDEX`` on the pod informer, added by ``state``, finds them without a scan).
"""

from __future__ import annotations

import re
from typing import Any

from apis import errors, meta
from apis.meta import Obj
from apis.record import NORMAL, WARNING
from apis.resources import ELASTIC_AI_JOBS, PODS, GroupVersionResource
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.kind import Kind
from globalmanager.runtime.pods import pod_update_matters
from globalmanager.runtime.revisions import is_current_generation
from reconcile import Result

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

__all__ = ["KIND", "NAME", "REPLICA_INDEX", "replica_index_func"]

Ctx = KindContext[None]
Replicas = dict[str, list[Obj]]

_MASTER_NAME_RE = re.compile(r"^elasticdl-(.+)-master$")
_TERMINAL_PHASES = ("Succeeded", "Failed")
REPLICA_INDEX = "elasticdl-job"  # worker/ps pods (owned by the master pod) by "<namespace>/<job name>"


def replica_index_func(pod: Any) -> list[str]:
    lbls = meta.labels(pod)
    if lbls.get(APP_LABEL) != APP_NAME or lbls.get(REPLICA_TYPE_LABEL) not in ("worker", "ps"):
        return []
    return [f"{meta.namespace(pod)}/{lbls.get(JOB_NAME_LABEL, '')}"]


# -- the kind's hooks ---------------------------------------------------------------------------------------------
def add_replica_index(ctx: Ctx) -> None:
    """The kind's state: none, but the pod cache gets ``REPLICA_INDEX`` (before the informer starts)."""
    indexer = ctx.indexer(PODS)
    if REPLICA_INDEX not in indexer.get_indexers():
        indexer.add_indexers({REPLICA_INDEX: replica_index_func})


def job_of(ctx: Ctx, pod: Obj) -> Obj | None:
    """The job of a pod that its controller reference does not name: a worker/ps pod (owned by the master pod,
    its job in a label), or a pod that is not ours but holds a master's name (its events wake that job)."""
    lbls = meta.labels(pod)
    if lbls.get(APP_LABEL) == APP_NAME and lbls.get(REPLICA_TYPE_LABEL) in ("worker", "ps"):
        job_name = lbls.get(JOB_NAME_LABEL, "")
    else:
        m = _MASTER_NAME_RE.match(meta.name(pod))
        if m is None:
            return None
        job_name = m.group(1)
    try:
        job: Obj = ctx.job_lister.namespaced(meta.namespace(pod)).get(job_name)
    except errors.NotFoundError:
        return None
    return job


def _is_finished_master(pod: Obj) -> bool:
    return (
        meta.labels(pod).get(REPLICA_TYPE_LABEL) == "master"
        and (pod.get("status") or {}).get("phase") in _TERMINAL_PHASES
    )


def note_finished_master(ctx: Ctx, gvr: GroupVersionResource, pod: Obj) -> None:
    """A finished master that goes is remembered, so that its job completes from it instead of running again."""
    if _is_finished_master(pod):
        job = ctx.resolve_controller_ref(meta.namespace(pod), meta.get_controller_of(pod))
        if job is not None:
            ctx.job_state(job).finished_master = pod


def should_recreate(ctx: Ctx, gvr: GroupVersionResource, job: Obj, pod: Obj) -> bool:
    """Only a master that had not finished, of an unfinished job, built for the job's current generation."""
    if meta.labels(pod).get(REPLICA_TYPE_LABEL) != "master":
        return False
    if (pod.get("status") or {}).get("phase") in _TERMINAL_PHASES:
        return False  # the master had finished: the job is over whatever its status says yet
    if is_finished(job.get("status"), meta.generation(job)):
        return False
    return is_current_generation(pod, job, GENERATION_ANNOTATION)


def _pod_update_matters(gvr: GroupVersionResource, old: Obj, cur: Obj) -> bool:
    """A sync reads only its pods' phases and metadata (``pod_update_matters``); pods are all it owns."""
    return gvr != PODS or pod_update_matters(old, cur)


# -- sync ---------------------------------------------------------------------------------------------------------
def sync(ctx: Ctx, key: str, job: Obj) -> Result | None:
    ns, name = meta.namespace(job), meta.name(job)
    state = ctx.job_state(job)
    generation = meta.generation(job)
    replicas = _replica_pods(ctx, ns, name)
    if is_finished(job.get("status"), generation):
        _cleanup_replicas(ctx, key, replicas)
        ctx.prevent_recreation.discard(key)
        state.finished_master = None
        return None

    try:
        spec = parse_spec(job)
    except SpecError as exc:
        _stop_outdated_pods(ctx, key, job, replicas)
        _record_invalid_spec(ctx, key, job, str(exc))
        return None

    obs = Observation(generation=generation, master_name=master_pod_name(name))
    master: Obj | None = ctx.get_cached(PODS, ns, obs.master_name)
    if master is not None and not meta.is_controlled_by(master, job):
        _record_conflict(ctx, key, job, obs, replicas)
        return None
    if master is not None and not is_current_generation(master, job, GENERATION_ANNOTATION):
        obs.restarting = True
        ctx.prevent_recreation.add(key)
        if meta.deletion_timestamp(master) is None:
            ctx.delete_object(PODS, ns, obs.master_name)
            ctx.events.event(job, NORMAL, "Restarting", f"spec changed: restarting master pod {obs.master_name}")
        for pod in replicas["worker"] + replicas["ps"]:
            if meta.deletion_timestamp(pod) is None:
                ctx.delete_object(PODS, ns, meta.name(pod))
        master = None
    elif master is None:
        master = _finished_master(ctx, job)
        if master is None:
            # a creation after the first start is a recreation: limited as the delete handler's, except during a
            # spec roll (the old master was deleted on purpose)
            creation = ctx.ensure_worker(job, PODS, obs.master_name, lambda: build_master_pod(job, spec),
                                         what="master pod", recreation=bool((job.get("status") or {}).get("startTime")))
            if creation.wait > 0:
                # recreated moments ago (usually by the delete handler, and our cache has not seen it yet):
                # ensure_worker requeued the job for when the TTL is over; the status is left as it is meanwhile
                return None
            obs.master_created = creation.created is not None
            if obs.master_created:
                ctx.prevent_recreation.discard(key)
    else:
        ctx.prevent_recreation.discard(key)
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
    written = _write_status(ctx, job, obs)
    new_phase = ((written or {}).get("status") or {}).get("phase", old_phase)
    if written is not None and new_phase != old_phase:
        ctx.log.info("job phase changed", key=key, phase=new_phase, previous=old_phase)
        if new_phase == PHASE_SUCCEEDED:
            ctx.events.event(job, NORMAL, "Succeeded", f"master pod {obs.master_name} succeeded")
        elif new_phase == PHASE_FAILED and master is not None:
            ctx.events.event(job, WARNING, "Failed", f"master pod {obs.master_name} failed")
    if new_phase in (PHASE_SUCCEEDED, PHASE_FAILED):
        # a finished master is forgotten only once the cache shows the job finished (the branch above)
        _cleanup_replicas(ctx, key, replicas)
    return None


def _write_status(ctx: Ctx, job: Obj, obs: Observation) -> dict[str, Any] | None:
    return ctx.update_job_status(job, lambda obj: apply_observation(obj.setdefault("status", {}), obs, ctx.now()))


def _record_invalid_spec(ctx: Ctx, key: str, job: Obj, message: str) -> None:
    zero = {"active": 0, "succeeded": 0, "failed": 0}
    obs = Observation(
        generation=meta.generation(job),
        master_name=master_pod_name(meta.name(job)),
        invalid_spec=message,
        observed_generation=meta.generation(job),
        replicas={"master": dict(zero), "worker": dict(zero), "ps": dict(zero)},  # every pod of ours is going
    )
    if _write_status(ctx, job, obs) is not None:
        ctx.log.warning("invalid spec", key=key, error=message)
        ctx.events.event(job, WARNING, INVALID_SPEC, message)


def _record_conflict(ctx: Ctx, key: str, job: Obj, obs: Observation, replicas: Replicas) -> None:
    """A same-name pod that is not ours holds the master's name: report it once (no hot retry); the pod's
    deletion wakes the job (``job_of``)."""
    ns = meta.namespace(job)
    message = (
        f"pod {ns}/{obs.master_name} exists and is not controlled by {JOB_GVK.kind} {key}: "
        "delete it or rename the job"
    )
    obs.conflict = message
    obs.replicas = {"master": count_pods([]), "worker": count_pods(replicas["worker"]), "ps": count_pods(replicas["ps"])}
    if _write_status(ctx, job, obs) is not None:
        ctx.log.warning("master pod name taken by a pod that is not ours", key=key, pod=f"{ns}/{obs.master_name}")
        ctx.events.event(job, WARNING, "FailedCreate", message)


def _finished_master(ctx: Ctx, job: Obj) -> Obj | None:
    """The finished master of this job and generation that the delete handler saw go, if any."""
    state = ctx.job_state(job)
    pod = state.finished_master
    if pod is None:
        return None
    if not is_current_generation(pod, job, GENERATION_ANNOTATION):
        state.finished_master = None
        return None
    return pod


def _stop_outdated_pods(ctx: Ctx, key: str, job: Obj, replicas: Replicas) -> None:
    """A spec edited into an invalid one: the master built from the previous spec and its replicas go."""
    ns = meta.namespace(job)
    master = ctx.get_cached(PODS, ns, master_pod_name(meta.name(job)))
    if (
        master is not None
        and meta.is_controlled_by(master, job)
        and not is_current_generation(master, job, GENERATION_ANNOTATION)
    ):
        ctx.prevent_recreation.add(key)
        if meta.deletion_timestamp(master) is None:
            ctx.delete_object(PODS, ns, meta.name(master))
    _cleanup_replicas(ctx, key, replicas)


def _replica_pods(ctx: Ctx, ns: str, job_name: str) -> Replicas:
    """The job's worker and ps pods, looked up by index (the master owns them; they name the job in a label)."""
    out: Replicas = {"worker": [], "ps": []}
    for pod in ctx.indexer(PODS).by_index(REPLICA_INDEX, f"{ns}/{job_name}"):
        out[meta.labels(pod)[REPLICA_TYPE_LABEL]].append(pod)
    return out


def _cleanup_replicas(ctx: Ctx, key: str, replicas: Replicas) -> None:
    """Delete the worker and ps pods still around (the job has finished, or its spec became invalid)."""
    for pod in replicas["worker"] + replicas["ps"]:
        if meta.deletion_timestamp(pod) is None:
            ctx.log.info("deleting replica pod", key=key, pod=meta.name(pod))
            ctx.delete_object(PODS, meta.namespace(pod), meta.name(pod))


KIND: Kind[None] = Kind(
    name="ElasticAIJob",
    resource=ELASTIC_AI_JOBS,
    sync=sync,
    state=add_replica_index,
    owns=(PODS,),
    recreates=(PODS,),
    should_recreate=should_recreate,
    on_deleted=note_finished_master,
    job_of=job_of,
    replaces_workers_on_new_generation=True,
    ignores_own_status_writes=True,  # the master pod's events drive every step; a status write needs no second pass
    owned_update_matters=_pod_update_matters,
)
NAME = KIND.name
