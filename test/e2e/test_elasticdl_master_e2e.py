"""End to end: the ElasticDL master as a real process against the sandbox API server process.

Worker pods are run by the sandbox's pod simulator; the test plays the processes inside them over the master's HTTP
API (``SimulatedWorkers``) and the kubelet when one of them exits (``end_pod``).

* the master alone: workers crash and are deleted by hand on the way, the worker count changes at run time, and in
  the end every unit of every epoch is done exactly once, the worker pods are gone and the master exits 0;
* behind the ElasticAIJob operator: ``sedna-gm`` builds the master pod, the master runs with that pod's own flags,
  its workers count into the job's ``replicaStatuses``, and the job succeeds when the master exits 0.
"""

from __future__ import annotations

import shlex
import signal
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from testkit import Processes, http_get, json_log_lines, log_event, start_gm, wait_for

from apis.clientset import Clientset
from examples.elasticdl_master.client import (
    MasterClient,
    MasterError,
    SimulatedWorkers,
    end_pod,
    running_worker_ids,
)

pytestmark = pytest.mark.e2e

NS = "ml"
UNITS = {("a.txt", 0), ("a.txt", 4), ("a.txt", 8), ("b.csv", 0), ("b.csv", 4), ("c.txt", 0), ("c.txt", 4)}


def write_data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.txt").write_text("".join(f"record {i}\n" for i in range(10)))  # units [0,4) [4,8) [8,10)
    (data / "b.csv").write_text("x,y\n" + "".join(f"{i},{i * i}\n" for i in range(7)))  # [0,4) [4,7)
    (data / "c.txt").write_text("".join(f"{i}\n" for i in range(5)))  # [0,4) [4,5)
    return data


def start_master(procs: Processes, kubeconfig: str, *flags: str) -> tuple[subprocess.Popen[bytes], MasterClient]:
    proc = procs.start("master", ["-m", "examples.elasticdl_master", *flags, "--kubeconfig", kubeconfig,
                                  "--port", "0", "--host", "127.0.0.1", "--log_format", "json",
                                  "--relaunch_backoff_base", "0.2", "--status_interval", "0.5"])
    serving = wait_for("the master's worker API",
                       lambda: log_event(procs.log("master"), "serving the worker API") or proc.poll() is not None,
                       timeout=30)
    assert proc.poll() is None, procs.log("master")
    return proc, MasterClient(serving["url"])


def pods(cs: Clientset, ns: str) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in cs.core_v1().pods(ns).list()["items"]}


def test_master_keeps_workers_takes_tasks_back_and_consumes_every_unit_exactly_once(procs, cluster, tmp_path):
    kubeconfig, cs = cluster
    cs.core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    master_pod = cs.core_v1().pods(NS).create({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "elasticdl-mnist-master", "namespace": NS,
                     "labels": {"app": "elasticdl", "elasticdl-job-name": "mnist", "elasticdl-replica-type": "master"}},
        "spec": {"containers": [{"name": "master", "image": "elasticdl:ci"}]}})
    data = write_data(tmp_path)
    proc, client = start_master(
        procs, kubeconfig, "--job_name", "mnist", "--namespace", NS, "--training_data", str(data),
        "--records_per_task", "4", "--num_epochs", "2", "--num_workers", "3", "--worker_image", "elasticdl:ci",
        "--model_zoo", "/model_zoo", "--model_def", "mnist.custom_model", "--num_ps_pods", "1")
    running = lambda: running_worker_ids(cs, NS, "mnist")  # noqa: E731
    wait_for("three running workers", running, check=lambda ids: ids == [0, 1, 2], timeout=30)
    worker = pods(cs, NS)["elasticdl-mnist-worker-1"]
    assert worker["metadata"]["ownerReferences"][0]["uid"] == master_pod["metadata"]["uid"]
    assert {e["name"]: e.get("value") for e in worker["spec"]["containers"][0]["env"]}["WORKER_ID"] == "1"

    workers = SimulatedWorkers(client, running, exit_worker=lambda w: end_pod(cs, NS, f"elasticdl-mnist-worker-{w}", 0))
    workers.step()
    assert len(workers.completed) == 3

    # worker 0 crashes holding a task: the task goes back, the worker is replaced, its late report is refused
    held = client.get_task(0)["task"]
    end_pod(cs, NS, "elasticdl-mnist-worker-0", 1)
    wait_for("worker 0 replaced", running, check=lambda ids: 0 not in ids and len(ids) == 3, timeout=30)
    with pytest.raises(MasterError) as refused:
        client.report(0, held["task_id"])
    assert refused.value.status == 400 and "not a live worker" in refused.value.reason

    # someone deletes worker 1 (kubectl delete pod): replaced too
    cs.core_v1().pods(NS).delete("elasticdl-mnist-worker-1")
    wait_for("worker 1 replaced", running, check=lambda ids: 1 not in ids and len(ids) == 3, timeout=30)

    # the worker count changes at run time
    assert client.set_num_workers(2)["previous"] == 3
    wait_for("two workers", running, check=lambda ids: len(ids) == 2, timeout=30)

    assert workers.run(timeout=60)
    assert proc.wait(60) == 0, procs.log("master")
    done = Counter((t["epoch"], Path(t["file"]).name, t["start"]) for t in workers.completed)
    assert done == {(epoch, name, start): 1 for epoch in (0, 1) for name, start in UNITS}
    assert list(pods(cs, NS)) == ["elasticdl-mnist-master"]  # every worker pod is gone

    entries = json_log_lines(procs.log("master"))
    assert all(e.get("job") == "mnist" for e in entries), [e for e in entries if e.get("job") != "mnist"][:3]
    consumed = next(e for e in entries if e["event"] == "the job's data is consumed")
    assert consumed["succeeded"] is True and consumed["tasks_done"] == consumed["tasks_total"] == 14
    ignored = next(e for e in entries if e["event"] == "ignoring flags this master does not use")
    assert ignored["flags"] == ["--model_zoo", "--model_def", "--num_ps_pods"]
    assert any(e["event"] == "relaunching worker after backoff" and e["worker"] == "elasticdl-mnist-worker-0" for e in entries)
    assert all("worker" in e for e in entries if e["event"] in ("created worker pod", "deleted worker pod"))


