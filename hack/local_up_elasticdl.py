"""``python -m hack.local_up --elasticdl``: an ElasticAIJob trained to the end by the ElasticDL master example.

1. starts the sandbox API server and ``sedna-gm`` (as ``hack.local_up`` does);
2. writes a small training set (three text/CSV files) and creates an ElasticAIJob that trains on it for two epochs
   with three workers; ``sedna-gm`` creates the master pod (simulated: nothing runs inside it);
3. runs ``python -m examples.elasticdl_master`` locally with the flags of that pod's command line, unchanged (plus
   where the cluster and the worker API are), as the master pod would run it;
4. plays the worker processes over the master's HTTP API, printing progress; once a third of the work is done,
   worker 0 crashes holding a task (the master takes the task back and relaunches the worker after backoff);
5. when the master says "finished", the workers exit, the master deletes their pods and exits 0; the master pod is
   then marked Succeeded, as the kubelet would, and the job succeeds.

Exit 0 when the data is consumed (every unit of every epoch exactly once) and the job succeeded, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ._procs import pause
from .local_up import CRDS, Process, edge_auth, say, wait_ready
from .local_up_eaijob import describe

JOB = "mnist-elastic"
NS = "default"


def write_training_data(data: Path) -> None:
    data.mkdir(parents=True, exist_ok=True)
    (data / "part-0.txt").write_text("".join(f"image-{i} label-{i % 10}\n" for i in range(40)))
    (data / "part-1.csv").write_text("image,label\n" + "".join(f"img{i},{i % 10}\n" for i in range(25)))
    (data / "part-2.txt").write_text("".join(f"image-{i}\n" for i in range(17)))


def new_job(data: Path) -> dict[str, Any]:
    return {
        "apiVersion": "elasticdl.org/v1alpha1", "kind": "ElasticAIJob",
        "metadata": {"name": JOB, "namespace": NS},
        "spec": {
            "jobArgs": ["--model_zoo /model_zoo", "--model_def mnist.mnist_functional_api.custom_model",
                        f"--training_data {data}", "--num_epochs 2", "--minibatch_size 4",
                        "--num_minibatches_per_task 2"],
            "master": {"image": "elasticdl/elasticdl:mnist", "resource_request": "cpu=1,memory=1024Mi"},
            "worker": {"count": 3, "image": "elasticdl/elasticdl:mnist", "resource_request": "cpu=1,memory=1024Mi"},
        },
    }


def wait_for_event(proc: Process, event: str, timeout: float) -> dict[str, Any] | None:
    """The first JSON log line of ``proc`` with that ``event``; None when it exits or ``timeout`` passes first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.proc.poll() is None:
        for line in proc.log_path.read_text(errors="replace").splitlines():
            if f'"{event}"' in line:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("event") == event:
                    return entry
        pause(0.1)
    return None


def progress_line(status: dict[str, Any]) -> str:
    tasks = status["tasks"]
    workers = " ".join(f"{k}={v}" for k, v in status["worker_counts"].items() if v)
    return (f"tasks {tasks['tasks_done']}/{tasks['tasks_total']} done, {tasks['tasks_in_progress']} in progress, "
            f"epochs started {tasks['epochs_started']}/{tasks['num_epochs']}; workers {workers or '-'}")


