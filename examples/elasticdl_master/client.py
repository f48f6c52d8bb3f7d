"""The worker's side of the master's API, and simulated workers that use it (for tests and ``hack/local_up``).

``MasterClient(url)`` wraps each endpoint of ``api.WorkerAPI``; an answer other than 200 raises ``MasterError``
with the status and the master's reason. ``SimulatedWorkers`` plays the workers whose pods run (the sandbox's pod
simulator runs them but nothing inside reads data): every round, each running worker asks for a task and reports it
done, until the master answers ``finished``; ``end_pod`` plays the kubelet when a worker exits.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import orjson

from apis import meta
from apis.client import ClientsetBase

from .pods import worker_selector
from .state import worker_id_of

__all__ = ["MasterClient", "MasterError", "SimulatedWorkers", "end_pod", "running_worker_ids"]


class MasterError(Exception):
    def __init__(self, status: int, reason: str) -> None:
        self.status = status
        self.reason = reason
        super().__init__(f"{status}: {reason}")


class MasterClient:
    def __init__(self, url: str, timeout: float = 5.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout

    def call(self, method: str, path: str, body: object = None, raw: bytes | None = None) -> dict[str, Any]:
        data = raw if raw is not None else (None if body is None else orjson.dumps(body))
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"} if data is not None else {})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                answer: dict[str, Any] = orjson.loads(resp.read())  # the API server answers JSON objects
                return answer
        except urllib.error.HTTPError as exc:
            text = exc.read()
            try:
                reason = orjson.loads(text).get("error", "")
            except (orjson.JSONDecodeError, AttributeError):
                reason = text.decode(errors="replace")
            raise MasterError(exc.code, reason) from None

    def get_task(self, worker_id: int) -> dict[str, Any]:
        return self.call("POST", "/api/v1/tasks/get", {"worker_id": worker_id})

    def report(self, worker_id: int, task_id: int, success: bool = True, err_message: str = "") -> dict[str, Any]:
        body: dict[str, Any] = {"worker_id": worker_id, "task_id": task_id, "success": success}
        if err_message:
            body["err_message"] = err_message
        return self.call("POST", "/api/v1/tasks/report", body)

    def progress(self, worker_id: int, task_id: int | None = None, records: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"worker_id": worker_id}
        body.update({k: v for k, v in (("task_id", task_id), ("records", records)) if v is not None})
        return self.call("POST", "/api/v1/progress", body)

    def set_num_workers(self, num_workers: int) -> dict[str, Any]:
        return self.call("PUT", "/api/v1/num_workers", {"num_workers": num_workers})

    def status(self) -> dict[str, Any]:
        return self.call("GET", "/api/v1/status")


def running_worker_ids(clientset: ClientsetBase, namespace: str, job_name: str) -> list[int]:
    """The ids of the job's worker pods that run and are not being deleted, in id order."""
    pods = clientset.core_v1().pods(namespace).list(label_selector=worker_selector(job_name))["items"]
    ids = [worker_id_of(p) for p in pods
           if (p.get("status") or {}).get("phase") == "Running" and meta.deletion_timestamp(p) is None]
    return sorted(i for i in ids if i is not None)


def end_pod(clientset: ClientsetBase, namespace: str, name: str, exit_code: int) -> None:
    """Play the kubelet when a pod's only container exits: ``Succeeded`` for exit code 0, else ``Failed``."""
    pods = clientset.core_v1().pods(namespace)
    pod = pods.get(name)
    terminated = {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error"}
    containers = (pod.get("spec") or {}).get("containers") or [{"name": name}]
    pod["status"] = {**(pod.get("status") or {}), "phase": "Succeeded" if exit_code == 0 else "Failed",
                     "containerStatuses": [{"name": c["name"], "ready": False, "restartCount": 0,
                                            "state": {"terminated": terminated}} for c in containers]}
    pods.update_status(pod)


class SimulatedWorkers:
    """Workers played over the API: ``step()`` is one round in which each running worker takes a task and reports
    it done; a worker told ``finished`` exits through ``exit_worker(worker_id)`` (e.g. ``end_pod(..., 0)``).
    ``completed`` lists every task the master accepted as done."""

    def __init__(self, client: MasterClient, worker_ids: Callable[[], list[int]],
                 exit_worker: Callable[[int], None] | None = None) -> None:
        self.client = client
        self.worker_ids = worker_ids
        self.exit_worker = exit_worker
        self.completed: list[dict[str, Any]] = []
        self.refused: list[MasterError] = []  # calls of workers the master no longer counts as live
        self.told_finished: set[int] = set()

    def step(self) -> str:
        """One round: ``working`` when some worker got a task, ``waiting`` when none did, ``finished`` once a worker
        was told so and no running worker is left (or nobody exits them)."""
        got_one = False
        running = self.worker_ids()
        for worker_id in running:
            try:
                answer = self.client.get_task(worker_id)
                if answer["status"] == "finished":
                    self.told_finished.add(worker_id)
                    if self.exit_worker is not None:
                        self.exit_worker(worker_id)
                elif answer["status"] == "task":
                    task = answer["task"]
                    self.client.report(worker_id, task["task_id"], success=True)
                    self.completed.append(task)
                    got_one = True
            except MasterError as exc:
                if exc.status != 400:
                    raise
                self.refused.append(exc)  # retired between the listing and the call: its pod is going
        if self.told_finished and (self.exit_worker is None or not set(running) - self.told_finished):
            return "finished"
        return "working" if got_one else "waiting"

    def run(self, timeout: float, interval: float = 0.05, on_round: Callable[[], None] | None = None) -> bool:
        """Play rounds until ``finished`` (True) or ``timeout`` seconds pass (False)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.step()
            if on_round is not None:
                on_round()
            if state == "finished":
                return True
            if state == "waiting":
                time.sleep(interval)
        return False
