"""Local up: a sandbox cluster, ``sedna-gm``, a ``sedna-lc`` on each of the samples' edge nodes and the worker
simulator; then the sample IncrementalLearningJob through a round on them, or any sample you name.

    sedna-local-up [--sample FILE]... [--timeout 90] [--keep-running] [--workdir DIR] [--edge-auth on|off]
                   [--elasticaijob] [--elasticdl]
    python -m hack.local_up ...   (the same, from the repository root)

1. starts the sandbox API server (``python -m sandbox``) with the CRDs of ``charts/sedna/crds`` and its
   pod simulator, writing a kubeconfig into the work directory (``kubectl --kubeconfig <it> get il,pods``, and
   ``get il -w`` and ``get pods -w`` in two terminals, work while this runs: kubectl watches one type at a time);
2. starts ``sedna-gm`` (``python -m globalmanager.app --kubeconfig <it> --no-leader-elect``, its servers on free
   local ports: port 0, each announced in its log) and waits for /readyz and its edge link; the edge link takes a
   token per node (``websocket.nodeTokensDir``: the tokens are generated into ``<workdir>/edge-node-tokens/``), so no
   other local process can act as a node (``--edge-auth off`` runs it open, as Go Sedna's LCs need);
3. starts a LocalController (``python -m localcontroller.app``, with its node's ``--token-file``) for each edge node
   the chart's samples name, ``edge-node-1`` and ``edge-node-2`` (each with its own rootfs and database in the work
   directory), and waits until both are connected, then the worker simulator (``python -m workersim``), which plays
   Sedna's SDK in the
   worker pods and reports to their node's LC. The samples' cloud node, ``cloud-node-1``, runs only cloud workers
   (aggregation, big model, ReID…), which report nothing: it needs no LC, as in Sedna;
4. the main job (``hack/local_up_il.py``): creates the sample Dataset on ``edge-node-1`` (its index file of 10
   samples under that node's rootfs) and prints the count the LC reports; creates the sample IncrementalLearningJob
   and its Models (workers on ``edge-node-2``); appends 5 samples so that the train trigger fires; prints every
   condition of the job as ``kubectl get il -w`` would (name, stage, status, age) and the pods created for it,
   through one whole Train → Eval → Deploy round, and checks that the deploy Model is the model trained in that
   round;
   with ``--sample FILE`` (repeatable) instead: each sample, with the Models, Datasets and Secret it names, followed
   until it is where its kind ends (``hack/local_up_sample.py``);
5. with ``--elasticaijob``: then the sample ElasticAIJob, followed until it succeeds (``hack/local_up_eaijob.py``);
6. stops the worker simulator, the LCs and sedna-gm (SIGTERM: each must exit 0) and the sandbox. Exit 0 on success,
   1 on failure or timeout. SIGTERM or Ctrl-C stops everything the same way (exit 1 before the jobs are done; 0
   with ``--keep-running`` once they are).

``--elasticdl`` runs another job instead: an ElasticAIJob trained to the end by the ElasticDL master example
(``hack/local_up_elasticdl.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from apis.signals import SignalWatcher

from ._procs import CRDS, REPO, SAMPLES, STOP, Stopped, announcement, child_env, pause

EAIJ_SAMPLE = SAMPLES / "elasticaijob.yaml"
EDGE_NODES = ("edge-node-1", "edge-node-2")  # the samples' edge nodes: an LC each
CLOUD_NODE = "cloud-node-1"  # the samples' cloud node: its workers report nothing, so no LC (as in Sedna)


def say(text: str) -> None:
    print(text, flush=True)


class Process:
    """A child process whose output goes to a log file; ``wait_for_line`` watches it for a marker, ``wait_announced``
    for the address it bound (our programs bind port 0 and log ``listening`` with ``server`` and ``url``)."""

    def __init__(self, name: str, argv: list[str], log_path: Path) -> None:
        self.name = name
        self.log_path = log_path
        env = child_env()
        self._log = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
            start_new_session=True,  # Ctrl-C reaches only us; we stop the children one SIGTERM each
        )
        self._lines: list[str] = []
        self._announced: dict[str, str] = {}  # server → URL
        self._cond = threading.Condition()
        self._pump = threading.Thread(target=self._read, name=f"{name}-output", daemon=True)
        self._pump.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._log.write(line)
            self._log.flush()
            announced = announcement(line)
            with self._cond:
                self._lines.append(line.rstrip("\n"))
                del self._lines[:-200]
                if announced is not None:
                    self._announced[announced[0]] = announced[1]
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def wait_for_line(self, prefix: str, timeout: float, contains: str = "") -> str | None:
        """The first output line that starts with ``prefix`` (and has ``contains`` in it); None on timeout or exit."""
        seen = 0

        def found() -> str | None:
            nonlocal seen
            line = next((x for x in self._lines[seen:] if x.startswith(prefix) and contains in x), None)
            seen = len(self._lines)
            return line

        return self._wait(found, timeout)

    def wait_announced(self, server: str, timeout: float) -> str | None:
        """The URL the program announced for ``server``; None on timeout or exit."""
        return self._wait(lambda: self._announced.get(server), timeout)

    def _wait(self, found: Callable[[], str | None], timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not STOP.is_set():
                value = found()
                if value is not None:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.proc.poll() is not None:
                    return None
                self._cond.wait(min(remaining, 0.5))
        raise Stopped

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


@dataclass(frozen=True)
class EdgeAuth:
    """The edge link's credentials: ``gm_args`` for sedna-gm, ``lc_args(node)`` for a node's sedna-lc."""

    gm_args: tuple[str, ...] = ()
    tokens: Path | None = None  # the directory of per-node token files; None: auth off

    def lc_args(self, node: str) -> list[str]:
        return ["--token-file", str(self.tokens / node)] if self.tokens is not None else []


def edge_auth(mode: str, workdir: Path, nodes: Sequence[str]) -> EdgeAuth:
    """``on``: a fresh 48-character token per node in ``<workdir>/edge-node-tokens/<node>`` (0600, in a 0700
    directory), the directory being sedna-gm's ``websocket.nodeTokensDir`` (in ``<workdir>/sedna-gm.yaml``) and each
    file that node's LC ``--token-file``, as the chart's node identity mode; ``off``: nothing (any local process can
    connect as any node)."""
    if mode == "off":
        return EdgeAuth()
    tokens = workdir / "edge-node-tokens"
    tokens.mkdir(mode=0o700, exist_ok=True)
    os.chmod(tokens, 0o700)
    for node in nodes:
        path = tokens / node
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(24) + "\n")
    config = workdir / "sedna-gm.yaml"
    config.write_text(f"websocket:\n  nodeTokensDir: {json.dumps(str(tokens))}\n")
    return EdgeAuth(("--config", str(config)), tokens)


def wait_ready(url: str, proc: Process, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.proc.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return True
        except OSError:
            pass
        pause(0.2)
    return False


def sample_problem(path: Path) -> str:
    """Why ``path`` cannot be run as a sample ("" when it can): not a file, not YAML, an object without apiVersion,
    kind or name, a kind the sandbox does not serve."""
    from apis import resources

    from .local_up_sample import load

    if not path.is_file():
        return "no such file"
    try:
        docs = load(path)
    except Exception as exc:  # yaml's errors and the loader's size limits have no common base
        return f"not a YAML manifest: {exc}"
    if not docs:
        return "holds no object"
    for doc in docs:
        if not isinstance(doc, dict) or not isinstance(doc.get("metadata"), dict) or not doc["metadata"].get("name"):
            return "every object needs apiVersion, kind and metadata.name"
        try:
            resources.lookup_kind(str(doc.get("apiVersion")), str(doc.get("kind")))
        except KeyError as exc:
            return str(exc.args[0])
    return ""


def watched_resources(samples: list[str]) -> list[str]:
    """What to pass to ``kubectl get``: the resources of the samples' kinds (``il`` for the main job)."""
    if not samples:
        return ["il"]
    from apis import resources

    from .local_up_sample import load

    return sorted({resources.lookup_kind(o["apiVersion"], o["kind"]).gvr.resource for p in samples for o in load(Path(p))})


