"""Real processes for integration and e2e tests: start them with their output in files, kill what is left."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

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
    """A port free now, for an address nothing is meant to listen on (a peer that must be unreachable). Never for a
    program to bind later: another process may take it first. Our programs bind port 0 and announce the port
    (``announced_url``)."""
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


def log_event(text: str, event: str, **fields: str) -> dict[str, Any] | None:
    """The first complete JSON log line of ``text`` whose ``event`` is ``event`` (and whose ``fields`` have these
    values) (None yet); lines that are not JSON (a line still being written) are skipped."""
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n") or f'"{event}"' not in line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if (isinstance(entry, dict) and entry.get("event") == event
                and all(entry.get(key) == value for key, value in fields.items())):
            return entry
    return None


class Processes:
    """Starts ``python <argv>`` children from the repository with their output in ``<tmp>/<name>.log``;
    ``cleanup()`` kills whatever is still running."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.env = dict(os.environ, PYTHONPATH=str(REPO))
        self._log_starts: dict[str, int] = {}  # name → where its latest process's output begins in its log

    def start(self, name: str, argv: list[str], env: dict[str, str] | None = None,
              program: str | None = None) -> subprocess.Popen[bytes]:
        """Start ``sys.executable *argv`` (or ``program *argv``: a peer that is not Python, e.g. Go Sedna's
        binaries); a name used before names the new process (its log is appended to)."""
        with open(self.tmp / f"{name}.log", "ab") as log:
            self._log_starts[name] = log.tell()
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

    def latest_log(self, name: str) -> str:
        """The output of the latest process started as ``name`` (its log holds every earlier one's too)."""
        path = self.tmp / f"{name}.log"
        if not path.exists():
            return ""
        with open(path, "rb") as log:
            log.seek(self._log_starts.get(name, 0))
            return log.read().decode(errors="replace")

    def cleanup(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)


def start_sandbox(procs: Processes, kubeconfig: Path, *extra: str, name: str = "apiserver",
                  port: int = 0) -> subprocess.Popen[bytes]:
    """Start the sandbox API server process with Sedna's CRDs, writing ``kubeconfig``, on 127.0.0.1:``port`` (0: a
    free port; ``sandbox_url`` says which); returns once it listens. One restarted on its previous ``port`` (the
    kubeconfig names it) is tried again when another process took it."""
    from .wait import wait_for

    def attempt() -> subprocess.Popen[bytes]:
        proc = procs.start(name, ["-m", "sandbox", "--port", str(port), "--crds", str(CRDS),
                                  "--kubeconfig-out", str(kubeconfig), *extra])
        wait_for("the sandbox API server",
                 lambda: "listening on " in procs.latest_log(name) or proc.poll() is not None, timeout=30)
        return proc

    proc = retry_while_port_taken(
        attempt, lambda proc: bool(port) and proc.poll() is not None and "in use" in procs.latest_log(name))
    assert proc.poll() is None, procs.log(name)
    return proc


def sandbox_url(procs: Processes, name: str = "apiserver") -> str:
    """The URL the latest sandbox ``name`` printed (``listening on <url>``)."""
    for line in procs.latest_log(name).splitlines():
        if line.startswith("listening on "):
            return line.removeprefix("listening on ").strip()
    raise AssertionError(f"{name} has not said where it listens:\n{procs.log(name)}")


def announced_url(procs: Processes, name: str, server: str, timeout: float = 30.0) -> str:
    """The URL the latest process ``name`` announced for its ``server`` (the JSON log line ``listening`` with
    ``server`` and ``url`` that each of our programs writes once bound: ``metrics``, ``probes``, ``edge`` for sedna-gm,
    ``worker-api``, ``probes`` for sedna-lc); waits for it, failing with the log when the process exits first."""
    entry = _wait_announced(procs, name, server, timeout)
    assert entry is not None, f"{name} exited before announcing its {server} address:\n{procs.log(name)}"
    return str(entry["url"])


def _wait_announced(procs: Processes, name: str, server: str, timeout: float) -> dict[str, Any] | None:
    """The ``listening`` line of the latest ``name`` for ``server``, once written; None if the process exits first."""
    from .wait import wait_for

    proc = procs.procs[name]
    found = wait_for(f"{name} to announce its {server} address",
                     lambda: log_event(procs.latest_log(name), "listening", server=server) or proc.poll() is not None,
                     timeout=timeout)
    return found if isinstance(found, dict) else None


def address_of(url: str) -> str:
    """``host:port`` of a URL (what ``--gm-address`` takes)."""
    return url.split("://", 1)[1].rstrip("/")