def test_master_started_with_the_flags_of_the_operators_master_pod_runs_the_job_to_success(procs, cluster, tmp_path):
    kubeconfig, cs = cluster
    data = write_data(tmp_path)
    gm, url = start_gm(procs, "gm", kubeconfig, "--no-leader-elect")
    wait_for("sedna-gm ready", lambda: http_get(url + "/readyz")[0] == 200, timeout=30)
    jobs = cs.elasticdl_v1alpha1().elastic_ai_jobs("default")
    jobs.create({
        "apiVersion": "elasticdl.org/v1alpha1", "kind": "ElasticAIJob",
        "metadata": {"name": "mnist", "namespace": "default"},
        "spec": {"jobArgs": ["--model_zoo /model_zoo", f"--training_data {data}", "--records_per_task 4",
                             "--num_epochs 2"],
                 "master": {"image": "elasticdl:ci", "resource_request": "cpu=1,memory=1024Mi"},
                 "worker": {"count": 2, "resource_request": "cpu=1,memory=1024Mi"}}})
    master_pod = wait_for("the master pod", lambda: pods(cs, "default").get("elasticdl-mnist-master"), timeout=30)
    command = shlex.split(master_pod["spec"]["containers"][0]["args"][1])
    flags = command[command.index("elasticdl.python.master.main") + 1:]
    proc, client = start_master(procs, kubeconfig, *flags)  # the pod's own flags, unchanged

    def status() -> dict:
        return jobs.get("mnist").get("status") or {}

    wait_for("the job to count two active workers", lambda: status().get("replicaStatuses", {}).get("worker"),
             check=lambda w: w == {"active": 2, "succeeded": 0, "failed": 0}, timeout=30)
    running = lambda: running_worker_ids(cs, "default", "mnist")  # noqa: E731
    workers = SimulatedWorkers(client, running, exit_worker=lambda w: end_pod(cs, "default", f"elasticdl-mnist-worker-{w}", 0))
    assert workers.run(timeout=60)
    assert proc.wait(60) == 0, procs.log("master")
    assert Counter((t["epoch"], Path(t["file"]).name, t["start"]) for t in workers.completed) == {
        (epoch, name, start): 1 for epoch in (0, 1) for name, start in UNITS}
    end_pod(cs, "default", "elasticdl-mnist-master", 0)  # the kubelet sees the master process exit 0
    wait_for("the job to succeed", lambda: status().get("phase"), check=lambda p: p == "Succeeded", timeout=30)
    assert [n for n in pods(cs, "default") if "-worker-" in n] == []


def test_sigterm_stops_the_master_with_1_and_leaves_the_workers_to_the_master_pod(procs, cluster, tmp_path):
    kubeconfig, cs = cluster
    proc, client = start_master(procs, kubeconfig, "--job_name", "mnist", "--training_data", str(write_data(tmp_path)),
                                "--num_workers", "1", "--worker_image", "elasticdl:ci")
    wait_for("a running worker", lambda: running_worker_ids(cs, "default", "mnist"), check=lambda ids: ids == [0],
             timeout=30)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 1, procs.log("master")
    assert log_event(procs.log("master"), "stopped before the job's data was consumed") is not None
    assert "elasticdl-mnist-worker-0" in pods(cs, "default")
