"""``BaseController``: the shape of a Go Sedna controller, once, so that controllers only write ``sync(key)``.

informers (job + pods) → handlers → ``enqueue_controller`` → rate-limited queue named after the controller →
``workers`` threads running ``worker()`` → ``process_next_work_item()`` → ``sync(key) -> forget``.

Guarantees:
* A key is never synced by two workers at once (the queue is stingy).
* An exception in ``sync`` is logged with the key, counted, and the key requeued with rate limiting; after
  ``max_retries`` it is dropped with a log line. A worker thread never dies of it (and restarts after anything else).
* ``run(stop)`` waits for the caches, starts the workers, and on stop stops taking work and waits (bounded by
  ``drain_timeout``) for the items in flight.
* Pod handlers resolve the pod's controller ownerReference against the job lister and check the UID, so a pod
  owned by a deleted-and-recreated job of the same name never wakes the new one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import structlog
from prometheus_client import CollectorRegistry

from apis import errors, meta
from apis.client import ClientsetBase
from apis.resources import GroupVersionResource
from informers import (
    DeletedFinalStateUnknown,
    ResourceEventHandlerFuncs,
    deletion_handling_meta_namespace_key_func,
    split_meta_namespace_key,
    wait_for_cache_sync,
)
from workqueue import RateLimiter, RateLimitingQueue, default_controller_rate_limiter

from .events import EventRecorder
from .metrics import controller_metrics
from .selfheal import RECREATION_TTL, PreventRecreation, RecreatedPods

__all__ = ["BaseController", "DEFAULT_MAX_RETRIES"]

log = structlog.get_logger(__name__)

DEFAULT_MAX_RETRIES = 15
WORKER_RESTART_PERIOD = 1.0


class BaseController:
    """Subclasses set ``kind`` (the owner kind of their pods) and implement ``sync(key) -> bool``."""

    kind: str = ""
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
        recorder: EventRecorder | None = None,
        registry: CollectorRegistry | None = None,
        rate_limiter: RateLimiter | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        drain_timeout: float = 10.0,
        recreation_ttl: float = RECREATION_TTL,
        recreation_timer: Callable[[], float] = time.monotonic,
    ) -> None:
        if workers < 1:
            raise ValueError(f"{name}: workers must be >= 1, got {workers}")
        self.name = name
        self.clientset = clientset
        self.workers = workers
        self.max_retries = max_retries
        self.drain_timeout = drain_timeout
        self.recorder = recorder or EventRecorder(clientset, "sedna-gm")
        self.metrics = controller_metrics(registry)
        self.queue = RateLimitingQueue(rate_limiter or default_controller_rate_limiter(), name=name)
        self.recreated_pods = RecreatedPods(ttl=recreation_ttl, timer=recreation_timer)
        self.prevent_recreation = PreventRecreation()
        self.job_informer = informer_factory.for_resource(job_resource)
        self.job_lister = self.job_informer.lister()
        self.job_client = lambda ns: clientset.resource(job_resource, ns)
        self.pod_informer = informer_factory.core_v1().pods()
        self.pod_lister = self.pod_informer.lister()
        self.job_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(add_func=self.add_job, update_func=self.update_job, delete_func=self.delete_job)
        )
        self.pod_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(add_func=self.add_pod, update_func=self.update_pod, delete_func=self.delete_pod)
        )
        self.cache_syncs: list[Callable[[], bool]] = [
            self.job_informer.informer().has_synced,
            self.pod_informer.informer().has_synced,
        ]
        self.synced = threading.Event()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._log = log.bind(controller=name)

    # -- to implement ---------------------------------------------------------------------------------------------
    def sync(self, key: str) -> bool:
        """Reconcile the object ``key``; return True to forget its rate-limit history. Raise to requeue."""
        raise NotImplementedError

    def should_recreate_pod(self, job: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
        """Whether a pod of ``job`` deleted from under it is recreated by ``delete_pod`` (default: no)."""
        return False

    def pod_for_recreation(self, job: Mapping[str, Any], pod: Mapping[str, Any]) -> dict[str, Any]:
        """The pod to create in place of the deleted ``pod``: a copy without server-set fields."""
        new_pod = meta.deep_copy(pod)
        md = new_pod.setdefault("metadata", {})
        for field in ("resourceVersion", "uid", "creationTimestamp", "deletionTimestamp",
                      "deletionGracePeriodSeconds", "managedFields", "generation"):
            md.pop(field, None)
        new_pod.pop("status", None)
        return new_pod

    # -- enqueueing -----------------------------------------------------------------------------------------------
    def get_backoff(self, key: str) -> float:
        requeues = self.queue.num_requeues(key)
        if requeues == 0:
            return 0.0
        return min(self.backoff_base * 2 ** (requeues - 1), self.backoff_max)

    def enqueue_controller(self, obj: Any, immediate: bool = False) -> None:
        """Queue the key of ``obj`` (or of a tombstone); without ``immediate``, after the key's current backoff."""
        try:
            key = deletion_handling_meta_namespace_key_func(obj)
        except Exception as exc:
            self._log.warning("cannot get key for object", object=repr(obj)[:300], error=str(exc))
            return
        delay = 0.0 if immediate else self.get_backoff(key)
        if delay <= 0:
            self.queue.add(key)
        else:
            self.queue.add_after(key, delay)

    def resolve_controller_ref(self, namespace: str, ref: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """The job the controller reference points to, if it is of our kind, cached, and has the same UID."""
        if ref is None or ref.get("kind") != self.kind:
            return None
        try:
            job = self.job_lister.namespaced(namespace).get(ref.get("name", ""))
        except errors.NotFoundError:
            return None
        if meta.uid(job) != ref.get("uid"):
            return None
        return job

    def job_is_live(self, job: Mapping[str, Any]) -> bool:
        """Ask the API server (not the cache) whether ``job`` still exists, with the same UID, and is not being
        deleted. Used before (re)creating pods: the cache may not have seen the job's deletion yet (Sedna #466)."""
        try:
            live = self.job_client(meta.namespace(job)).get(meta.name(job))
        except errors.NotFoundError:
            return False
        return meta.uid(live) == meta.uid(job) and meta.deletion_timestamp(live) is None

    def enqueue_by_pod(self, pod: Mapping[str, Any], immediate: bool) -> None:
        job = self.resolve_controller_ref(meta.namespace(pod), meta.get_controller_of(pod))
        if job is not None:
            self.enqueue_controller(job, immediate)

    # -- job handlers ---------------------------------------------------------------------------------------------
    def add_job(self, job: Any) -> None:
        self.enqueue_controller(job, immediate=True)

    def update_job(self, old: Any, cur: Any) -> None:
        # Same resourceVersion = a periodic resync, not a change. Like Sedna's controllers we skip it: a job's sync
        # depends only on the job and its pods, whose own events wake it, so a resync would redo the same sync.
        if meta.resource_version(old) == meta.resource_version(cur):
            return
        self.enqueue_controller(cur, immediate=True)

    def delete_job(self, obj: Any) -> None:
        self.enqueue_controller(obj, immediate=True)

    # -- pod handlers ---------------------------------------------------------------------------------------------
    def add_pod(self, pod: Any) -> None:
        # a pod already being deleted (seen after a restart) is only a reason to look at its job again
        immediate = meta.deletion_timestamp(pod) is not None or (pod.get("status") or {}).get("phase") != "Failed"
        self.enqueue_by_pod(pod, immediate)

    def update_pod(self, old: Any, cur: Any) -> None:
        if meta.resource_version(old) == meta.resource_version(cur):
            return
        self.add_pod(cur)

    def delete_pod(self, obj: Any) -> None:
        """Wake the pod's job; recreate the pod if it was deleted from under a live job (see ``maybe_recreate_pod``)."""
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if not isinstance(pod, Mapping) or pod.get("kind", "Pod") != "Pod":
            self._log.warning("delete_pod: not a pod", object=repr(obj)[:200])
            return
        self.enqueue_by_pod(pod, immediate=True)
        self.maybe_recreate_pod(pod)

    def maybe_recreate_pod(self, pod: Mapping[str, Any]) -> bool:
        """Recreate ``pod`` unless: not ours, its job is gone (or another job of the same name) in the cache or on the
        server, the job's pods are being replaced (``prevent_recreation``), the controller says no, or it was recreated
        less than TTL ago."""
        ref = meta.get_controller_of(pod)
        if ref is None or ref.get("kind") != self.kind:
            return False
        ns = meta.namespace(pod)
        job_key = f"{ns}/{ref.get('name')}"
        pod_key = f"{ns}/{meta.name(pod)}"
        if job_key in self.prevent_recreation:
            return False
        job = self.resolve_controller_ref(ns, ref)
        if job is None:
            self._log.info("owner job gone, not recreating pod", key=job_key, pod=pod_key)
            return False
        if not self.should_recreate_pod(job, pod):
            return False
        if not self.job_is_live(job):
            self._log.info("owner job is being deleted, not recreating pod", key=job_key, pod=pod_key)
            return False
        if not self.recreated_pods.try_mark(pod_key):
            self._log.info("pod recreated moments ago, not recreating again", key=job_key, pod=pod_key)
            return False
        try:
            self.clientset.core_v1().pods(ns).create(self.pod_for_recreation(job, pod))
        except errors.AlreadyExistsError:
            return False
        except errors.ApiError as exc:
            self.recreated_pods.unmark(pod_key)
            self._log.warning("pod recreation failed", key=job_key, pod=pod_key, error=str(exc))
            return False
        self._log.info("recreated pod deleted from under its job", key=job_key, pod=pod_key)
        return True

    # -- workers --------------------------------------------------------------------------------------------------
    def worker(self) -> None:
        while self.process_next_work_item():
            pass

    def process_next_work_item(self) -> bool:
        key, shutdown = self.queue.get()
        if shutdown:
            return False
        try:
            if self._stopping.is_set():
                return False  # stop taking work; the next start resyncs from the informers anyway
            self._process(key)
            return True
        finally:
            self.queue.done(key)

    def _process(self, key: str) -> None:
        started = time.monotonic()
        result = "success"
        try:
            with structlog.contextvars.bound_contextvars(controller=self.name, key=key):
                ns, name = split_meta_namespace_key(key)
                if not ns or not name:
                    self._log.warning("invalid key: namespace or name missing", key=key)
                    self.queue.forget(key)
                    return
                forget = self.sync(key)
            if forget:
                self.queue.forget(key)
        except Exception as exc:
            result = self._handle_error(key, exc)
        finally:
            self.metrics.sync_total.labels(controller=self.name, result=result).inc()
            self.metrics.sync_duration.labels(controller=self.name).observe(time.monotonic() - started)

    def _handle_error(self, key: str, exc: Exception) -> str:
        requeues = self.queue.num_requeues(key)
        if requeues < self.max_retries:
            self._log.warning("sync failed, requeueing", key=key, error=str(exc), retries=requeues, exc_info=exc)
            self.queue.add_rate_limited(key)
            return "error"
        self._log.error("sync failed too often, dropping key", key=key, error=str(exc), retries=requeues)
        self.queue.forget(key)
        return "dropped"

    def _run_worker(self) -> None:
        while not self._stopping.is_set() and not self.queue.shutting_down():
            try:
                self.worker()
                return
            except Exception:
                self._log.exception("worker crashed, restarting")
                self.metrics.worker_restarts.labels(controller=self.name).inc()
                if self._stopping.wait(WORKER_RESTART_PERIOD):
                    return

    def run(self, stop: threading.Event) -> None:
        """Wait for the caches, run the workers until ``stop``, then drain (bounded) and return."""
        self._log.info("starting controller", workers=self.workers)
        try:
            # wait_for_cache_sync, not the named variant: a stop during the wait is a normal shutdown, not an error
            self._log.info("waiting for caches to sync")
            if not wait_for_cache_sync(stop, *self.cache_syncs):
                if stop.is_set():
                    self._log.info("stopped before the caches synced")
                else:
                    self._log.error("caches did not sync")
                return
            self._log.info("caches are synced")
            self.synced.set()
            for i in range(self.workers):
                t = threading.Thread(target=self._run_worker, name=f"{self.name}-worker-{i}", daemon=True)
                t.start()
                self._threads.append(t)
            stop.wait()
        finally:
            self.shutdown()

    def shutdown(self, timeout: float | None = None) -> bool:
        """Stop taking work and wait up to ``timeout`` (default ``drain_timeout``) for in-flight syncs.
        Returns True when every worker finished in time."""
        timeout = self.drain_timeout if timeout is None else timeout
        self._stopping.set()
        drainer = threading.Thread(target=self.queue.shut_down_with_drain, name=f"{self.name}-drain", daemon=True)
        drainer.start()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        drained = not any(t.is_alive() for t in self._threads)
        if not drained:
            self._log.warning("drain timed out; abandoning in-flight syncs", timeout=timeout)
        self.queue.shut_down()  # releases the drainer if it is still waiting
        drainer.join(1.0)
        self._log.info("controller stopped")
        return drained
