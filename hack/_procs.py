"""Process helpers the hack/ benchmarks and local-up share: the addresses our programs announce, HTTP readiness,
/proc readings, starting the sandbox API server and ``sedna-gm`` as child processes of this repository, and
``pause`` (a sleep that a stop signal ends: ``STOP`` is set by local_up's signal watcher, and ``pause`` then raises
``Stopped``).

Our programs bind port 0 and log ``listening`` with ``server`` and ``url`` (``announcement``): no other process can
take their port first. Go Sedna's ``sedna-gm`` cannot announce: the Go peer gets a port found free a moment before
(``free_port``)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

# The source tree this package is in (``pip install -e .`` keeps it there): the chart's CRDs and samples live beside
# the packages, not in them.
REPO = Path(__file__).resolve().parent.parent
CRDS = REPO / "charts" / "sedna" / "crds"
SAMPLES = REPO / "charts" / "sedna" / "samples"

STOP = threading.Event()

__all__ = ["CRDS", "REPO", "SAMPLES", "STOP", "Stopped", "announced", "announcement", "child_env", "cpu_seconds",
           "free_port", "memory_mb", "pause", "proc_status", "start_gm", "start_go_gm", "start_sandbox", "stop_processes",
           "use_testkit", "wait_http"]


class Stopped(Exception):
    """A stop signal arrived (``STOP`` is set)."""


def pause(seconds: float) -> None:
    """Sleep ``seconds``; ``Stopped`` as soon as ``STOP`` is set."""
    if STOP.wait(seconds):
        raise Stopped


def child_env(tree: Path = REPO) -> dict[str, str]:
    """This process's environment with ``tree`` (default: this repository) first on ``PYTHONPATH``."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(tree), os.environ.get("PYTHONPATH")) if p))


def free_port() -> int:
    """A port free now; only for Go Sedna's programs, which cannot bind port 0 and say which port they got."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def announcement(line: str) -> tuple[str, str] | None:
    """``(server, url)`` of a JSON log line ``listening`` (what our programs log once bound); None for another line."""
    if '"listening"' not in line:
        return None
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("event") != "listening":
        return None
    return str(entry.get("server")), str(entry.get("url"))


def announced(log_path: Path, server: str, proc: subprocess.Popen[Any], timeout: float) -> str:
    """The URL the program logging to ``log_path`` announced for ``server`` (exits the program if it does not within
    ``timeout`` seconds, or exits first)."""
    deadline = time.monotonic() + timeout
    while True:
        for line in log_path.read_text(errors="replace").splitlines():
            found = announcement(line)
            if found is not None and found[0] == server:
                return found[1]
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"no {server} address announced in {log_path}:\n"
                             + log_path.read_text(errors="replace")[-2000:])
        time.sleep(0.05)


def wait_http(url: str, timeout: float, check: Callable[[int, str], bool] = lambda code, body: code == 200) -> str:
    """Poll ``url`` until ``check(status, body)`` holds; returns the body (exits the program on timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                body = resp.read().decode()
                if check(resp.status, body):
                    return body
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"timed out waiting for {url}")


