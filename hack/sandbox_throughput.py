"""The throughput part of ``hack.bench_sandbox``: the current tree's sandbox and, with ``--baseline REV``, that
revision's, measured in paired rounds (see the benchmark's doc)."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hack._procs import REPO, cpu_seconds, start_sandbox, stop_processes
from hack.sandbox_load import LoadResult, RawConnection, request_load, seed, watch_fanout

__all__ = ["OPS", "throughput"]

OPS = ("get", "list", "patch", "watch")


@dataclass
class Server:
    """One running sandbox under test: ``label`` is ``current`` or ``baseline``."""

    label: str
    proc: subprocess.Popen[bytes]
    host: str
    port: int
    token: str

    def measure(self, op: str, args: argparse.Namespace) -> dict[str, float]:
        cpu0 = cpu_seconds(self.proc.pid)
        if op == "watch":
            result: LoadResult = watch_fanout(self.host, self.port, self.token, args.watchers, args.watch_events)
        else:
            result = request_load(self.host, self.port, self.token, op, args.seconds, args.connections)
        cpu = cpu_seconds(self.proc.pid) - cpu0
        return {"per_second": round(result.per_second, 1), "count": result.count,
                "seconds": round(result.seconds, 3),
                "server_cpu_us_each": round(cpu * 1e6 / result.count, 1) if result.count else 0.0}


def extract_revision(rev: str, into: Path) -> str:
    """The source tree of git revision ``rev`` of this repository, written to ``into``; returns the full hash."""
    full = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", f"{rev}^{{commit}}"], check=True,
                          capture_output=True, text=True).stdout.strip()
    archive = subprocess.Popen(["git", "-C", str(REPO), "archive", "--format=tar", full], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(into)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit(f"git archive {rev} failed")
    return full


def start_server(label: str, workdir: Path, tree: Path, list_size: int) -> Server:
    workdir.mkdir(parents=True, exist_ok=True)
    proc, kubeconfig = start_sandbox(workdir, ["--no-kubelet"], tree=tree)
    config = yaml.safe_load(kubeconfig.read_text())
    url = config["clusters"][0]["cluster"]["server"]
    host, _, port = url.removeprefix("http://").rpartition(":")
    server = Server(label, proc, host, int(port), config["users"][0]["user"].get("token", ""))
    conn = RawConnection(server.host, server.port, server.token)
    try:
        seed(conn, list_size)
    finally:
        conn.close()
    return server


def _spread(values: list[float]) -> dict[str, float]:
    return {"min": round(min(values), 3), "max": round(max(values), 3)}


def throughput(args: argparse.Namespace) -> dict[str, Any]:
    """Every round's numbers per server and operation; with a baseline, the median ratios and their spread."""
    with tempfile.TemporaryDirectory(prefix="sedna-bench-sandbox-") as tmp:
        root = Path(tmp)
        servers: list[Server] = []
        out: dict[str, Any] = {"connections": args.connections, "seconds": args.seconds, "watchers": args.watchers,
                               "watch_events": args.watch_events, "list_size": args.list_size}
        try:
            servers.append(start_server("current", root / "current", REPO, args.list_size))
            if args.baseline:
                tree = root / "baseline-tree"
                tree.mkdir()
                out["baseline"] = extract_revision(args.baseline, tree)
                servers.append(start_server("baseline", root / "baseline", tree, args.list_size))
            for server in servers:  # warm-up: imports, caches, first connections
                for op in OPS:
                    server.measure(op, argparse.Namespace(**{**vars(args), "seconds": 0.2, "watch_events": 20}))
            rounds: list[dict[str, dict[str, Any]]] = []
            for r in range(args.rounds):
                order = servers if r % 2 == 0 else servers[::-1]
                rounds.append({op: {s.label: s.measure(op, args) for s in order} for op in OPS})
        finally:
            stop_processes(*(s.proc for s in servers))
    out["rounds"] = rounds
    if args.baseline:
        speedup: dict[str, Any] = {}
        cpu: dict[str, Any] = {}
        noise: dict[str, Any] = {}
        for op in OPS:
            ratios = [rd[op]["current"]["per_second"] / rd[op]["baseline"]["per_second"] for rd in rounds]
            cpu_ratios = [rd[op]["baseline"]["server_cpu_us_each"] / rd[op]["current"]["server_cpu_us_each"]
                          for rd in rounds]
            for rd, ratio, cpu_ratio in zip(rounds, ratios, cpu_ratios, strict=True):
                rd[op]["ratio"] = round(ratio, 3)
                rd[op]["cpu_ratio"] = round(cpu_ratio, 3)
            speedup[op] = round(statistics.median(ratios), 3)
            cpu[op] = round(statistics.median(cpu_ratios), 3)
            noise[op] = {"throughput_ratio": _spread(ratios), "cpu_ratio": _spread(cpu_ratios)}
        out["speedup"] = speedup  # current / baseline requests (events) per second
        out["cpu_speedup"] = cpu  # baseline / current server CPU per request (event)
        out["noise"] = noise
    return out
