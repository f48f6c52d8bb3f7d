"""``BaseController``: the shape of a Go Sedna controller, once, so that a kind only writes its own rules.

informers (the job kind, the kinds it owns, the kinds it references) → handlers → ``enqueue_controller`` →
rate-limited queue named after the controller → ``workers`` threads running ``worker()`` → ``process_next_work_item()``
→ ``sync(key) -> forget``. Owned objects (``owned.OwnedObjects``) are found through the ``controller-uid`` index,
mapped back to their job with the UID check, and optionally recreated when deleted from under a live job. Per-job
state lives in one ``JobState`` per job UID, dropped when the job goes. Downstream (``sync_to_edge``) and upstream
(``register_upstream``) hooks go through ``edge``, an ``EdgeLink``.

Guarantees: those of the reconcile runner (``reconcile.Controller``, kept in ``self.loop``), in short:
* A key is never synced by two workers at once (the queue is stingy); every sync is counted and timed in
  ``sedna_gm_controller_sync_total``/``_duration_seconds``.
* An exception in ``sync`` is logged with the key, counted, and the key requeued with rate limiting (5 ms
  doubling, capped at 360 s: ``reconcile.controller_rate_limiter``) for as long as it fails, as Go Sedna's
  ``AddRateLimited``: ``update_job`` ignores resyncs, so a dropped key would never be synced again. A
  ``max_retries`` limit can be set (then the key is dropped with a log line). An API server's answer is logged with
  its status code, reason and message, without a traceback, at a bounded rate per key. A worker thread never dies
  of it (and restarts after anything else, counted in ``sedna_gm_controller_worker_restarts_total``).
* ``run(stop)`` waits for the caches, starts the workers, and on stop stops taking work and waits (bounded by
  ``drain_timeout``) for the items in flight.
* Handlers and downstream hooks never raise into the informer: errors are logged with the object's key. Upstream
  handlers pass ``InvalidReport`` and API/connection errors on to the edge link (counted refusal, transient retry).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import structlog
from prometheus_client import CollectorRegistry

from apis import errors, meta
from apis.client import ClientsetBase
from apis.record import EventRecorder
from apis.resources import GroupVersionResource, lookup
from informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, split_meta_namespace_key
from reconcile import Controller, Result, SednaBackoff, controller_rate_limiter, failure_fields
from workqueue import RateLimiter

from . import reports
from .edge import DELETE, INSERT, UPDATE, EdgeLink, InvalidReport, UpstreamMessage
from .jobstate import JobState, JobStates
from .metrics import controller_metrics
from .owned import OwnedObjects
from .references import NodeCheck
from .selfheal import RECREATION_TTL
from .status import Mutation, update_status

__all__ = ["BaseController", "KindController"]

log = structlog.get_logger(__name__)

DEFAULT_LC_SERVER = "http://localhost:9100"
DEFAULT_KB_SERVER = "http://localhost:9020"


class BaseController(OwnedObjects):
    """Subclasses implement ``sync(key) -> bool``; ``kind`` and ``gvk`` come from ``job_resource``.

    ``owns``: the resources whose objects the kind creates (pods, deployments, services, HPAs; watched, indexed by
    controller UID); ``recreates``: those of them recreated when deleted from under a live job. ``lc_server`` and
    ``kb_server`` are what Sedna workers get as ``LC_SERVER``/``KB_SERVER``; ``now`` gives status timestamps.
    A kind plugs its edge hooks in as class attributes: ``sync_to_edge = downstream.sync_to_edge`` and
    ``update_from_edge = upstream.update_from_edge`` (functions taking the controller first, as Go's methods).
    """

    NAME: str = ""  # the registry name, used by ``from_context``
    update_from_edge: Callable[..., None] | None = None  # upstream hook, registered with ``edge`` when set
    backoff_base: float = 10.0  # Sedna's GetBackoff: base·2^(requeues−1) for non-immediate enqueues
    backoff_max: float = 360.0

    def __init__(
        self,
        name: str,
        clientset: ClientsetBase,
        informer_factory: Any,
        job_resource: GroupVersionResource,
        workers: int = 2,
        *,
        owns: Sequence[GroupVersionResource] = (),
        recreates: Sequence[GroupVersionResource] = (),
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
            raise ValueError(f"{name}: workers must be >= 1, got {workers}")
        self.name = name
        self.clientset = clientset
        self.informer_factory = informer_factory
        self.workers = workers
        self.max_retries = max_retries
        self.drain_timeout = drain_timeout
        self.job_resource = job_resource
        self.gvk = lookup(job_resource).gvk
        self.kind = self.gvk.kind
        self.edge = edge
        self.now = now
        self.lc_server = lc_server
        self.kb_server = kb_server
        self.recorder = recorder or EventRecorder(clientset, "sedna-gm")
        self.metrics = controller_metrics(registry)
        self._log = log.bind(controller=name)
        self.log = self._log  # KindContext's names, for the runtime helpers
        self.events = self.recorder
        self.loop = Controller(
            name, self._sync_result, workers=workers, rate_limiter=rate_limiter or controller_rate_limiter(),
            metrics=self.metrics, max_retries=max_retries, drain_timeout=drain_timeout,
            backoff=SednaBackoff(self.backoff_base, self.backoff_max), log=log,
        )
        self.queue = self.loop.queue
        self.synced = self.loop.synced
        self.cache_syncs = self.loop.cache_syncs
        self.job_states = JobStates(recreation_ttl, recreation_timer)
        # DESIGN's self-healing structures, dropped per job by ``forget_job``: the pods and worker slots (re)created in
        # the last ``recreation_ttl`` seconds, and the keys of the jobs whose workers are being replaced on purpose
        self.recreated_pods = self.job_states.recreated_pods
        self.prevent_recreation = self.job_states.prevent_recreation
        self.job_informer = informer_factory.for_resource(job_resource)
        self.job_lister = self.job_informer.lister()
        self.job_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(add_func=self.add_job, update_func=self.update_job, delete_func=self.delete_job)
        )
        self.loop.add_cache_sync(self.job_informer.informer().has_synced)
        self._watch_owned(owns, recreates)
        if self.update_from_edge is not None:
            self.register_upstream(self.update_from_edge)

    @classmethod
    def from_context(cls, ctx: Any) -> Any:
        """Registry factory: the controller built from a ``ControllerContext`` (workers, recorder, metrics registry,
        drain timeout, edge link, and the LC/KB servers of the config)."""
        cfg = ctx.config
        return cls(
            ctx.clientset, ctx.informer_factory, ctx.workers_for(cls.NAME), recorder=ctx.recorder,
            registry=ctx.registry, drain_timeout=ctx.drain_timeout, edge=ctx.edge,
            lc_server=cfg.local_controller.server if cfg is not None else DEFAULT_LC_SERVER,
            kb_server=cfg.knowledge_base_server.server if cfg is not None else DEFAULT_KB_SERVER,
        )

    # -- to implement ---------------------------------------------------------------------------------------------
    def sync(self, key: str) -> bool:
        """Reconcile the object ``key``; return True to forget its rate-limit history. Raise to requeue."""
        raise NotImplementedError

    def sync_to_edge(self, operation: str, job: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> None:
        """Downstream hook (Sedna's ``syncToEdge``): called with ``insert`` on add, ``update`` on a change (``old``
        set) and ``delete`` on deletion; send with ``send_to_edge``. Default: nothing goes to the edge."""

    # -- jobs -----------------------------------------------------------------------------------------------------
    def typed(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """A shallow copy of ``obj`` with ``apiVersion``/``kind`` set (list items from some servers lack them)."""
        out = dict(obj)
        out.setdefault("apiVersion", self.gvk.api_version)
        out.setdefault("kind", self.kind)
        return out

    def get_job(self, key: str) -> dict[str, Any] | None:
        """The cached job ``namespace/name`` with ``apiVersion``/``kind`` (shared: do not modify), or ``None``."""
        ns, name = split_meta_namespace_key(key)
        try:
            return self.typed(self.job_lister.namespaced(ns).get(name))
        except errors.NotFoundError:
            return None

    def job_client(self, namespace: str) -> Any:
        return self.clientset.resource(self.job_resource, namespace)

    def job_state(self, job: Mapping[str, Any]) -> JobState:
        """Everything remembered about ``job`` between syncs (one record per job UID)."""
        return self.job_states.for_job(job)

    def forget_job(self, key: str, uid: str = "") -> None:
        """Drop all per-job state of ``key`` (its ``JobState``, its ``recreated_pods`` entries, its
        ``prevent_recreation`` mark): the one place it is cleared (job deleted, or found gone by ``sync``)."""
        self.job_states.forget(key, uid)

    def update_job_status(self, job: Mapping[str, Any], mutate: Mutation) -> dict[str, Any] | None:
        """Write the status through the subresource; ``mutate`` changes only the fields this writer owns and is
        applied again to a fresh copy on conflict (see ``status.update_status``)."""
        return update_status(self.job_client(meta.namespace(job)), job, mutate)

    def job_is_live(self, job: Mapping[str, Any]) -> bool:
        """Ask the API server (not the cache) whether ``job`` still exists, with the same UID, and is not being
        deleted. Used before (re)creating workers: the cache may not have seen the job's deletion yet (Sedna #466)."""
        try:
            live = self.job_client(meta.namespace(job)).get(meta.name(job))
        except errors.NotFoundError:
            return False
        return meta.uid(live) == meta.uid(job) and meta.deletion_timestamp(live) is None

    def resolve_controller_ref(self, namespace: str, ref: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """The job the controller reference points to, if it is of our kind, cached, and has the same UID."""
        if ref is None or ref.get("kind") != self.kind:
            return None
        try:
            job = self.job_lister.namespaced(namespace).get(ref.get("name", ""))
        except errors.NotFoundError:
            return None
        if meta.uid(job) != ref.get("uid"):
            return None
        return self.typed(job)

    # -- enqueueing -----------------------------------------------------------------------------------------------
    def get_backoff(self, key: str) -> float:
        """Go Sedna's ``GetBackoff``: ``backoff_base·2^(requeues−1)``, capped at ``backoff_max``."""
        return self.loop.get_backoff(key)

    def enqueue_controller(self, obj: Any, immediate: bool = False) -> None:
        """Queue the key of ``obj`` (or of a tombstone); without ``immediate``, after the key's current backoff."""
        self.loop.enqueue_controller(obj, immediate)

    # -- job handlers ---------------------------------------------------------------------------------------------
    def add_job(self, job: Any) -> None:
        self.enqueue_controller(job, immediate=True)
        self._downstream(INSERT, job)

    def update_job(self, old: Any, cur: Any) -> None:
        # Same resourceVersion = a periodic resync, not a change. Like Sedna's controllers we skip it: a job's sync
        # depends only on the job and its workers, whose own events wake it, so a resync would redo the same sync.
        if meta.resource_version(old) == meta.resource_version(cur):
            return
        self.enqueue_controller(cur, immediate=True)
        self._downstream(UPDATE, cur, old)

    def delete_job(self, obj: Any) -> None:
        job = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(job, Mapping):
            self.forget_job(f"{meta.namespace(job)}/{meta.name(job)}", meta.uid(job))
            self._downstream(DELETE, job)
        self.enqueue_controller(obj, immediate=True)

    def retry_later(self, key: str) -> bool:
        """Sync ``key`` again after its rate-limited backoff (for a wait that no event ends, e.g. a missing Secret);
        returns False for ``sync`` to return (its rate-limit history is kept, so the waits grow)."""
        self.queue.add_rate_limited(key)
        return False

    # -- edge -----------------------------------------------------------------------------------------------------
    def send_to_edge(self, node: str, operation: str, obj: Mapping[str, Any]) -> None:
        """Queue ``operation`` of ``obj`` (kind set) for ``node``; nothing without an edge link or a node."""
        if self.edge is None or not node:
            return
        self.edge.send_to_edge(node, operation, self.typed(obj))

    def log_edge_skip(self, obj: Mapping[str, Any], why: str) -> None:
        self._log.warning("not sent to the edge", key=f"{meta.namespace(obj)}/{meta.name(obj)}", reason=why)

    def log_report_dropped(self, msg: UpstreamMessage, why: str) -> None:
        self._log.warning("edge report dropped", key=f"{msg.namespace}/{msg.name}", node=msg.node, reason=why)

    def _downstream(self, operation: str, job: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> None:
        if self.edge is None:
            return
        key = f"{meta.namespace(job)}/{meta.name(job)}"
        try:
            self.sync_to_edge(operation, self.typed(job), self.typed(old) if old is not None else None)
        except Exception as exc:
            self._log.error("downstream failed; the edge gets this object on its next change or reconnect",
                            key=key, operation=operation, **failure_fields(exc))

    def register_upstream(self, handler: Callable[[UpstreamMessage], None]) -> None:
        """Route the edge's reports about our kind to ``handler`` (Sedna's ``SetUpstreamHandler``). ``InvalidReport``
        (a refused report) and API/connection errors go on to the edge link, which counts refusals and retries
        transient failures; any other failure is logged with its node and object and not raised."""
        if self.edge is None:
            return

        def guarded(msg: UpstreamMessage) -> None:
            key = f"{msg.namespace}/{msg.name}"
            try:
                handler(msg)
            except InvalidReport:
                raise  # a refusal: the edge link logs and counts it
            except errors.ApiError as exc:
                if not reports.is_too_large(exc):
                    raise  # the edge link retries the transient ones and logs the rest
                reports.report_too_large(self, msg, exc)  # never retried: it would not fit next time either
            except (ConnectionError, TimeoutError):
                raise  # the edge link retries the transient ones (conflict, 429, 5xx, connection) and logs the rest
            except Exception as exc:
                self._log.error("upstream report not applied", key=key, node=msg.node, **failure_fields(exc))

        self.edge.add_upstream_handler(self.kind, guarded)

    # -- workers: the reconcile runner's (``self.loop``) ----------------------------------------------------------
    def _sync_result(self, key: str) -> Result:
        """The kinds' ``sync(key) -> bool`` as the runner's: True forgets the key's rate-limit history (``Result()``),
        False keeps it (``Result(forget=False)``; ``retry_later`` has requeued it already)."""
        ns, name = split_meta_namespace_key(key)
        if not ns or not name:
            self._log.warning("invalid key: namespace or name missing", key=key)
            return Result()
        return Result() if self.sync(key) else Result(forget=False)

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


class KindController(BaseController):
    """A ``BaseController`` declared by class attributes, the usual way to write a kind::

        class JointInferenceController(KindController):
            NAME = "JointInference"                      # registry name
            JOB_RESOURCE = JOINT_INFERENCE_SERVICES      # the kind (its informer, lister, status client)
            OWNS = (DEPLOYMENTS, SERVICES, HORIZONTAL_POD_AUTOSCALERS)
            RECREATES = (DEPLOYMENTS,)                   # self-healed when deleted from under a live job
            REFERENCES = {MODELS: model_refs}            # job → names; events of those objects wake the job
            sync_to_edge = downstream.sync_to_edge
            update_from_edge = upstream.update_from_edge

            def sync(self, key): ...

    ``reference_listers[gvr]`` are the listers of the referenced kinds; ``new_controller = Cls.from_context``.
    """

    JOB_RESOURCE: GroupVersionResource
    OWNS: tuple[GroupVersionResource, ...] = ()
    RECREATES: tuple[GroupVersionResource, ...] = ()
    REFERENCES: Mapping[GroupVersionResource, Callable[[Mapping[str, Any]], Any]] = {}
    CHECKS_NODES = False  # self.nodes: a references.NodeCheck of the nodes the job names

    def __init__(self, clientset: ClientsetBase, informer_factory: Any, workers: int = 2, **kwargs: Any) -> None:
        super().__init__(self.NAME, clientset, informer_factory, self.JOB_RESOURCE, workers, owns=self.OWNS,
                         recreates=self.RECREATES, **kwargs)
        self.reference_listers = {gvr: self.watch_references(gvr, refs) for gvr, refs in self.REFERENCES.items()}
        self.nodes = NodeCheck(self.informer_factory, self.job_informer, self.loop) if self.CHECKS_NODES else None
