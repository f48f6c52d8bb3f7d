"""Fixtures for the ElasticDL master's unit tests: a worker manager over a ``FakeClientset`` and a ``FakeClock``,
with pod events delivered by hand (``Harness.deliver``), so nothing runs in the background and no test waits on the
wall clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import wait_for
from testkit.logs import restored_process_logging

from apis.fake import FakeClientset
from examples.elasticdl_master.data import Shard
from examples.elasticdl_master.pods import WorkerPodTemplate, worker_selector
from examples.elasticdl_master.state import WorkerTable, worker_id_of
from examples.elasticdl_master.tasks import TaskDispatcher
from examples.elasticdl_master.workers import WorkerManager
from workqueue.clock import FakeClock

NS = "default"
JOB = "mnist"
MASTER_POD = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "elasticdl-mnist-master", "namespace": NS,
                           "labels": {"elasticdl-job-name": JOB, "elasticdl-replica-type": "master"}},
              "spec": {"containers": [{"name": "master", "image": "img"}]}}


def shards(n: int = 4) -> list[Shard]:
    return [Shard(f"/data/part-{i}.txt", 0, 10) for i in range(n)]


class Harness:
    def __init__(self, threshold: int, **manager_options: Any) -> None:
        self.cs = FakeClientset(MASTER_POD)
        self.clock = FakeClock(1000.0)
        self.table = WorkerTable(self.clock)
        self.dispatcher = TaskDispatcher(shards(), num_epochs=1, max_task_retries=3, job=JOB)
        template = WorkerPodTemplate(job_name=JOB, namespace=NS, image="img", command_line="python worker.py",
                                     master_addr="10.0.0.1:50001")
        self.manager = WorkerManager(self.cs, template, self.table, self.dispatcher, threshold, clock=self.clock,
                                     **manager_options)
        self.manager.owner = self.cs.core_v1().pods(NS).get("elasticdl-mnist-master")
        self.seen: dict[int, dict[str, Any]] = {}

    def started(self) -> Harness:
        """The manager after its start with no worker pod around: its first workers are created (pending)."""
        self.manager.adopt([])
        self.settle()
        return self

    # -- the informer's part ----------------------------------------------------------------------------------------
    def pods(self) -> list[dict[str, Any]]:
        return self.cs.core_v1().pods(NS).list(label_selector=worker_selector(JOB))["items"]

    def deliver(self) -> None:
        """Hand every pod change since the last delivery to the table and the manager, as the listener does."""
        current = {worker_id_of(p): p for p in self.pods()}
        for worker_id, pod in current.items():
            old = self.seen.get(worker_id)
            if old is None or old["metadata"]["resourceVersion"] != pod["metadata"]["resourceVersion"]:
                self.table.observe(pod)
                self.manager.on_worker_event(worker_id)
        for worker_id in set(self.seen) - set(current):
            self.table.mark_deleted(worker_id)
            self.manager.on_worker_event(worker_id)
        self.seen = current

    def settle(self, rounds: int = 20) -> None:
        """Deliver events and sync every queued slot until nothing is left to do right now."""
        for _ in range(rounds):
            self.deliver()
            if len(self.manager.queue) == 0:
                return
            while len(self.manager.queue):
                assert self.manager.process_next()
        raise AssertionError("the manager did not settle")

    def step(self, seconds: float) -> None:
        """Move the clock, wait until the delaying queue has handed over every item that became due, settle.
        (The queue has no public view of its waiting items; its entries map is read, as a snapshot.)"""
        self.clock.step(seconds)
        entries = self.manager.queue._waiting_entries
        wait_for("the delaying queue to hand over what is due",
                 lambda: all(e[0] > self.clock.now() for e in list(entries.values())), timeout=5, interval=0.001)
        self.settle()

    # -- the kubelet's and scheduler's part -------------------------------------------------------------------------
    def set_status(self, worker_id: int, status: dict[str, Any]) -> None:
        pods = self.cs.core_v1().pods(NS)
        pod = pods.get(f"elasticdl-{JOB}-worker-{worker_id}")
        pod["status"] = status
        pods.update_status(pod)

    def run(self, *worker_ids: int) -> None:
        """The workers' pods run, and the manager has seen it."""
        for worker_id in worker_ids:
            self.set_status(worker_id, {"phase": "Running"})
        self.settle()

    def fail(self, worker_id: int, exit_code: int = 1) -> None:
        self.set_status(worker_id, {"phase": "Failed", "containerStatuses": [
            {"name": "c", "state": {"terminated": {"exitCode": exit_code, "reason": "Error"}}}]})

    def unschedulable(self, worker_id: int) -> None:
        self.set_status(worker_id, {"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": "0/3 nodes are available: 3 Insufficient cpu."}]})

    def worker_ids(self) -> list[int]:
        return sorted(worker_id_of(p) for p in self.pods())

    def creates(self) -> list[str]:
        return [a.object["metadata"]["name"] for a in self.cs.actions() if a.matches("create", "pods")]

    def deletes(self) -> list[str]:
        return [a.name for a in self.cs.actions() if a.matches("delete", "pods")]


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """``app.main`` configures logging for the process; every test starts and ends with the defaults."""
    with restored_process_logging():
        yield


@pytest.fixture
def harness() -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(threshold: int = 2, **options: Any) -> Harness:
        h = Harness(threshold, **options)
        made.append(h)
        return h

    yield make
    for h in made:
        h.manager.queue.shut_down()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    (d / "a.txt").write_text("".join(f"{i}\n" for i in range(10)))
    (d / "b.csv").write_text("x,y\n" + "".join(f"{i},{i}\n" for i in range(7)))
    (d / "c.txt").write_text("1\n2\n3\n4\n5")  # no newline at the end
    return d
