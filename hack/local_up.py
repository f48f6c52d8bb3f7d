"""Local up: a sandbox cluster, ``sedna-gm`` and two ``sedna-lc`` against it, a sample Dataset counted on an edge
node, and a sample ElasticAIJob followed until it succeeds.

    python -m hack.local_up [--timeout 60] [--keep-running] [--sample charts/sedna/samples/elasticaijob.yaml]

1. starts the sandbox API server (``python -m apis.fake.apiserver``) with the CRDs of ``charts/sedna/crds`` and its
   pod simulator, writing a kubeconfig into a temporary directory (printed: ``kubectl --kubeconfig <it> get eaijob``
   works while this runs);
2. starts ``sedna-gm`` (``python -m globalmanager.app --kubeconfig <it> --no-leader-elect``, its edge link on a free
   local port) and waits for /readyz;
3. starts two LocalControllers (``python -m localcontroller.app``, nodes ``edge-1`` and ``edge-2``, each with its own
   rootfs and database in the work directory) and waits until both are connected; creates the sample Dataset on
   ``edge-1`` with an index file of 5 samples, prints its ``numberOfSamples`` as the LC reports it, appends 3 lines
   and prints the new count;
4. creates the sample job (and its namespace, when missing) with the annotations
   ``sandbox.sedna.io/start-delay-seconds`` and
   ``sandbox.sedna.io/run-seconds`` (the controller copies
   ``sandbox.sedna.io/*`` job annotations onto the master pod, so the simulated master runs that long and exits 0);
5. prints every change of the job's phase and conditions until it has Succeeded;
6. stops the LCs and sedna-gm (SIGTERM: each must exit 0) and the sandbox. Exit 0 on success, 1 on failure or
   timeout.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SAMPLE = REPO / "charts" / "sedna" / "samples" / "elasticaijob.yaml"
DATASET_SAMPLE = REPO / "charts" / "sedna" / "samples" / "dataset.yaml"
EDGE_NODES = ("edge-1", "edge-2")
CRDS = REPO / "charts" / "sedna" / "crds"


def say(text: str) -> None:
    print(text, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Process:
    """A child process whose output goes to a log file; ``wait_for_line`` watches it for a marker."""

    def __init__(self, name: str, argv: list[str], log_path: Path) -> None:
        self.name = name
        self.log_path = log_path
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self._log = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
            start_new_session=True,  # Ctrl-C reaches only us; we stop the children one SIGTERM each
        )
        self._lines: list[str] = []
        self._cond = threading.Condition()
        self._pump = threading.Thread(target=self._read, name=f"{name}-output", daemon=True)
        self._pump.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._log.write(line)
            self._log.flush()
            with self._cond:
                self._lines.append(line.rstrip("\n"))
                del self._lines[:-200]
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def wait_for_line(self, prefix: str, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        seen = 0
        with self._cond:
            while True:
                for line in self._lines[seen:]:
                    if line.startswith(prefix):
                        return line
                seen = len(self._lines)
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.proc.poll() is not None:
                    return None
                self._cond.wait(min(remaining, 0.5))

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, then SIGKILL after ``timeout``; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                say(f"{self.name} did not stop within {timeout:.0f}s: killing it")
                self.proc.kill()
                self.proc.wait(5)
        self._pump.join(5)
        self._log.close()
        return self.proc.returncode


def wait_ready(url: str, proc: Process, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.proc.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def describe(job: dict[str, Any]) -> str:
    status = job.get("status") or {}
    conds = ", ".join(f"{c.get('type')}={c.get('status')}" for c in status.get("conditions") or [])
    reps = status.get("replicaStatuses") or {}
    replicas = " ".join(
        f"{role}:{r.get('active', 0)}/{r.get('succeeded', 0)}/{r.get('failed', 0)}" for role, r in reps.items()
    )
    return f"phase={status.get('phase') or '-':<9} conditions=[{conds}]" + (
        f" replicas(active/succeeded/failed)={replicas}" if replicas else ""
    )


def show_dataset(cs: Any, workdir: Path, timeout: float) -> bool:
    """Create the sample Dataset on edge-1 with a 5-sample index, show the count the LC reports, append 3 samples and
    show the new count."""
    dataset = yaml.safe_load(DATASET_SAMPLE.read_text(encoding="utf-8"))
    md = dataset.setdefault("metadata", {})
    md.setdefault("namespace", "default")
    dataset["spec"]["nodeName"] = EDGE_NODES[0]
    index = workdir / EDGE_NODES[0] / dataset["spec"]["url"].lstrip("/")
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text("".join(f"images/{i}.jpg\n" for i in range(5)), encoding="utf-8")
    datasets = cs.sedna_v1alpha1().datasets(md["namespace"])
    datasets.create(dataset)
    say(f"==> created Dataset {md['namespace']}/{md['name']} on {EDGE_NODES[0]} (index {index}: 5 samples)")
    for expected in (5, 8):
        if expected == 8:
            with open(index, "a", encoding="utf-8") as fh:
                fh.writelines(f"images/{i}.jpg\n" for i in range(5, 8))
            say(f"    appended 3 samples to {index}")
        started = time.monotonic()
        count = None
        while time.monotonic() - started < timeout and count != expected:
            count = (datasets.get(md["name"]).get("status") or {}).get("numberOfSamples")
            if count != expected:
                time.sleep(0.2)
        if count != expected:
            say(f"==> timed out waiting for numberOfSamples={expected} (last: {count})")
            return False
        say(f"    [{time.monotonic() - started:5.1f}s] {md['namespace']}/{md['name']} numberOfSamples={count}")
    return True


def run(args: argparse.Namespace, workdir: Path) -> int:
    from apis import errors
    from apis.clientset import Clientset

    kubeconfig = workdir / "kubeconfig"
    say(f"==> starting the sandbox API server (logs: {workdir / 'apiserver.log'})")
    api = Process(
        "sandbox",
        [sys.executable, "-m", "apis.fake.apiserver", "--port", "0", "--crds", str(CRDS), "--kubeconfig-out", str(kubeconfig)],
        workdir / "apiserver.log",
    )
    gm: Process | None = None
    lcs: list[Process] = []
    ok = False
    try:
        line = api.wait_for_line("listening on ", 30)
        if line is None:
            say(f"sandbox API server did not start; see {workdir / 'apiserver.log'}")
            return 1
        say(f"    {line}")
        say(f"    kubeconfig: {kubeconfig}")
        say(f"    try: kubectl --kubeconfig {kubeconfig} get eaijob,pods")

        port, edge_port = free_port(), free_port()
        say(f"==> starting sedna-gm (metrics/health on 127.0.0.1:{port}, edge link on 127.0.0.1:{edge_port}, "
            f"logs: {workdir / 'sedna-gm.log'})")
        gm = Process(
            "sedna-gm",
            [sys.executable, "-m", "globalmanager.app", "--kubeconfig", str(kubeconfig), "--no-leader-elect",
             "--metrics-address", f"127.0.0.1:{port}", "--websocket-address", f"127.0.0.1:{edge_port}",
             "--log-format", "json"],
            workdir / "sedna-gm.log",
        )
        if not wait_ready(f"http://127.0.0.1:{port}/readyz", gm, 30):
            say(f"sedna-gm did not become ready; see {workdir / 'sedna-gm.log'}")
            return 1
        say("    sedna-gm is ready")
        cs = Clientset.from_kubeconfig(str(kubeconfig))
        for node in EDGE_NODES:
            lc_port = free_port()
            say(f"==> starting sedna-lc {node} (worker API on 127.0.0.1:{lc_port}, rootfs {workdir / node}, "
                f"logs: {workdir / (node + '.log')})")
            (workdir / node).mkdir(exist_ok=True)
            lcs.append(Process(
                node,
                [sys.executable, "-m", "localcontroller.app", "--gm-address", f"127.0.0.1:{edge_port}",
                 "--node-name", node, "--rootfs", str(workdir / node), "--bind-address", f"127.0.0.1:{lc_port}",
                 "--dataset-check-period", "1", "--log-format", "json"],
                workdir / f"{node}.log",
            ))
            if not wait_ready(f"http://127.0.0.1:{lc_port}/readyz", lcs[-1], 30):
                say(f"sedna-lc {node} did not connect to sedna-gm; see {workdir / (node + '.log')}")
                return 1
            say(f"    {node} is connected")
        if not show_dataset(cs, workdir, args.timeout):
            return 1

        job = yaml.safe_load(Path(args.sample).read_text(encoding="utf-8"))
        md = job.setdefault("metadata", {})
        md.setdefault("namespace", "default")
        annotations = md.setdefault("annotations", {})
        annotations["sandbox.sedna.io/start-delay-seconds"] = str(args.start_delay_seconds)
        annotations["sandbox.sedna.io/run-seconds"] = str(args.run_seconds)
        ns, name = md["namespace"], md["name"]
        try:  # the sandbox, like a cluster, only takes objects in namespaces that exist
            cs.core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        except errors.ApiError as exc:
            if not errors.is_already_exists(exc):
                raise
        jobs = cs.elasticdl_v1alpha1().elastic_ai_jobs(ns)
        jobs.create(job)
        say(f"==> created ElasticAIJob {ns}/{name} (master simulated for {args.run_seconds}s)")

        started = time.monotonic()
        last = ""
        phase = ""
        while time.monotonic() - started < args.timeout:
            try:
                current = jobs.get(name)
            except errors.ApiError as exc:
                say(f"    cannot read the job: {exc}")
                time.sleep(0.5)
                continue
            text = describe(current)
            if text != last:
                say(f"    [{time.monotonic() - started:5.1f}s] {ns}/{name} {text}")
                last = text
            phase = (current.get("status") or {}).get("phase") or ""
            if phase in ("Succeeded", "Failed"):
                break
            time.sleep(0.25)
        if phase == "Succeeded":
            say(f"==> ElasticAIJob {ns}/{name} succeeded")
            ok = True
        elif phase == "Failed":
            say(f"==> ElasticAIJob {ns}/{name} failed")
        else:
            say(f"==> timed out after {args.timeout:.0f}s waiting for {ns}/{name} to succeed")
        events = cs.core_v1().events(ns).list()["items"]
        for ev in events:
            if (ev.get("involvedObject") or {}).get("name") == name:
                say(f"    event {ev.get('type')} {ev.get('reason')}: {ev.get('message')}")
        if args.keep_running:
            say(f"==> running until Ctrl-C; kubectl --kubeconfig {kubeconfig} get eaijob,pods")
            stop = threading.Event()
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
            signal.signal(signal.SIGINT, lambda *_: stop.set())
            try:
                while not stop.wait(1) and gm.proc.poll() is None:
                    pass
            except KeyboardInterrupt:
                pass
        cs.close()
    finally:
        for lc in lcs:
            code = lc.stop()
            say(f"==> sedna-lc {lc.name} stopped (exit code {code})")
            if code != 0:
                ok = False
        if gm is not None:
            code = gm.stop()
            say(f"==> sedna-gm stopped (exit code {code})")
            if code != 0:
                ok = False
        code = api.stop()
        say(f"==> sandbox API server stopped (exit code {code})")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hack.local_up", description=__doc__.split("\n\n")[0])
    p.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for the job to succeed (90)")
    p.add_argument("--keep-running", action="store_true", help="keep everything running after the job succeeded")
    p.add_argument("--sample", default=str(DEFAULT_SAMPLE), help="ElasticAIJob YAML to apply")
    p.add_argument("--run-seconds", type=float, default=3.0, help="how long the simulated master runs (3)")
    p.add_argument("--start-delay-seconds", type=float, default=1.0, help="how long the master stays Pending (1)")
    p.add_argument("--workdir", help="directory for the kubeconfig and logs (default: a temporary one, removed)")
    p.add_argument("--elasticdl", action="store_true",
                   help="train an ElasticAIJob to the end with the ElasticDL master example (hack/local_up_elasticdl.py)")
    args = p.parse_args(argv)
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="sedna-local-up-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        if args.elasticdl:
            from .local_up_elasticdl import run as run_elasticdl

            code = run_elasticdl(args, workdir)
        else:
            code = run(args, workdir)
    except KeyboardInterrupt:
        code = 1
    if not args.workdir and code == 0:
        shutil.rmtree(workdir, ignore_errors=True)
    elif code != 0:
        say(f"logs kept in {workdir}")
    return code


if __name__ == "__main__":
    sys.exit(main())
