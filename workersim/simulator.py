"""``WorkerSimulator``: watches pods (an informer over any clientset) and plays Sedna's SDK inside every Running pod
that carries a Sedna worker label, one thread per worker.

* Reports go to the LC of the pod's node: ``lc_urls[spec.nodeName]``, else ``default_lc``, else the pod's
  ``LC_SERVER`` (in a cluster every LC listens on its node's host network; in the sandbox they share one host).
* Files a worker saves (models, knowledge-base indexes) land on its node's filesystem, ``rootfs[spec.nodeName]``
  (else ``default_rootfs``), when the path lies on a hostPath volume of the pod.
* A job-like worker (train, eval, federated training and aggregation, Reid, VideoAnalytics) ends its pod through
  ``pods/status``: ``Succeeded`` for exit code 0, else ``Failed``; a service runs until its pod goes.
* A worker starts once per pod (uid); it stops when its pod is deleted or ends. A restarted simulator plays pods that
  are still Running again from the start. The pod's hostPath volumes are opened when its worker starts and read and
  written through those handles (``mounts``): a directory the node replaces later is invisible to it, as to a pod.
* With ``sdk`` (``SdkRunner``) the worker is Sedna's real SDK in a child process (``sdkmode``), else a play.
* With ``pod_logs_dir`` each worker's own lines (and the SDK's output) go to ``<dir>/<namespace>/<pod>.log``.
* ``stop()`` ends every worker (their LC requests and SDK processes included) and joins its threads, so that no
  worker logs after it returned.

Guarantees: a bad annotation or a failing worker is logged with the pod key and never affects another pod; status
writes retry on conflict from a fresh read and never overwrite a terminal phase or another pod of the same name.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from apis import meta
from apis.client import ClientsetBase
from apis.errors import ApiError, is_conflict, is_not_found
from apis.logs import get_logger
from apis.resources import PODS
from informers import DeletedFinalStateUnknown, ListWatch, SharedIndexInformer
from informers.keys import ObjOrTombstone

from .lcclient import LCClient
from .mounts import PodMounts
from .nodefiles import NodeFiles
from .plays import TERMINAL_PHASES, Play, WorkerContext, hot_update, play_for
from .podlogs import PodLog, PodLogger
from .podstatus import terminated_status
from .sdk import identity
from .sdkmode import SdkRunner
from .steering import parse_steering
from .workerpod import WorkerPod, job_index_key, worker_pod

__all__ = ["JOB_INDEX", "WorkerSimulator"]

log = get_logger(__name__)

JOB_INDEX = "sedna-job"
_STATUS_ATTEMPTS = 10


def _job_index(pod: Mapping[str, Any]) -> list[str]:
    key = job_index_key(pod)
    return [key] if key else []


@dataclass
class _Worker:
    pod: WorkerPod
    stop: threading.Event = field(default_factory=threading.Event)
    poke: threading.Event = field(default_factory=threading.Event)
    cancelled: bool = False
    threads: list[threading.Thread] = field(default_factory=list)
    mounts: PodMounts | None = None


class WorkerSimulator:
    """See the module doc. ``clientset``: ours or ``FakeClientset``; ``namespace`` "" watches all namespaces."""

    def __init__(
        self,
        clientset: ClientsetBase,
        lc_urls: Mapping[str, str] | None = None,
        default_lc: str | None = None,
        rootfs: Mapping[str, str | os.PathLike[str]] | None = None,
        default_rootfs: str | os.PathLike[str] | None = None,
        namespace: str = "",
        lc_client: LCClient | None = None,
        sdk: SdkRunner | None = None,
        pod_logs_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.clientset = clientset
        self.lc_urls = dict(lc_urls or {})
        self.default_lc = default_lc
        self._files = {node: NodeFiles(path) for node, path in (rootfs or {}).items()}
        self._default_files = NodeFiles(default_rootfs) if default_rootfs is not None else None
        self.namespace = namespace
        self.lc_client = lc_client or LCClient()
        self.sdk = sdk
        self.pod_logs_dir = pod_logs_dir
        self._lock = threading.Lock()
        self._workers: dict[str, _Worker] = {}  # by pod uid
        self._finished: set[str] = set()  # uids whose worker is done (or not simulated): never played again
        self._by_job: dict[str, set[str]] = {}
        self._threads: set[threading.Thread] = set()  # every worker thread not yet joined, whether or not its worker
        # is still registered (a worker that ended may still be ending its pod): stop() joins them all
        self._stop = threading.Event()
        self._informer: SharedIndexInformer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def start(self) -> WorkerSimulator:
        """Start watching pods (returns at once; ``has_synced`` tells when the first list is in)."""
        if self._informer is not None:
            raise RuntimeError("WorkerSimulator already started")
        lw = ListWatch.from_resource(self.clientset.resource(PODS, self.namespace))
        self._informer = SharedIndexInformer(lw, 0, {JOB_INDEX: _job_index}, name="workersim-pods")
        self._informer.add_event_handler(self)
        self._thread = threading.Thread(target=self._informer.run, args=(self._stop,), name="workersim-informer",
                                        daemon=True)
        self._thread.start()
        return self

    def has_synced(self) -> bool:
        return self._informer is not None and self._informer.has_synced()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop every worker (their pods are left as they are) and the informer. Idempotent."""
        self._stop.set()
        with self._lock:
            workers = list(self._workers.values())
        for worker in workers:
            self._cancel(worker)
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("a worker thread did not stop in time", thread=thread.name, timeout=timeout)
        if self._thread is not None:
            self._thread.join(timeout)

    def active_workers(self) -> list[str]:
        """``namespace/name`` of the pods whose worker runs now."""
        with self._lock:
            return sorted(w.pod.key for w in self._workers.values())

    # -- where a worker's node is ---------------------------------------------------------------------------------
    def lc_url_for(self, pod: WorkerPod, pod_lc_server: str) -> str:
        return self.lc_urls.get(pod.node) or self.default_lc or pod_lc_server

    def files_for(self, node: str) -> NodeFiles | None:
        return self._files.get(node, self._default_files)

    # -- event handler (the informer's handler thread: never blocks) -----------------------------------------------
    def on_add(self, obj: Mapping[str, Any], is_in_initial_list: bool = False) -> None:
        self._sync(obj)

    def on_update(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        self._sync(new)

    def on_delete(self, obj: ObjOrTombstone) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        job_key = job_index_key(pod) if isinstance(pod, Mapping) else None
        if job_key is None:
            return
        uid = meta.uid(pod)
        with self._lock:
            worker = self._workers.get(uid)
            self._finished.discard(uid)
            job = self._by_job.get(job_key)
            if job is not None:
                job.discard(uid)
                if not job:
                    del self._by_job[job_key]
        if worker is not None:
            self._cancel(worker)
        self._poke_job(job_key)

    def _sync(self, pod: Mapping[str, Any]) -> None:
        try:
            self._sync_pod(pod)
        except Exception:  # one pod's problem never stops the handler
            log.exception("worker simulator failed on a pod", pod=f"{meta.namespace(pod)}/{meta.name(pod)}")

    def _sync_pod(self, pod: Mapping[str, Any]) -> None:
        job_key = job_index_key(pod)
        if job_key is None:
            return
        self._poke_job(job_key)
        uid = meta.uid(pod)
        phase = (pod.get("status") or {}).get("phase")
        if meta.deletion_timestamp(pod) or phase in TERMINAL_PHASES:
            with self._lock:
                worker = self._workers.get(uid)
            if worker is not None:
                self._cancel(worker)
            return
        if phase != "Running":
            return
        with self._lock:
            if uid in self._workers or uid in self._finished:
                return
        wp = worker_pod(pod)
        if wp is None:
            return
        steering = parse_steering(wp.annotations, lambda annotation, value, action: log.warning(
            "bad worker annotation", pod=wp.key, annotation=annotation, value=value, action=action))
        if not steering.simulated:
            log.info("pod not simulated, as annotated", pod=wp.key)
            with self._lock:
                self._finished.add(uid)
            return
        worker = _Worker(wp)
        ident = identity(wp, steering.sdk_quirks)
        lc_url = self.lc_url_for(wp, ident.lc_server)
        wlog = PodLogger(log.bind(pod=wp.key, kind=wp.kind, worker_type=wp.worker_type, node=wp.node),
                         PodLog(self.pod_logs_dir, wp.namespace, wp.name, log.bind(pod=wp.key).warning))
        worker.mounts = PodMounts(wp, self.files_for(wp.node))
        for problem in worker.mounts.problems:
            wlog.warning("cannot mount a hostPath volume; the worker sees nothing there", volume=problem)
        ctx = WorkerContext(
            pod=wp, steering=steering, ident=ident, stop=worker.stop, mounts=worker.mounts, log=wlog,
            report=lambda body: self._report(wlog, lc_url, ident.worker_name, body, worker.stop, wp.key),
            job_pods=lambda: self._job_pods(wp.job_key), poke=worker.poke,
        )
        sdk = self.sdk
        play = (lambda c: sdk.run(c, lc_url, self.files_for(wp.node))) if sdk is not None else play_for(wp)
        worker.threads.append(threading.Thread(target=self._run, args=(worker, ctx, play), daemon=True,
                                               name=f"workersim-{wp.name}"))
        if sdk is None and wp.getenv("MODEL_HOT_UPDATE", "False").lower() == "true":
            worker.threads.append(threading.Thread(target=self._guarded, args=(hot_update, ctx), daemon=True,
                                                   name=f"workersim-hot-update-{wp.name}"))
        with self._lock:
            if uid in self._workers or uid in self._finished or self._stop.is_set():
                worker.mounts.close()
                return
            self._workers[uid] = worker
            self._by_job.setdefault(wp.job_key, set()).add(uid)
            wlog.info("worker started", lc=lc_url, worker=ident.worker_name)
            for thread in worker.threads:  # under the lock: stop() never sees a worker whose threads did not start
                self._threads.add(thread)
                thread.start()

    # -- workers --------------------------------------------------------------------------------------------------
    def _run(self, worker: _Worker, ctx: WorkerContext, play: Play) -> None:
        code = self._guarded(play, ctx)
        with self._lock:
            cancelled = worker.cancelled
            worker.stop.set()  # ends the hot-update loop with the container
            self._workers.pop(worker.pod.uid, None)
            if code is not None:
                self._finished.add(worker.pod.uid)
        self.lc_client.abort(worker.stop)
        for thread in worker.threads:
            if thread is not threading.current_thread():
                thread.join()
        if worker.mounts is not None:
            worker.mounts.close()
        if code is not None and not cancelled:
            ctx.log.info("worker exited", exit_code=code)
            self._end_pod(worker.pod, code)
        with self._lock:
            self._threads.difference_update(worker.threads)

    def worker_threads(self) -> list[threading.Thread]:
        """The worker threads still running (none once ``stop()`` returned)."""
        with self._lock:
            return [t for t in self._threads if t.is_alive()]

    @staticmethod
    def _guarded(play: Play, ctx: WorkerContext) -> int | None:
        try:
            return play(ctx)
        except Exception:
            ctx.log.exception("simulated worker crashed (a simulator bug); its pod is left as it is")
            return None

    def _cancel(self, worker: _Worker) -> None:
        with self._lock:
            worker.cancelled = True
        worker.stop.set()
        worker.poke.set()
        self.lc_client.abort(worker.stop)

    def _poke_job(self, job_key: str) -> None:
        with self._lock:
            workers = [self._workers[uid] for uid in self._by_job.get(job_key, ()) if uid in self._workers]
        for worker in workers:
            worker.poke.set()

    def _job_pods(self, job_key: str) -> list[Mapping[str, Any]]:
        informer = self._informer
        return list(informer.get_indexer().by_index(JOB_INDEX, job_key)) if informer is not None else []

    def _report(self, wlog: PodLogger, lc_url: str, worker_name: str, body: dict[str, Any], stop: threading.Event,
                pod_key: str) -> bool:
        ok = self.lc_client.send(lc_url, worker_name, body, stop, pod_key)
        if ok or not stop.is_set():  # a worker being stopped is killed with its pod: nothing to tell
            wlog.info("worker report sent" if ok else "worker report lost", lc=lc_url, stage=body.get("kind"),
                      status=body.get("status"))
        return ok

    def _end_pod(self, wp: WorkerPod, exit_code: int) -> None:
        """Write the terminated status (retried on conflict and transient errors, never over a terminal phase)."""
        pods = self.clientset.core_v1().pods(wp.namespace)
        delay = 0.1
        for _ in range(_STATUS_ATTEMPTS):
            try:
                pod = pods.get(wp.name)
                status = pod.get("status") or {}
                if meta.uid(pod) != wp.uid or meta.deletion_timestamp(pod) or status.get("phase") in TERMINAL_PHASES:
                    return
                pods.update_status({**pod, "status": terminated_status(pod, exit_code)})
                return
            except ApiError as err:
                if is_not_found(err):
                    return
                if is_conflict(err):
                    continue
                error = str(err)
            except OSError as err:
                error = str(err)
            log.warning("cannot end the worker's pod; retrying", pod=wp.key, error=error)
            if self._stop.wait(delay):
                return
            delay = min(delay * 2, 5.0)
        log.error("gave up ending the worker's pod", pod=wp.key, exit_code=exit_code)
