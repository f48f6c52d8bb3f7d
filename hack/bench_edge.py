"""Benchmark of the edge link: one sandbox API server, one ``sedna-gm``, 200 simulated LCs (websocket clients in a
few processes, speaking the wire protocol with ``hello``/``ack``), 2,000 Datasets spread over them.

Run from the repo root: ``python -m hack.bench_edge`` (prints one JSON document; not a test).
Options: ``--nodes 200 --datasets 2000 --processes 4 --report-rounds 3 --update-rate 250``.

Measured:
* ``hold_seconds``: from the first Dataset create until every simulated LC holds all of its Datasets;
* ``update_latency_p50/p99_seconds``: from a Dataset update (annotation ``bench.sedna.io/sent-at``, written just
  before the PATCH; updates paced at ``--update-rate`` per second) to the LC receiving it;
* ``reports_applied_per_second``: every LC reports ``numberOfSamples`` for each of its Datasets, ``--report-rounds``
  times; from the first report sent to the last ack (the GM acks once the status is written), and every Dataset's
  final count checked on the API server;
* ``gm_rss_mb`` / ``gm_peak_rss_mb``: the GM's resident memory at the end / at its peak.
Targets: every message delivered, p99 < 2 s, >= 500 reports/s, GM RSS < 400 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import multiprocessing
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hack._procs import announced, memory_mb, start_gm, start_sandbox, stop_processes, wait_http  # noqa: E402

NS = "default"
SENT_AT = "bench.sedna.io/sent-at"


def node_name(i: int) -> str:
    return f"edge-{i:04d}"


def dataset_name(i: int) -> str:
    return f"ds-{i:05d}"


def frame(namespace: str, kind: str, name: str, operation: str, content: Any, report_id: str = "") -> str:
    header = {"namespace": namespace, "resourceKind": kind, "resourceName": name, "operation": operation}
    if report_id:
        header["id"] = report_id
    return json.dumps({"header": header, "content": base64.b64encode(json.dumps(content).encode()).decode()})


# -- simulated LCs (one process runs many) ---------------------------------------------------------------------------
class SimNode:
    def __init__(self, name: str, expected: set[str]) -> None:
        self.name = name
        self.expected = expected
        self.held: dict[str, float] = {}  # dataset → first receipt
        self.latencies: list[float] = []
        self.seen_updates: set[tuple[str, str]] = set()
        self.acked = 0
        self.last_ack = 0.0
        self.ws: Any = None


async def sim_read(node: SimNode) -> None:
    async for data in node.ws:
        raw = json.loads(data)
        header = raw["header"]
        op = header["operation"]
        now = time.time()
        if op == "ack":
            node.acked += 1
            node.last_ack = now
        elif op == "insert":
            name = header["resourceName"]
            node.held.setdefault(name, now)
            obj = json.loads(base64.b64decode(raw["content"]))
            sent_at = ((obj.get("metadata") or {}).get("annotations") or {}).get(SENT_AT)
            if sent_at and (name, sent_at) not in node.seen_updates:
                node.seen_updates.add((name, sent_at))
                node.latencies.append(now - float(sent_at))


async def sim_main(pipe: Any, url: str, nodes: list[int], total_nodes: int, datasets: int) -> None:
    from websockets.asyncio.client import connect

    sims = []
    for i in nodes:
        expected = {dataset_name(d) for d in range(datasets) if d % total_nodes == i}
        sims.append(SimNode(node_name(i), expected))
    readers = []
    for sim in sims:
        sim.ws = await connect(url, additional_headers={"Node-Name": sim.name}, max_size=None, open_timeout=60)
        await sim.ws.send(frame("", "", "", "hello", {"features": ["ack"]}))
        readers.append(asyncio.create_task(sim_read(sim)))
    loop = asyncio.get_running_loop()
    pipe.send(("connected", len(sims)))
    while True:
        command, arg = await loop.run_in_executor(None, pipe.recv)
        if command == "wait-held":
            while not all(sim.expected <= sim.held.keys() for sim in sims):
                await asyncio.sleep(0.01)
            pipe.send(("held", max(max(sim.held[n] for n in sim.expected) for sim in sims if sim.expected)))
        elif command == "wait-updates":
            want = sum(len(sim.expected) for sim in sims)
            deadline = time.time() + arg
            while sum(len(sim.latencies) for sim in sims) < want and time.time() < deadline:
                await asyncio.sleep(0.01)
            pipe.send(("latencies", [x for sim in sims for x in sim.latencies]))
        elif command == "report":
            rounds = arg
            first = time.time()
            sent = 0
            for r in range(1, rounds + 1):
                for sim in sims:
                    for name in sorted(sim.expected):
                        sent += 1
                        await sim.ws.send(frame(NS, "Dataset", name, "status", {"numberOfSamples": r},
                                                f"{sim.name}-{sent}"))
            while sum(sim.acked for sim in sims) < sent:
                await asyncio.sleep(0.005)
            pipe.send(("reported", (sent, first, max(sim.last_ack for sim in sims))))
        elif command == "stop":
            for sim in sims:
                await sim.ws.close()
            for task in readers:
                task.cancel()
            pipe.send(("stopped", None))
            return


def sim_process(pipe: Any, url: str, nodes: list[int], total_nodes: int, datasets: int) -> None:
    asyncio.run(sim_main(pipe, url, nodes, total_nodes, datasets))


# -- driver -----------------------------------------------------------------------------------------------------------
def metric(url: str, name: str) -> float:
    """The sum of every series of ``name`` on a Prometheus page (0 when there is none)."""
    total = 0.0
    with urllib.request.urlopen(url, timeout=5) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith((name + " ", name + "{")):
                total += float(line.rsplit(" ", 1)[1])
    return total


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    from apis.clientset import Clientset

    children: list[subprocess.Popen[bytes]] = []
    sims: list[tuple[Any, Any]] = []
    try:
        # the sandbox's default log level (info), as this benchmark has always run it
        api, kubeconfig = start_sandbox(workdir, ["--no-kubelet", "--watch-history", "50000"], log_level="info")
        children.append(api)
        gm, gm_url = start_gm(workdir, kubeconfig, {"minResyncPeriodSeconds": 3600,
                                                    "controllers": ["Dataset", "Model"]})
        children.append(gm)
        edge_url = announced(workdir / "gm.log", "edge", gm, 60)
        wait_http(gm_url + "/metrics", 60, lambda code, body: "sedna_gm_edge_connected_nodes" in body)

        ctx = multiprocessing.get_context("spawn")
        per = -(-args.nodes // args.processes)
        for p in range(args.processes):
            nodes = list(range(p * per, min(args.nodes, (p + 1) * per)))
            if not nodes:
                continue
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=sim_process, args=(child, f"{edge_url}/", nodes, args.nodes,
                                                         args.datasets), daemon=True)
            proc.start()
            sims.append((proc, parent))
        for _, pipe in sims:
            assert pipe.recv()[0] == "connected"
        deadline = time.monotonic() + 60
        while metric(gm_url + "/metrics", "sedna_gm_edge_connected_nodes") < args.nodes:
            if time.monotonic() > deadline:
                raise SystemExit("not every simulated LC connected")
            time.sleep(0.1)

        cs = Clientset.from_kubeconfig(str(kubeconfig))
        client = cs.sedna_v1alpha1().datasets(NS)

        def create(i: int) -> None:
            client.create({"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset",
                           "metadata": {"name": dataset_name(i), "namespace": NS},
                           "spec": {"url": f"/data/{i}.txt", "format": "txt", "nodeName": node_name(i % args.nodes)}})

        started = time.time()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(create, range(args.datasets)))
        created = time.time()
        for _, pipe in sims:
            pipe.send(("wait-held", None))
        held = max(pipe.recv()[1] for _, pipe in sims)

        def update(i: int) -> None:
            client.patch(dataset_name(i), {"metadata": {"annotations": {SENT_AT: repr(time.time())}}})

        interval = 1.0 / args.update_rate if args.update_rate > 0 else 0.0
        update_started = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            futures = []
            for i in range(args.datasets):
                if interval:
                    delay = update_started + i * interval - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                futures.append(pool.submit(update, i))
            for f in futures:
                f.result()
        for _, pipe in sims:
            pipe.send(("wait-updates", 60))
        latencies = [x for _, pipe in sims for x in pipe.recv()[1]]

        for _, pipe in sims:
            pipe.send(("report", args.report_rounds))
        results = [pipe.recv()[1] for _, pipe in sims]
        total = sum(r[0] for r in results)
        duration = max(r[2] for r in results) - min(r[1] for r in results)
        items = client.list()["items"]
        final = sum(1 for d in items if (d.get("status") or {}).get("numberOfSamples") == args.report_rounds)
        rss, peak = (round(mb, 1) for mb in memory_mb(gm.pid))
        rejected = metric(gm_url + "/metrics", "sedna_gm_edge_rejected_frames_total")
        for _, pipe in sims:
            pipe.send(("stop", None))
            pipe.recv()
        cs.close()
        return {
            "nodes": args.nodes,
            "datasets": args.datasets,
            "sim_processes": len(sims),
            "create_seconds": round(created - started, 2),
            "hold_seconds": round(held - started, 2),
            "updates_received": len(latencies),
            "update_rate_per_second": args.update_rate,
            "update_latency_p50_seconds": round(percentile(latencies, 0.50), 4),
            "update_latency_p99_seconds": round(percentile(latencies, 0.99), 4),
            "update_latency_max_seconds": round(max(latencies), 4) if latencies else None,
            "reports_sent": total,
            "reports_acked_seconds": round(duration, 2),
            "reports_applied_per_second": round(total / duration, 1) if duration > 0 else None,
            "datasets_with_final_count": final,
            "rejected_frames": rejected,
            "gm_rss_mb": rss,
            "gm_peak_rss_mb": peak,
            "every_message_delivered": len(latencies) == args.datasets and final == args.datasets,
        }
    finally:
        for proc, _ in sims:
            if proc.is_alive():
                proc.terminate()
        stop_processes(*reversed(children))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hack.bench_edge", description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=200)
    p.add_argument("--datasets", type=int, default=2000)
    p.add_argument("--processes", type=int, default=4, help="processes the simulated LCs are spread over")
    p.add_argument("--report-rounds", type=int, default=3, help="reports per Dataset")
    p.add_argument("--update-rate", type=float, default=250.0, help="Dataset updates per second (0: unpaced)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sedna-bench-edge-") as tmp:
        result = run(args, Path(tmp))
    print(json.dumps(result, indent=2))
    return 0 if result["every_message_delivered"] else 1


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    sys.exit(main())
