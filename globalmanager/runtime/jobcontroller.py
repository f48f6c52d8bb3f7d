"""``JobController``: runs one ``Kind`` — the shape of a Go Sedna controller, once, for every kind.

informers (the job kind, the kinds it owns, the kinds it references) → handlers → ``enqueue_controller`` →
rate-limited queue named after the kind → ``workers`` threads running ``worker()`` → ``process_next_work_item()`` →
``sync(key)`` → the kind's ``sync(ctx, key, job)``. Owned objects are found through the ``controller-uid`` index,
mapped back to their job with the UID check (an object of a deleted-and-recreated job of the same name never wakes
the new one), and recreated when deleted from under a live job (``Kind.recreates``). Updates with an unchanged
resourceVersion (resyncs) are ignored, as in Sedna: a job's sync depends only on the job and its objects, whose own
events wake it. An owned object's add or update (not being deleted) queues its job at low priority
(``Queue.add_low_priority``): under a backlog, new and changed jobs and deleted workers go before status refreshes.

Guarantees: those of the reconcile runner (``reconcile.Controller``, ``self.loop``): a key is never synced by two
workers at once; every sync is counted and timed (``sedna_gm_controller_*``); an exception requeues the key with
rate limiting for as long as it fails (5 ms doubling, capped at 360 s) — logged with its key, an API error with its
status, reason and message; ``run(stop)`` waits for the caches, runs the workers and drains (bounded) on stop.
Handlers and edge hooks never raise into the informer: errors are logged with the object's key. Upstream hooks pass
``InvalidReport`` and API/connection errors on to the edge link (counted refusal, transient retry).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Mapping
from typing import Generic, TypeVar

import structlog
from prometheus_client import CollectorRegistry

from apis import errors, meta
from apis.client import ClientsetBase
from apis.meta import Obj
from apis.record import EventRecorder
from apis.resources import DEPLOYMENTS, PODS, GroupVersionResource, lookup
from informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, SharedInformerFactory
from informers.factory import GenericInformer
from informers.listers import Lister
from reconcile import (
    Controller,
    Result,
    SednaBackoff,
    controller_rate_limiter,
    failure_fields,
    object_identity,
)
from workqueue import RateLimiter

from . import reports
from .context import KindContext
from .deployments import deployment_update_matters
from .edge import DELETE, INSERT, UPDATE, EdgeLink, InvalidReport, UpstreamMessage
from .indexes import CONTROLLER_UID_INDEX, controller_uid_index_func, ensure_index, reference_index_func
from .jobstate import JobStates
from .kind import Kind, Refs
from .metrics import controller_metrics
from .references import NodeCheck
from .selfheal import RECREATION_TTL

__all__ = ["DEFAULT_KB_SERVER", "DEFAULT_LC_SERVER", "JobController"]

S = TypeVar("S")

log = structlog.get_logger(__name__)

DEFAULT_LC_SERVER = "http://localhost:9100"
DEFAULT_KB_SERVER = "http://localhost:9020"
BACKOFF_BASE = 10.0  # Sedna's GetBackoff: base·2^(requeues−1) for non-immediate enqueues, capped
BACKOFF_MAX = 360.0


Deleted = Obj | DeletedFinalStateUnknown
"""What a delete handler gets: the object, or a tombstone when the watch missed its deletion."""


def _unwrap(obj: Deleted) -> object:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


class JobController(Generic[S]):
    """The controller of one kind. ``ctx`` is what the kind's rules get; the rest is plumbing a kind never sees."""

    def __init__(
        self,
        kind: Kind[S],
        clientset: ClientsetBase,
        informer_factory: SharedInformerFactory,
        workers: int = 2,
        *,
        max_workers: int | None = None,
        edge: EdgeLink | None = None,
        recorder: EventRecorder | None = None,
        registry: CollectorRegistry | None = None,
        rate_limiter: RateLimiter | None = None,
        max_retries: int | None = None,
        drain_timeout: float = 10.0,
        recreation_ttl: float = RECREATION_TTL,
        recreation_timer: Callable[[], float] = time.monotonic,
        now: Callable[[], str] = meta.now_rfc3339,
        lc_server: str = DEFAULT_LC_SERVER,
        kb_server: str = DEFAULT_KB_SERVER,
    ) -> None:
        if workers < 1:
            raise ValueError(f"{kind.name}: workers must be >= 1, got {workers}")
        self.definition = kind
        self.name = kind.name
        self.kind = lookup(kind.resource).kind
        self.informer_factory = informer_factory
        self.workers = workers
        self.edge = edge
        self.metrics = controller_metrics(registry)
        self._log = log.bind(controller=kind.name)
        self.loop = Controller(
            kind.name, self.sync, workers=workers, max_workers=max_workers, rate_limiter=rate_limiter or controller_rate_limiter(),
            metrics=self.metrics, max_retries=max_retries, drain_timeout=drain_timeout,
            backoff=SednaBackoff(BACKOFF_BASE, BACKOFF_MAX), log=log,
        )
        self.queue = self.loop.queue
        self.synced = self.loop.synced
        self.job_states = JobStates(recreation_ttl, recreation_timer)
        self.recreated_pods = self.job_states.recreated_pods
        self.prevent_recreation = self.job_states.prevent_recreation

        self.job_informer = informer_factory.for_resource(kind.resource)
        self.job_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(add_func=self.add_job, update_func=self.update_job, delete_func=self.delete_job)
        )
        self.loop.add_cache_sync(self.job_informer.informer().has_synced)
        self.owned_informers = {gvr: self._watch_owned(gvr) for gvr in kind.owns}
        listers = {gvr: self._watch_references(gvr, refs) for gvr, refs in kind.references.items()}
        nodes = NodeCheck(informer_factory, self.job_informer, self.loop) if kind.checks_nodes else None
        self.ctx: KindContext[S] = KindContext(
            kind, clientset=clientset, job_lister=self.job_informer.lister(), owned_informers=self.owned_informers,
            listers=listers, nodes=nodes, job_states=self.job_states, queue=self.queue,
            recorder=recorder or EventRecorder(clientset, "sedna-gm"), metrics=self.metrics, edge=edge, now=now,
            lc_server=lc_server, kb_server=kb_server,
        )
        self.ctx.state = kind.state(self.ctx)
        if kind.from_edge is not None and edge is not None:
            edge.add_upstream_handler(self.ctx.kind, functools.partial(self._upstream, kind.from_edge))

    # -- wiring ---------------------------------------------------------------------------------------------------
    def _watch_owned(self, gvr: GroupVersionResource) -> GenericInformer:
        generic = self.informer_factory.for_resource(gvr)
        informer = generic.informer()
        ensure_index(informer, CONTROLLER_UID_INDEX, controller_uid_index_func)
        if gvr == PODS:
            handlers = ResourceEventHandlerFuncs(add_func=self.add_pod, update_func=self.update_pod,
                                                 delete_func=self.delete_pod)
        else:
            handlers = ResourceEventHandlerFuncs(
                add_func=functools.partial(self._add_owned, gvr), update_func=functools.partial(self._update_owned, gvr),
                delete_func=functools.partial(self._delete_owned, gvr))
        informer.add_event_handler(handlers)
        self.loop.add_cache_sync(informer.has_synced)
        return generic

    def _watch_references(self, gvr: GroupVersionResource, refs: Refs) -> Lister:
        """Wake the jobs whose ``refs(job)`` name an object of ``gvr`` when it is added, deleted or its spec
        changes (found by an index of the jobs, never a scan). Returns the lister of ``gvr``."""
        ensure_index(self.job_informer.informer(), f"references:{gvr.resource}", reference_index_func(refs))
        generic = self.informer_factory.for_resource(gvr)
        wake = functools.partial(self.wake_referencing, gvr)

        def changed(old: Obj, cur: Obj) -> None:
            if old.get("spec") != cur.get("spec"):
                wake(cur)

        generic.informer().add_event_handler(ResourceEventHandlerFuncs(add_func=wake, update_func=changed, delete_func=wake))
        self.loop.add_cache_sync(generic.informer().has_synced)
        lister: Lister = generic.lister()
        return lister

    def wake_referencing(self, gvr: GroupVersionResource, obj: Deleted) -> None:
        """Enqueue every job that references ``obj`` (an object of ``gvr``, or its tombstone), found by index."""
        referenced = _unwrap(obj)
        if not isinstance(referenced, Mapping):
            return
        key = f"{meta.namespace(referenced)}/{meta.name(referenced)}"
        for job in self.job_informer.informer().get_indexer().by_index(f"references:{gvr.resource}", key):
            self.enqueue_controller(job, immediate=True)

    # -- enqueueing -----------------------------------------------------------------------------------------------
    def get_backoff(self, key: str) -> float:
        """Go Sedna's ``GetBackoff``: ``10 s·2^(requeues−1)``, capped at 360 s."""
        return self.loop.get_backoff(key)

    def enqueue_controller(self, obj: Deleted, immediate: bool = False, low_priority: bool = False) -> None:
        """Queue the key of ``obj`` (or of a tombstone); without ``immediate``, after the key's current backoff;
        ``low_priority``: behind the keys queued without it."""
        self.loop.enqueue_controller(obj, immediate, low_priority)

    # -- job handlers ---------------------------------------------------------------------------------------------
    def add_job(self, job: Obj) -> None:
        self.enqueue_controller(job, immediate=True)
        self._to_edge(INSERT, job)

    def update_job(self, old: Obj, cur: Obj) -> None:
        if meta.resource_version(old) == meta.resource_version(cur):
            return  # a periodic resync, not a change
        if self.definition.replaces_workers_on_new_generation and meta.generation(old) != meta.generation(cur):
            # the job's workers are about to be replaced: their deletion must not trigger recreations
            self.prevent_recreation.add(f"{meta.namespace(cur)}/{meta.name(cur)}")
        if not self._echoes_own_status_write(cur):
            self.enqueue_controller(cur, immediate=True)
        self._to_edge(UPDATE, cur, old)

    def _echoes_own_status_write(self, job: Obj) -> bool:
        """Whether ``job`` is the echo of the status this controller last wrote, with no sync since that read an
        older copy (``sync`` forgets the write then)."""
        if not self.definition.ignores_own_status_writes:
            return False
        state = self.job_states.get(meta.uid(job))
        return state is not None and state.status_written_rv == meta.resource_version(job)

    def delete_job(self, obj: Deleted) -> None:
        job = _unwrap(obj)
        if isinstance(job, Mapping):
            self.ctx.forget_job(f"{meta.namespace(job)}/{meta.name(job)}", meta.uid(job))
            self._to_edge(DELETE, job)
        self.enqueue_controller(obj, immediate=True)

    # -- owned-object handlers (Go's addPod/updatePod/deletePod, addDeployment/...) -------------------------------
    def _job_of(self, obj: Obj) -> Obj | None:
        job = self.ctx.resolve_controller_ref(meta.namespace(obj), meta.get_controller_of(obj))
        if job is None and self.definition.job_of is not None:
            return self.definition.job_of(self.ctx, obj)
        return job

    def _enqueue_owner(self, obj: Obj, immediate: bool, low_priority: bool = False) -> None:
        job = self._job_of(obj)
        if job is not None:
            self.enqueue_controller(job, immediate, low_priority)

    def add_pod(self, pod: Obj) -> None:
        # a pod already being deleted (seen after a restart) is only a reason to look at its job again;
        # a failed pod wakes its job after the backoff, as in Sedna
        deleting = meta.deletion_timestamp(pod) is not None
        immediate = deleting or (pod.get("status") or {}).get("phase") != "Failed"
        self.ctx.observe_creation(PODS, pod)
        self._enqueue_owner(pod, immediate, low_priority=not deleting)

    def update_pod(self, old: Obj, cur: Obj) -> None:
        if meta.resource_version(old) != meta.resource_version(cur) and self._update_matters(PODS, old, cur):
            self.add_pod(cur)

    def delete_pod(self, obj: Deleted) -> None:
        self._delete_owned(PODS, obj)

    # Go's deployment handlers: the owned-object handlers of DEPLOYMENTS
    def add_deployment(self, deployment: Obj) -> None:
        self._add_owned(DEPLOYMENTS, deployment)

    def update_deployment(self, old: Obj, cur: Obj) -> None:
        self._update_owned(DEPLOYMENTS, old, cur)

    def delete_deployment(self, obj: Deleted) -> None:
        self._delete_owned(DEPLOYMENTS, obj)

    def _add_owned(self, gvr: GroupVersionResource, obj: Obj) -> None:
        self.ctx.observe_creation(gvr, obj)
        self._enqueue_owner(obj, True, low_priority=meta.deletion_timestamp(obj) is None)

    def _update_owned(self, gvr: GroupVersionResource, old: Obj, cur: Obj) -> None:
        if meta.resource_version(old) == meta.resource_version(cur):
            return
        if self._update_matters(gvr, old, cur):
            self._enqueue_owner(cur, True, low_priority=meta.deletion_timestamp(cur) is None)

    def _update_matters(self, gvr: GroupVersionResource, old: Obj, cur: Obj) -> bool:
        if gvr == DEPLOYMENTS and not deployment_update_matters(old, cur):
            return False
        matters = self.definition.owned_update_matters
        return matters is None or matters(gvr, old, cur)

    def _delete_owned(self, gvr: GroupVersionResource, obj: Deleted) -> None:
        """Wake the object's job; recreate the object if it was deleted from under a live job."""
        kind = lookup(gvr).kind
        gone = _unwrap(obj)
        if not isinstance(gone, Mapping) or gone.get("kind", kind) != kind:
            self._log.warning(f"delete handler of {gvr.resource}: not a {kind}; ignored", **object_identity(gone))
            return
        self.ctx.observe_creation(gvr, gone)  # created and deleted before the cache showed it
        if self.definition.on_deleted is not None:
            self.definition.on_deleted(self.ctx, gvr, gone)  # before the job's sync can run
        self._enqueue_owner(gone, True)
        if gvr in self.definition.recreates:
            if self.definition.recreate is not None:
                self.definition.recreate(self.ctx, gvr, gone)
            else:
                self.ctx.recreate_deleted(gvr, gone)

    # -- the edge -------------------------------------------------------------------------------------------------
    def _to_edge(self, operation: str, job: Obj, old: Obj | None = None) -> None:
        if self.edge is None or self.definition.to_edge is None:
            return
        try:
            self.definition.to_edge(self.ctx, operation, self.ctx.typed(job), self.ctx.typed(old) if old is not None else None)
        except Exception as exc:
            self._log.error("downstream failed; the edge gets this object on its next change or reconnect",
                            key=f"{meta.namespace(job)}/{meta.name(job)}", operation=operation, **failure_fields(exc))

    def _upstream(self, handler: Callable[[KindContext[S], UpstreamMessage], None], msg: UpstreamMessage) -> None:
        """Sedna's upstream handler, guarded: ``InvalidReport`` (a refusal) and API/connection errors go on to the
        edge link (counted refusal, transient retry); a report too large for the API server is recorded on the job
        and never retried; any other failure is logged with its node and object."""
        try:
            handler(self.ctx, msg)
        except (InvalidReport, ConnectionError, TimeoutError):
            raise
        except errors.ApiError as exc:
            if not reports.is_too_large(exc):
                raise
            reports.report_too_large(self.ctx, msg, exc)  # it would not fit next time either
        except Exception as exc:
            self._log.error("upstream report not applied", key=f"{msg.namespace}/{msg.name}", node=msg.node,
                            **failure_fields(exc))

    # -- workers: the reconcile runner's (``self.loop``) ----------------------------------------------------------
    def sync(self, key: str) -> Result | None:
        """Reconcile ``key``: a job that is gone has its per-job state dropped (its objects are garbage-collected
        through their ownerReferences); a cached one goes to the kind's ``sync``."""
        ns, _, name = key.partition("/")
        if not ns or not name:
            self._log.warning("invalid key: namespace or name missing", key=key)
            return None
        job = self.ctx.get_job(key)
        if job is None:
            self.ctx.forget_job(key)
            return None
        state = self.job_states.get(meta.uid(job))
        if state is not None and state.status_written_rv and state.status_written_rv != meta.resource_version(job):
            # the cache does not show our last status write yet: this sync compares against an older status and
            # may leave the written one as it is, so the write's echo must wake the job after all
            state.status_written_rv = ""
        with self.ctx.sync_scope(job):
            return self.definition.sync(self.ctx, key, job)

    def worker(self) -> None:
        self.loop.worker()

    def process_next_work_item(self) -> bool:
        return self.loop.process_next_work_item()

    def run(self, stop: threading.Event) -> None:
        """Wait for the caches, run the workers until ``stop``, then drain (bounded) and return."""
        self.loop.run(stop)

    def shutdown(self, timeout: float | None = None) -> bool:
        """Stop taking work and wait up to ``timeout`` (default ``drain_timeout``) for in-flight syncs.
        Returns True when every worker finished in time."""
        return self.loop.shutdown(timeout)
