"""The ElasticDL master: task dispatcher + worker table + event listener + worker manager + worker API, wired.

``Master(config, clientset).run(stop)``:

1. serves the worker API (so ``MASTER_ADDR`` of the workers names its real port);
2. looks up its own pod ``elasticdl-<job>-master`` to own the worker pods (none when run outside the cluster);
3. starts the worker pod informer, waits for its cache, adopts the worker pods already there;
4. keeps ``--num_workers`` workers (or what the API set) until every unit of every epoch is done or abandoned, or
   every worker slot was given up, logging progress every ``--status_interval`` seconds when it changed;
5. launches no more workers and gives the live ones ``--worker_exit_grace`` seconds to hear "finished" and exit;
6. deletes the workers left and waits (at most ``--cleanup_timeout`` seconds) until their pods are gone.

Exit code: 0 when the data is consumed (every unit of every epoch done exactly once), 1 when units were abandoned,
every worker failed, or ``stop`` was set first (then the workers are left to their owner, the master pod).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import structlog

from apis import errors
from apis.client import ClientsetBase
from informers import wait_for_cache_sync
from workqueue.clock import Clock

from .api import WorkerAPI
from .args import Config
from .data import cut_shards
from .listener import EventListener, worker_informer_factory
from .pods import WorkerPodTemplate, elasticdl_worker_command, master_pod_name, parse_envs, parse_resources
from .state import WorkerTable
from .tasks import TaskDispatcher
from .workers import WorkerManager

__all__ = ["Master"]

log = structlog.get_logger("elasticdl_master")


def worker_template(config: Config) -> WorkerPodTemplate:
    return WorkerPodTemplate(
        job_name=config.job_name,
        namespace=config.namespace,
        image=config.worker_image,
        command_line=config.job_command or elasticdl_worker_command(config.worker_flags),
        env=parse_envs(config.envs),
        requests=parse_resources(config.worker_resource_request),
        limits=parse_resources(config.worker_resource_limit),
        volume=config.volume,
        priority=config.worker_pod_priority,
        image_pull_policy=config.image_pull_policy,
        restart_policy=config.restart_policy,
    )


class Master:
    def __init__(self, config: Config, clientset: ClientsetBase, *, clock: Clock | None = None) -> None:
        """Cuts the training data at once: ``data.DataError`` when it cannot be used."""
        self.config = config
        self.clientset = clientset
        self._log = log.bind(job=config.job_name)
        self._wake = threading.Event()
        shards = cut_shards(config.training_data, config.records_per_task)
        self.dispatcher = TaskDispatcher(shards, config.num_epochs, config.max_task_retries, job=config.job_name,
                                         on_change=self._wake.set)
        self.table = WorkerTable(clock)
        self.factory = worker_informer_factory(clientset, config.namespace, config.job_name)
        self.manager = WorkerManager(
            clientset, worker_template(config), self.table, self.dispatcher, config.num_workers,
            progress_timeout=config.worker_progress_timeout, relaunch_limit=config.relaunch_on_worker_failure,
            base_delay=config.relaunch_backoff_base, max_delay=config.relaunch_backoff_max, clock=clock,
        )
        self.listener = EventListener(self.factory, self.table, self._on_worker_event)
        self.api = WorkerAPI(config.host, config.port, self.dispatcher, self.manager, self.status,
                             max_workers=config.max_workers)

    def _on_worker_event(self, worker_id: int) -> None:
        self.manager.on_worker_event(worker_id)
        self._wake.set()

    def status(self) -> dict[str, Any]:
        return {
            "job": self.config.job_name,
            "num_workers": self.manager.threshold,
            "tasks": self.dispatcher.status(),
            "worker_counts": self.table.counts(),
            "slots": self.manager.slots(),
            "workers": self.table.snapshot(),
        }

    def run(self, stop: threading.Event) -> int:
        self.api.start()  # OSError when the port is taken
        advertised = os.environ.get("MY_POD_IP") or ("localhost" if self.config.host in ("", "0.0.0.0") else self.config.host)
        self.manager.template.master_addr = f"{advertised}:{self.api.port}"
        self._log.info("serving the worker API", url=self.api.url, master_addr=self.manager.template.master_addr,
                       units_per_epoch=self.dispatcher.units_per_epoch, num_epochs=self.config.num_epochs,
                       num_workers=self.config.num_workers)
        self.manager.owner = self._master_pod()
        inner = threading.Event()  # informers and the manager outlive ``stop`` only to clean up
        threading.Thread(target=self._wake_on_stop, args=(stop, inner), name="elasticdl-stop", daemon=True).start()
        self.factory.start(inner)
        manager_thread = threading.Thread(target=self.manager.run, args=(inner,), name="elasticdl-manager", daemon=True)
        try:
            if not wait_for_cache_sync(stop, self.listener.informer.has_synced):
                self._log.warning("stopped before the worker pod cache synced")
                return 1
            self.manager.adopt(self.listener.lister.list())
            manager_thread.start()
            code = self._until_done(stop)
            if code is not None:
                return code
            self.manager.drain()
            self._wait_for_exits(stop)
            self.manager.finish()
            self._cleanup()
            return 0 if self.dispatcher.succeeded() else 1
        finally:
            inner.set()
            if manager_thread.is_alive():
                manager_thread.join(10)
            self.api.stop()
            self.factory.shutdown(timeout=10)

    def _wake_on_stop(self, stop: threading.Event, inner: threading.Event) -> None:
        while not stop.wait(1.0):
            if inner.is_set():
                return
        self._wake.set()

    def _master_pod(self) -> dict[str, Any] | None:
        name = master_pod_name(self.config.job_name)
        try:
            return self.clientset.core_v1().pods(self.config.namespace).get(name)
        except errors.ApiError as exc:
            self._log.warning("master pod not found: worker pods get no owner reference", pod=name, error=exc.message)
            return None

    def _until_done(self, stop: threading.Event) -> int | None:
        """Wait until the data is consumed (None) or the job cannot go on (an exit code)."""
        last_report, reported = 0.0, None
        while True:
            self._wake.clear()
            progress = self._progress()
            now = time.monotonic()
            if progress != reported and now - last_report >= self.config.status_interval:
                self._log.info("progress", **progress)
                last_report, reported = now, progress
            if self.dispatcher.finished():
                self._log.info("the job's data is consumed", succeeded=self.dispatcher.succeeded(), **progress)
                return None
            if self.manager.all_given_up():
                self._log.error("all workers failed: giving up", **progress)
                self.manager.finish()
                self._cleanup()
                return 1
            if stop.is_set():
                self._log.warning("stopped before the job's data was consumed", **progress)
                return 1
            self._wake.wait(self.config.status_interval)

    def _progress(self) -> dict[str, Any]:
        tasks = self.dispatcher.status()
        keys = ("tasks_done", "tasks_total", "tasks_waiting", "tasks_in_progress", "tasks_abandoned", "epochs_started")
        return {**{k: tasks[k] for k in keys}, "num_workers": self.manager.threshold, "workers": self.table.counts()}

    def _wait_for_exits(self, stop: threading.Event) -> None:
        deadline = time.monotonic() + self.config.worker_exit_grace
        while (live := self.manager.live_workers()) and (left := deadline - time.monotonic()) > 0 and not stop.is_set():
            self._wake.clear()
            self._wake.wait(min(left, 1.0))
        if live:
            self._log.info("workers still running after the exit grace period; deleting them", live=live,
                           grace=self.config.worker_exit_grace)

    def _cleanup(self) -> None:
        deadline = time.monotonic() + self.config.cleanup_timeout
        while True:
            self._wake.clear()
            remaining = self.manager.sweep(self.listener.lister.list())
            if remaining == 0:
                self._log.info("every worker pod is gone")
                return
            left = deadline - time.monotonic()
            if left <= 0:
                self._log.warning("worker pods still there after the cleanup timeout", remaining=remaining,
                                  timeout=self.config.cleanup_timeout)
                return
            self._wake.wait(min(left, 1.0))
