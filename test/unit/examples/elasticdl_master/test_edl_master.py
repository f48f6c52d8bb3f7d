"""The whole master in-process over a FakeClientset with the pod simulator: workers played over its HTTP API."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from testkit import wait_for

from apis.fake import FakeClientset
from examples.elasticdl_master.args import parse_args
from examples.elasticdl_master.client import MasterClient, SimulatedWorkers, end_pod, running_worker_ids
from examples.elasticdl_master.master import Master
from sandbox.simulator import PodSimulator


@pytest.fixture
def cluster():
    cs = FakeClientset()
    sim = PodSimulator(cs.tracker, tick=0.01).start()
    yield cs
    sim.stop()


def start(cs, data_dir, *flags):
    config = parse_args(["--job_name", "mnist", "--training_data", str(data_dir), "--worker_image", "img",
                         "--records_per_task", "4", "--port", "0", "--host", "127.0.0.1", "--status_interval", "0.1",
                         "--relaunch_backoff_base", "0.05", *flags])
    master = Master(config, cs)
    stop = threading.Event()
    result: dict[str, int] = {}
    thread = threading.Thread(target=lambda: result.setdefault("code", master.run(stop)), daemon=True)
    thread.start()
    wait_for("the worker API", lambda: master.api._httpd is not None)
    return master, stop, thread, result


def test_the_data_is_consumed_exactly_once_and_the_workers_are_gone(cluster, data_dir):
    cs = cluster
    master, stop, thread, result = start(cs, data_dir, "--num_epochs", "2", "--num_workers", "3")
    client = MasterClient(master.api.url)
    workers = SimulatedWorkers(client, lambda: running_worker_ids(cs, "default", "mnist"),
                               exit_worker=lambda w: end_pod(cs, "default", f"elasticdl-mnist-worker-{w}", 0))
    assert workers.run(timeout=30)
    thread.join(30)
    assert result == {"code": 0}
    assert Counter((t["epoch"], t["file"], t["start"]) for t in workers.completed) == {
        (e, str(data_dir / f), s): 1 for e in (0, 1) for f, starts in (("a.txt", (0, 4, 8)), ("b.csv", (0, 4)),
                                                                      ("c.txt", (0, 4))) for s in starts}
    assert cs.core_v1().pods("default").list()["items"] == []


def test_all_workers_failing_ends_the_master_with_1(cluster, data_dir):
    cs = cluster
    master, stop, thread, result = start(cs, data_dir, "--num_workers", "2", "--relaunch_on_worker_failure", "0")
    wait_for("two running workers", lambda: len(running_worker_ids(cs, "default", "mnist")) == 2)
    for worker_id in running_worker_ids(cs, "default", "mnist"):
        end_pod(cs, "default", f"elasticdl-mnist-worker-{worker_id}", 1)
    thread.join(30)
    assert result == {"code": 1}
    assert cs.core_v1().pods("default").list()["items"] == []


def test_stop_ends_the_master_with_1_and_leaves_the_workers_to_their_owner(cluster, data_dir):
    cs = cluster
    master, stop, thread, result = start(cs, data_dir, "--num_workers", "1")
    wait_for("a running worker", lambda: running_worker_ids(cs, "default", "mnist") == [0])
    stop.set()
    thread.join(30)
    assert result == {"code": 1}
    assert [p["metadata"]["name"] for p in cs.core_v1().pods("default").list()["items"]] == ["elasticdl-mnist-worker-0"]
