"""Real processes for integration and e2e tests: start them with their output in files, kill what is left."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CRDS = REPO / "charts" / "sedna" / "crds"


def shared_peer_dir(name: str) -> Path:
    """``shared/<name>`` in the nearest directory above the repository that has one (``../shared/<name>`` for a
    checkout beside ``shared/``, also found from a worktree nested deeper); ``../shared/<name>`` when none has."""
    for parent in REPO.parents:
        if (parent / "shared" / name).is_dir():
            return parent / "shared" / name
    return REPO.parent / "shared" / name


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts TCP connections on ``host:port`` now."""
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex((host, port)) == 0


def http_get(url: str, timeout: float = 3.0, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """``(status, body)``; ``(0, "")`` when nothing answers."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError:
        return 0, ""


def metric_value(url: str, name: str, /, **labels: str) -> float | None:
    """The value of the sample ``name{labels}`` on the Prometheus page ``url`` (``None`` when absent or unreachable)."""
    from prometheus_client.parser import text_string_to_metric_families

    status, text = http_get(url)
    if status != 200:
        return None
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    return None


def json_log_lines(text: str) -> list[dict[str, Any]]:
    """Every line of a JSON log, parsed; fails on the first line that is not a JSON object."""
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            raise AssertionError(f"log line {number} is not JSON: {line!r}") from None
        assert isinstance(entry, dict), f"log line {number} is not a JSON object: {line!r}"
        lines.append(entry)
    return lines


def log_event(text: str, event: str) -> dict[str, Any] | None:
    """The first complete JSON log line of ``text`` whose ``event`` is ``event`` (None yet); lines that are not JSON
    (a line still being written) are skipped."""
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n") or f'"{event}"' not in line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("event") == event:
            return entry
    return None


class Processes:
    """Starts ``python <argv>`` children from the repository with their output in ``<tmp>/<name>.log``;
    ``cleanup()`` kills whatever is still running."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.env = dict(os.environ, PYTHONPATH=str(REPO))

    def start(self, name: str, argv: list[str], env: dict[str, str] | None = None,
              program: str | None = None) -> subprocess.Popen[bytes]:
        """Start ``sys.executable *argv`` (or ``program *argv``: a peer that is not Python, e.g. Go Sedna's
        binaries); a name used before names the new process (its log is appended to)."""
        with open(self.tmp / f"{name}.log", "ab") as log:
            proc = subprocess.Popen([program or sys.executable, *argv], cwd=REPO, env={**self.env, **(env or {})},
                                    stdout=log, stderr=subprocess.STDOUT)
        old = self.procs.get(name)
        if old is not None and old.poll() is None:
            old.kill()
            old.wait(10)
        self.procs[name] = proc
        return proc

    def log(self, name: str) -> str:
        path = self.tmp / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def cleanup(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)


def start_sandbox(procs: Processes, kubeconfig: Path, *extra: str, name: str = "apiserver") -> subprocess.Popen[bytes]:
    """Start the sandbox API server process with Sedna's CRDs, writing ``kubeconfig``; returns once it listens."""
    from .wait import wait_for

    proc = procs.start(name, ["-m", "sandbox", "--port", "0", "--crds", str(CRDS),
                              "--kubeconfig-out", str(kubeconfig), *extra])
    wait_for("the sandbox API server", lambda: "listening on " in procs.log(name) or proc.poll() is not None,
             timeout=30)
    assert proc.poll() is None, procs.log(name)
    return proc


def start_gm(procs: Processes, name: str, kubeconfig: str | None, *extra: str,
             env: dict[str, str] | None = None, edge_port: int | None = None, wait: bool = False,
             timeout: float = 30.0) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``sedna-gm`` with JSON logs and its metrics server on a free port; returns the process and that URL.
    Its edge link listens on 127.0.0.1:``edge_port`` (default: a free port). With ``wait``, returns once its
    ``/readyz`` answers 200 (within ``timeout`` seconds), failing with its log if it exited first."""
    from .wait import wait_for

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    source = ["--kubeconfig", kubeconfig] if kubeconfig else []
    edge = ["--websocket-address", f"127.0.0.1:{edge_port or free_port()}"]
    proc = procs.start(name, ["-m", "globalmanager.app", *source, "--metrics-address", f"127.0.0.1:{port}",
                              *edge, "--log-format", "json", *extra], env=env)
    if wait:
        wait_for("sedna-gm ready", lambda: http_get(url + "/readyz")[0] == 200 or proc.poll() is not None,
                 timeout=timeout)
        assert proc.poll() is None, procs.log(name)
    return proc, url


def start_lc(procs: Processes, name: str, gm_address: str, rootfs: Path, *extra: str, port: int | None = None,
             env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``sedna-lc`` for node ``name`` with JSON logs, its rootfs (and so its database) at ``rootfs`` and its
    worker API on 127.0.0.1:``port`` (default: a free port); returns the process and that URL. Starting a name
    again (same ``rootfs``) restarts that LC on its database."""
    port = port or free_port()
    rootfs.mkdir(parents=True, exist_ok=True)
    proc = procs.start(name, ["-m", "localcontroller.app", "--gm-address", gm_address, "--node-name", name,
                              "--rootfs", str(rootfs), "--bind-address", f"127.0.0.1:{port}", "--log-format", "json",
                              *extra], env=env)
    return proc, f"http://127.0.0.1:{port}"


def start_workersim(procs: Processes, kubeconfig: Path | str, lcs: dict[str, str] | None = None,
                    rootfs: dict[str, Path] | None = None, *extra: str, name: str = "workersim",
                    wait: bool = True) -> subprocess.Popen[bytes]:
    """Start the worker simulator (``python -m workersim``) with JSON logs, reports retried 5 times 0.2 s
    apart; ``lcs``/``rootfs`` map node names to their LC URL / rootfs. Returns once it has listed the pods."""
    from .wait import wait_for

    argv = ["-m", "workersim", "--kubeconfig", str(kubeconfig), "--report-retry-seconds", "0.2"]
    for node, url in (lcs or {}).items():
        argv += ["--lc", f"{node}={url}"]
    for node, path in (rootfs or {}).items():
        argv += ["--rootfs", f"{node}={path}"]
    proc = procs.start(name, [*argv, *extra])
    if wait:
        wait_for("the worker simulator", lambda: log_event(procs.log(name), "worker simulator ready")
                 or proc.poll() is not None, timeout=30)
        assert proc.poll() is None, procs.log(name)
    return proc


def self_signed_cert(directory: Path, host: str = "127.0.0.1") -> tuple[Path, Path]:
    """A self-signed certificate for ``host`` (an IP) and its key, made with the ``openssl`` command; the
    certificate is its own CA bundle. Skips the calling test when ``openssl`` is not installed."""
    import shutil

    import pytest

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = directory / "tls.crt", directory / "tls.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={host}",
                    "-addext", f"subjectAltName=IP:{host}", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key