def kubectl_hints(kubeconfig: Path, watched: list[str]) -> list[str]:
    """The kubectl commands to follow a run with: every type at once without ``-w``, and one watch per type (kubectl
    refuses ``-w`` with two: "you may only specify a single resource type", every version)."""
    k = f"kubectl --kubeconfig {kubeconfig}"
    others = "; likewise any other type above" if len(watched) > 1 else ""
    return [f"{k} get {','.join([*watched, 'pods'])}",
            f"{k} get {watched[0]} -w    (one type per watch, a terminal each{others})",
            f"{k} get pods -w"]


class StartFailed(Exception):
    """A process of the cluster did not start (the message says which and where its log is)."""


@dataclass
class Cluster:
    """The sandbox API server and what runs on it: ``sedna-gm``, an LC per edge node and the worker simulator."""

    workdir: Path
    kubeconfig: Path
    api: Process
    children: list[Process] = field(default_factory=list)  # in start order; stopped in reverse, the sandbox last
    lc_urls: dict[str, str] = field(default_factory=dict)

    @property
    def processes(self) -> list[Process]:
        return [self.api, *self.children]

    def stop(self) -> bool:
        """Stop every process (SIGTERM, each in turn); True when each exited 0."""
        ok = True
        for child in reversed(self.children):
            code = child.stop()
            say(f"==> {child.name} stopped (exit code {code})")
            ok = ok and code == 0
        code = self.api.stop()
        say(f"==> sandbox API server stopped (exit code {code})")
        return ok