def stop_processes(*procs: subprocess.Popen[Any]) -> None:
    """SIGTERM each process in turn; kill one that has not exited 15 s later."""
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` (all its threads)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status(pid: int, *keys: str) -> dict[str, int]:
    """The numbers ``keys`` of ``/proc/<pid>/status`` (``VmRSS`` in kB, ``Threads``...); a key it lacks is left out."""
    values = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key, _, rest = line.partition(":")
            if key in keys:
                values[key] = int(rest.split()[0])
    return values


def memory_mb(pid: int) -> tuple[float, float]:
    """Resident memory of ``pid`` now and at its peak (``VmRSS``, ``VmHWM`` of ``/proc/<pid>/status``), in MiB."""
    values = proc_status(pid, "VmRSS", "VmHWM")
    return values.get("VmRSS", 0) / 1024, values.get("VmHWM", 0) / 1024


def start_sandbox(workdir: Path, extra: list[str], *, log_level: str = "warning",
                  tree: Path = REPO) -> tuple[subprocess.Popen[bytes], Path]:
    """The sandbox API server of source tree ``tree`` (default: this repository; a benchmark's baseline is another
    revision's) with Sedna's CRDs, its output in ``<workdir>/apiserver.log`` and its kubeconfig in
    ``<workdir>/kubeconfig``; returns once it listens (exits the program if it does not within 60 s)."""
    kubeconfig = workdir / "kubeconfig"
    log_path = workdir / "apiserver.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "sandbox", "--port", "0", "--crds", str(CRDS),
                                 "--kubeconfig-out", str(kubeconfig), "--log-level", log_level, *extra], cwd=tree,
                                env=child_env(tree), stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while "listening on" not in log_path.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the sandbox API server did not start:\n" + log_path.read_text(errors="replace"))
        time.sleep(0.05)
    return proc, kubeconfig


def start_gm(workdir: Path, kubeconfig: Path, config: Mapping[str, Any]) -> tuple[subprocess.Popen[bytes], str]:
    """``sedna-gm`` without leader election, ``config`` as its config file, warning-level JSON logs in
    ``<workdir>/gm.log``, its servers on free ports of 127.0.0.1 (its edge link: ``announced(<workdir>/gm.log,
    "edge", ...)``); returns the process and its metrics URL once ``/readyz`` answers 200."""
    config_path = workdir / "gm.yaml"
    config_path.write_text(json.dumps(dict(config)))  # JSON is YAML
    with open(workdir / "gm.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "globalmanager.app", "--kubeconfig", str(kubeconfig),
                                 "--no-leader-elect", "--config", str(config_path), "--metrics-address", "127.0.0.1:0",
                                 "--health-probe-address", "127.0.0.1:0", "--websocket-address", "127.0.0.1:0",
                                 "--log-level", "warning", "--log-format", "json"],
                                cwd=REPO, env=child_env(), stdout=log, stderr=subprocess.STDOUT)
    url = announced(workdir / "gm.log", "metrics", proc, 60)
    wait_http(url + "/readyz", 60)
    return proc, url


def use_testkit() -> None:
    """Make ``test/testkit`` importable (its process helpers are shared with the benchmarks: ``testkit.procs``)."""
    if str(REPO / "test") not in sys.path:
        sys.path.insert(0, str(REPO / "test"))


def start_go_gm(workdir: Path, kubeconfig: Path, *, edge_port: int | None = None) -> subprocess.Popen[bytes] | str:
    """Go Sedna's own ``sedna-gm`` (the benchmarks' peer) watching every namespace, its log in ``<workdir>/go-gm.log``;
    returns the process once its edge link listens, or why it cannot run here (binaries from ``$SEDNA_GO_BIN_DIR``,
    else ``../shared/go-sedna``, decompressed once into ``~/.cache/sedna-controlplane``: ``testkit.gosedna``)."""
    use_testkit()
    from testkit.gosedna import go_binaries
    from testkit.procs import port_open

    binaries = go_binaries(Path.home() / ".cache" / "sedna-controlplane" / "go-sedna")
    if isinstance(binaries, str):
        return binaries
    port = edge_port or free_port()
    config = workdir / "go-gm.json"
    config.write_text(json.dumps({"kubeConfig": str(kubeconfig), "namespace": "",
                                  "websocket": {"address": "127.0.0.1", "port": port}}))
    with open(workdir / "go-gm.log", "wb") as log:
        proc = subprocess.Popen([str(binaries.gm), "--config", str(config), "-v", "2"], cwd=workdir,
                                stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while not port_open(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_processes(proc)
            return "Go's sedna-gm did not start:\n" + (workdir / "go-gm.log").read_text(errors="replace")[-2000:]
        time.sleep(0.1)
    return proc