def run(args: argparse.Namespace, workdir: Path) -> int:
    from apis.clientset import Clientset
    from examples.elasticdl_master.client import MasterClient, SimulatedWorkers, end_pod, running_worker_ids

    kubeconfig = workdir / "kubeconfig"
    say(f"==> starting the sandbox API server (logs: {workdir / 'apiserver.log'})")
    api = Process("sandbox", [sys.executable, "-m", "sandbox", "--port", "0", "--crds", str(CRDS),
                              "--kubeconfig-out", str(kubeconfig)], workdir / "apiserver.log")
    children = [api]
    try:
        if api.wait_for_line("listening on ", 30) is None:
            say("the sandbox API server did not start")
            return 1
        say(f"==> starting sedna-gm (logs: {workdir / 'sedna-gm.log'})")
        # no LC here: with --edge-auth on (the default) no node holds a token, and the edge link listens on loopback
        auth = edge_auth(args.edge_auth, workdir, ())
        gm = Process("sedna-gm", [sys.executable, "-m", "globalmanager.app", "--kubeconfig", str(kubeconfig),
                                  "--no-leader-elect", "--metrics-address", "127.0.0.1:0", "--health-probe-address",
                                  "127.0.0.1:0", "--websocket-address", "127.0.0.1:0", "--log-format", "json",
                                  *auth.gm_args],
                     workdir / "sedna-gm.log")
        children.append(gm)
        metrics = gm.wait_announced("metrics", 30)
        if metrics is None or not wait_ready(f"{metrics}/readyz", gm, 30):
            say("sedna-gm did not become ready")
            return 1
        cs = Clientset.from_kubeconfig(str(kubeconfig))
        write_training_data(workdir / "data")
        jobs = cs.elasticdl_v1alpha1().elastic_ai_jobs(NS)
        jobs.create(new_job(workdir / "data"))
        say(f"==> created ElasticAIJob {NS}/{JOB} (training data: {workdir / 'data'})")
        pods = cs.core_v1().pods(NS)
        deadline = time.monotonic() + 30
        while (master_pod := next((p for p in pods.list()["items"]
                                   if p["metadata"]["name"] == f"elasticdl-{JOB}-master"), None)) is None:
            if time.monotonic() > deadline:
                say("sedna-gm did not create the master pod")
                return 1
            pause(0.2)
        command = master_pod["spec"]["containers"][0]["args"][1]
        say(f"    master pod command: {command}")
        tokens = shlex.split(command)
        flags = tokens[tokens.index("elasticdl.python.master.main") + 1:]
        say(f"==> starting the ElasticDL master with those flags (logs: {workdir / 'elasticdl-master.log'})")
        master = Process("elasticdl-master", [sys.executable, "-m", "examples.elasticdl_master", *flags,
                                              "--kubeconfig", str(kubeconfig), "--port", "0", "--host", "127.0.0.1",
                                              "--relaunch_backoff_base", "0.5", "--log_format", "json"],
                         workdir / "elasticdl-master.log")
        children.append(master)
        serving = wait_for_event(master, "serving the worker API", 30)
        if serving is None:
            say("the master did not start")
            return 1
        url = serving["url"]
        client = MasterClient(url)
        running = lambda: running_worker_ids(cs, NS, JOB)  # noqa: E731
        workers = SimulatedWorkers(client, running, exit_worker=lambda w: end_pod(cs, NS, f"elasticdl-{JOB}-worker-{w}", 0))
        say(f"==> playing the workers over {url}")
        started, last, crashed = time.monotonic(), "", False
        while time.monotonic() - started < args.timeout:
            state = workers.step()
            status = client.status() if state != "finished" else None
            if status is not None:
                text = progress_line(status)
                if text != last:
                    say(f"    [{time.monotonic() - started:5.1f}s] {text}")
                    last = text
                tasks = status["tasks"]
                if not crashed and 0 in running() and tasks["tasks_done"] * 3 >= tasks["tasks_total"]:
                    held = client.get_task(0)
                    end_pod(cs, NS, f"elasticdl-{JOB}-worker-0", 1)
                    crashed = True
                    say(f"    worker 0 crashed holding task {held.get('task', {}).get('task_id')}: "
                        "the master takes it back and relaunches the worker after backoff")
            if state == "finished":
                break
            pause(0.1 if state == "working" else 0.3)
        else:
            say(f"==> timed out after {args.timeout:.0f}s")
            return 1
        say("==> the master says finished; the workers exit")
        code = master.proc.wait(60)
        say(f"==> the ElasticDL master exited with {code}")
        done = Counter((t["epoch"], Path(t["file"]).name, t["start"]) for t in workers.completed)
        units = len(done)
        say(f"    {sum(done.values())} tasks done for {units} distinct (epoch, file, start) units; "
            f"every one exactly once: {set(done.values()) == {1}}")
        end_pod(cs, NS, f"elasticdl-{JOB}-master", code)
        deadline = time.monotonic() + 30
        phase = ""
        while time.monotonic() < deadline and phase not in ("Succeeded", "Failed"):
            job = jobs.get(JOB)
            phase = (job.get("status") or {}).get("phase") or ""
            pause(0.2)
        say(f"    {NS}/{JOB} {describe(job)}")
        left = [p["metadata"]["name"] for p in pods.list()["items"] if "-worker-" in p["metadata"]["name"]]
        say(f"    worker pods left: {left or 'none'}")
        cs.close()
        ok = code == 0 and phase == "Succeeded" and set(done.values()) == {1} and not left
        say("==> ElasticAIJob succeeded" if ok else "==> the job did not succeed")
        return 0 if ok else 1
    finally:
        for child in reversed(children):
            code = child.stop()
            say(f"==> {child.name} stopped (exit code {code})")