def start_cluster(workdir: Path, watched: Sequence[str] = ("il",), edge_auth_mode: str = "on",
                  sandbox_args: Sequence[str] = ()) -> Cluster:
    """Start the cluster of the module doc (steps 1-3) in ``workdir`` (``sandbox_args``: more flags of the sandbox
    API server); ``StartFailed`` (everything started stopped) when a process does not come up."""
    kubeconfig = workdir / "kubeconfig"
    say(f"==> starting the sandbox API server (logs: {workdir / 'apiserver.log'})")
    cluster = Cluster(workdir, kubeconfig, Process(
        "sandbox",
        [sys.executable, "-m", "sandbox", "--port", "0", "--crds", str(CRDS), "--kubeconfig-out", str(kubeconfig),
         # only the samples' nodes exist, as on a cluster: a pod bound to a mistyped node stays Pending
         # (FailedScheduling); the GM refuses the kinds that check their nodes first (NodeNotFound) and creates none
         "--strict-nodes", "--node", ",".join((*EDGE_NODES, CLOUD_NODE)), "--pod-logs-dir", str(workdir / "pod-logs"),
         *sandbox_args],
        workdir / "apiserver.log",
    ))
    try:
        _start(cluster, watched, edge_auth_mode)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _start(cluster: Cluster, watched: Sequence[str], edge_auth_mode: str) -> None:
    workdir, kubeconfig, children = cluster.workdir, cluster.kubeconfig, cluster.children
    line = cluster.api.wait_for_line("listening on ", 30)
    if line is None:
        raise StartFailed(f"sandbox API server did not start; see {workdir / 'apiserver.log'}")
    say(f"    {line}")
    for i, hint in enumerate(kubectl_hints(kubeconfig, list(watched))):
        say(f"    {'try: ' if i == 0 else '     '}{hint}")

    # every server on port 0: each program announces the port it bound, which no other process can take first
    auth = edge_auth(edge_auth_mode, workdir, EDGE_NODES)
    say(f"==> starting sedna-gm (logs: {workdir / 'sedna-gm.log'})")
    gm = Process(
        "sedna-gm",
        [sys.executable, "-m", "globalmanager.app", "--kubeconfig", str(kubeconfig), "--no-leader-elect",
         "--metrics-address", "127.0.0.1:0", "--health-probe-address", "127.0.0.1:0",
         "--websocket-address", "127.0.0.1:0", "--log-format", "json", *auth.gm_args],
        workdir / "sedna-gm.log",
    )
    children.append(gm)
    metrics = gm.wait_announced("metrics", 30)
    edge = gm.wait_announced("edge", 30) if metrics and wait_ready(f"{metrics}/readyz", gm, 30) else None
    if edge is None:
        raise StartFailed(f"sedna-gm did not become ready; see {workdir / 'sedna-gm.log'}")
    say(f"    sedna-gm is ready (metrics on {metrics}, edge link on {edge})")
    edge_address = edge.removeprefix("ws://")
    if auth.tokens is not None:
        say(f"    edge link: each LC proves its node with its own token ({auth.tokens}/<node>); without it a "
            "connection is refused (401)")
        say(f"    try: curl -si -H 'Node-Name: {EDGE_NODES[0]}' http://{edge_address}/ | head -1   "
            f"(401: not {EDGE_NODES[0]}'s token)")
    else:
        say("    edge link: auth off (--edge-auth off): any local process can connect as any node")
    lc_urls = cluster.lc_urls
    for node in EDGE_NODES:
        say(f"==> starting sedna-lc {node} (rootfs {workdir / node}, logs: {workdir / (node + '.log')})")
        (workdir / node).mkdir(exist_ok=True)
        lc = Process(
            node,
            [sys.executable, "-m", "localcontroller.app", "--gm-address", edge_address,
             "--node-name", node, "--rootfs", str(workdir / node), "--bind-address", "127.0.0.1:0",
             "--health-probe-address", "127.0.0.1:0", "--dataset-check-period", "0.5", "--log-format", "json",
             *auth.lc_args(node)],
            workdir / f"{node}.log",
        )
        children.append(lc)
        url = lc.wait_announced("worker-api", 30)
        if url is None or not wait_ready(f"{url}/readyz", lc, 30):
            raise StartFailed(f"sedna-lc {node} did not connect to sedna-gm; see {workdir / (node + '.log')}")
        lc_urls[node] = url
        say(f"    {node} is connected (worker API on {url})")
    say(f"==> starting the worker simulator (plays Sedna's SDK in the worker pods; logs: {workdir / 'workersim.log'})")
    workersim = [sys.executable, "-m", "workersim", "--kubeconfig", str(kubeconfig), "--report-retry-seconds", "0.5",
                 "--pod-logs-dir", str(workdir / "pod-logs")]  # kubectl logs <pod> shows what its worker did
    for node in EDGE_NODES:
        workersim += ["--lc", f"{node}={lc_urls[node]}", "--rootfs", f"{node}={workdir / node}"]
    children.append(Process("workersim", workersim, workdir / "workersim.log"))
    if children[-1].wait_for_line('{"', 30, contains='"worker simulator ready"') is None:
        raise StartFailed(f"the worker simulator did not start; see {workdir / 'workersim.log'}")
    say("    the worker simulator is ready")