def gm_edge_address(procs: Processes, name: str = "gm", timeout: float = 30.0) -> str:
    """``host:port`` of the edge link the GM ``name`` announced (once it leads and its caches synced): an LC's
    ``--gm-address``."""
    return address_of(announced_url(procs, name, "edge", timeout))


BIND_ATTEMPTS = 5
T = TypeVar("T")


def retry_while_port_taken(attempt: Callable[[], T], port_taken: Callable[[T], bool]) -> T:
    """``attempt()`` (start a program and wait until it listens or exits) again while ``port_taken`` says it could
    not bind because another process holds the port, at most ``BIND_ATTEMPTS`` times; returns the last result.

    Our programs bind port 0 and announce the port, which no other process can take first. A fixed port is left
    for a program restarted on the address its previous run announced (its peers know it) and for Go Sedna's
    binaries (which cannot announce: they get a port found free a moment before, a new one at each attempt); the
    kernel rarely hands out a port just freed, so a few attempts suffice."""
    for _ in range(BIND_ATTEMPTS - 1):
        result = attempt()
        if not port_taken(result):
            return result
    return attempt()


def _bind_failed(procs: Processes, name: str, proc: subprocess.Popen[bytes], event: str) -> bool:
    """Whether the latest ``name`` exited after logging ``event`` for a port in use."""
    entry = log_event(procs.latest_log(name), event) if proc.poll() is not None else None
    return entry is not None and "in use" in str(entry.get("error", "")).lower()


def start_gm(procs: Processes, name: str, kubeconfig: str | None, *extra: str,
             env: dict[str, str] | None = None, edge_port: int = 0, wait: bool = False,
             timeout: float = 30.0) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``sedna-gm`` with JSON logs, its metrics and probe servers on free ports (port 0, announced); returns
    the process and its metrics URL once announced. Its edge link listens on 127.0.0.1:``edge_port`` (0: a free
    port, ``announced_url(procs, name, "edge")`` once the GM leads and synced); a GM restarted on its previous
    ``edge_port`` is tried again when another process took it. With ``wait``, returns once its ``/readyz`` answers
    200 (and, with an ``edge_port``, its edge link listens) within ``timeout`` seconds, failing with its log if it
    exited first."""
    source = ["--kubeconfig", kubeconfig] if kubeconfig else []
    argv = ["-m", "globalmanager.app", *source, "--metrics-address", "127.0.0.1:0", "--health-probe-address",
            "127.0.0.1:0", "--websocket-address", f"127.0.0.1:{edge_port}", "--log-format", "json", *extra]

    def attempt() -> tuple[subprocess.Popen[bytes], str]:
        proc = procs.start(name, argv, env=env)
        url = announced_url(procs, name, "metrics", timeout)
        if wait:
            _wait_gm_ready(procs, name, proc, url, edge_port, timeout)
        return proc, url

    proc, url = retry_while_port_taken(
        attempt, lambda started: bool(edge_port) and _bind_failed(procs, name, started[0], "cannot start the edge server"))
    assert not wait or proc.poll() is None, procs.log(name)
    return proc, url


def _wait_gm_ready(procs: Processes, name: str, proc: subprocess.Popen[bytes], url: str, edge_port: int,
                   timeout: float) -> None:
    """Until ``/readyz`` answers 200 and, where the edge port was given, the edge link listens (or the GM exits)."""
    from .wait import wait_for

    wait_for("sedna-gm ready", lambda: http_get(url + "/readyz")[0] == 200 or proc.poll() is not None,
             timeout=timeout)
    if edge_port:
        _wait_announced(procs, name, "edge", timeout)


def start_lc(procs: Processes, name: str, gm_address: str, rootfs: Path, *extra: str, port: int = 0,
             env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``sedna-lc`` for node ``name`` with JSON logs, its rootfs (and so its database) at ``rootfs``, its probes
    on a free port and its worker API on 127.0.0.1:``port`` (0: a free port); returns the process and the worker
    API's URL once announced. Starting a name again (same ``rootfs``) restarts that LC on its database; one restarted
    on its previous ``port`` (its workers know that address) is tried again when another process took it."""
    rootfs.mkdir(parents=True, exist_ok=True)
    argv = ["-m", "localcontroller.app", "--gm-address", gm_address, "--node-name", name, "--rootfs", str(rootfs),
            "--bind-address", f"127.0.0.1:{port}", "--health-probe-address", "127.0.0.1:0", "--log-format", "json",
            *extra]

    def attempt() -> subprocess.Popen[bytes]:
        proc = procs.start(name, argv, env=env)
        _wait_announced(procs, name, "worker-api", 30.0)
        return proc

    proc = retry_while_port_taken(
        attempt, lambda proc: bool(port) and _bind_failed(procs, name, proc, "cannot start the worker API server"))
    return proc, announced_url(procs, name, "worker-api")


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