def run(args: argparse.Namespace, workdir: Path) -> int:
    from apis.clientset import Clientset

    from .local_up_eaijob import run_elastic_ai_job
    from .local_up_il import run_il_job
    from .local_up_sample import run_samples

    cluster: Cluster | None = None
    ok = False
    try:
        cluster = start_cluster(workdir, watched_resources(args.sample), args.edge_auth)
        gm = cluster.children[0]
        cs = Clientset.from_kubeconfig(str(cluster.kubeconfig))
        if args.sample:
            ok = run_samples(cs, [Path(p) for p in args.sample], {n: workdir / n for n in EDGE_NODES}, args.timeout,
                             say, (CLOUD_NODE,))
        else:
            ok = run_il_job(cs, workdir, args.timeout, say)
        if ok and args.elasticaijob:
            ok = run_elastic_ai_job(cs, args, say)
        if args.keep_running:
            say(f"==> running until Ctrl-C or SIGTERM; kubectl --kubeconfig {cluster.kubeconfig} get "
                f"{','.join([*watched_resources(args.sample), 'pods'])}")
            while not STOP.wait(1) and gm.proc.poll() is None:
                pass
        cs.close()
    except StartFailed as exc:
        say(str(exc))
        return 1
    except Stopped:
        say("==> stopping on a signal")
        ok = ok and args.keep_running
    finally:
        if cluster is not None and not cluster.stop():
            ok = False
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="sedna-local-up", description=__doc__.split("\n\n")[0])
    p.add_argument("--timeout", type=float, default=90.0,
                   help="seconds to wait for each job; with --sample, for all the samples, followed at once (90)")
    p.add_argument("--keep-running", action="store_true", help="keep everything running after the jobs")
    p.add_argument("--elasticaijob", action="store_true",
                   help="after the main job, follow the sample ElasticAIJob until it succeeds (hack/local_up_eaijob.py)")
    p.add_argument("--sample", action="append", default=[], metavar="FILE",
                   help="instead of the main job: create this sample (with the Models, Datasets and Secret it names) "
                        "and follow it to where its kind ends; repeatable (hack/local_up_sample.py)")
    p.add_argument("--run-seconds", type=float, default=3.0,
                   help="with --elasticaijob: how long the simulated master runs (3)")
    p.add_argument("--start-delay-seconds", type=float, default=1.0,
                   help="with --elasticaijob: how long the master stays Pending (1)")
    p.add_argument("--workdir", help="directory for the kubeconfig and logs (default: a temporary one, removed)")
    p.add_argument("--edge-auth", choices=("on", "off"), default="on",
                   help="on (default): the edge link takes a token per node, generated into the workdir; off: any "
                        "local process can connect as any node")
    p.add_argument("--elasticdl", action="store_true",
                   help="train an ElasticAIJob to the end with the ElasticDL master example (hack/local_up_elasticdl.py)")
    args = p.parse_args(argv)
    for path in args.sample:
        problem = sample_problem(Path(path))
        if problem:
            p.error(f"--sample {path}: {problem}")
    if not CRDS.is_dir():
        p.error(f"the chart's CRDs are not at {CRDS}: install the project from its source tree (pip install -e .)")
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="sedna-local-up-"))
    workdir.mkdir(parents=True, exist_ok=True)

    def on_signal(signum: signal.Signals, count: int) -> None:  # on the watcher's thread
        if count == 1:
            say(f"==> {signum.name}: stopping everything")
        STOP.set()

    SignalWatcher(on_signal).install()  # for the process's lifetime (apis.signals)
    if args.elasticdl:
        from .local_up_elasticdl import run as run_elasticdl

        try:
            code = run_elasticdl(args, workdir)
        except Stopped:
            code = 1
    else:
        code = run(args, workdir)
    if not args.workdir and code == 0:
        shutil.rmtree(workdir, ignore_errors=True)
    elif code != 0:
        say(f"logs kept in {workdir}")
    return code


if __name__ == "__main__":
    sys.exit(main())
