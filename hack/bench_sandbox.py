"""Benchmark of the sandbox API server: its throughput (paired rounds against a baseline revision), and, on request,
per-request latency of three clients and ``sedna-gm`` reconciling ElasticAIJobs on it.

Run from the repo root: ``python -m hack.bench_sandbox --baseline 015b4ef`` (prints one JSON document; not a test).

* ``throughput`` (always): requests per second for ``get`` (one ConfigMap), ``list`` (a namespace of
  ``--list-size`` ConfigMaps of ~1 KiB) and ``patch`` (a merge patch of one ConfigMap), each from ``--connections``
  clients on kept-alive connections for ``--seconds``; and ``watch`` (fan-out): MODIFIED events per second
  delivered to ``--watchers`` watch streams while one client sends ``--watch-events`` patches. Each measurement
  also gives the server's CPU per request (per delivered event for ``watch``). With ``--baseline REV`` the sandbox
  of that git revision (extracted with ``git archive`` into a temporary directory, started with ``PYTHONPATH``
  there) runs beside the current tree's, and every round measures each operation on both, one right after the
  other, the order alternating round by round: the machine is shared, so only such paired rounds compare fairly.
  The output has every round's numbers, the median ratio current / baseline per operation (``speedup``: >1 is
  faster) and ``noise``, the spread (min, max) of the per-round ratios.
* ``latency`` (``--latency``): for raw ``http.client``, our ``apis.clientset.Clientset`` and the official
  ``kubernetes`` client, the median and p99 (milliseconds) of ``--requests`` requests of each kind, sent one after
  the other on a kept-alive connection: ``get``, ``list`` (``--list-size`` ConfigMaps), ``patch`` (a merge patch
  of one ConfigMap's data, sent as ``application/merge-patch+json`` by all three). The clients take turns every 50
  requests, so that they share the server's state.
* ``gm`` (``--gm``): ``hack.bench_gm.run_size`` with ``--jobs`` ElasticAIJobs (200 by default) and sedna-gm's default
  workers: time until every job has a phase (``phase_set_seconds``) and until every job has succeeded
  (``steady_seconds``; its master pod runs ``--run-seconds``), syncs, p99 sync latency, CPU of both processes.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hack._procs import cpu_seconds, start_sandbox, stop_processes  # noqa: E402
from hack.bench_gm import machine, run_size  # noqa: E402
from hack.sandbox_load import CM_PATH, NS  # noqa: E402
from hack.sandbox_throughput import throughput  # noqa: E402

KINDS = ("get", "list", "patch")
BATCH = 50


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return {"median_ms": round(statistics.median(ordered) * 1000, 3), "p99_ms": round(p99 * 1000, 3),
            "requests": len(ordered)}


def raw_client(url: str, token: str) -> dict[str, Callable[[int], Any]]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}

    def send(method: str, path: str, body: bytes | None = None, content_type: str = "") -> bytes:
        h = dict(headers, **({"Content-Type": content_type} if content_type else {}))
        conn.request(method, path, body=body, headers=h)
        resp = conn.getresponse()
        data = resp.read()
        if resp.status >= 300:
            raise RuntimeError(f"{method} {path}: {resp.status} {data[:200]!r}")
        return data

    return {
        "get": lambda i: send("GET", f"{CM_PATH}/cm-0"),
        "list": lambda i: send("GET", CM_PATH),
        "patch": lambda i: send("PATCH", f"{CM_PATH}/cm-0", json.dumps({"data": {"n": str(i)}}).encode(),
                                "application/merge-patch+json"),
    }


def our_client(kubeconfig: Path) -> dict[str, Callable[[int], Any]]:
    from apis.clientset import Clientset

    cms = Clientset.from_kubeconfig(str(kubeconfig)).core_v1().config_maps(NS)
    return {
        "get": lambda i: cms.get("cm-0"),
        "list": lambda i: cms.list(),
        "patch": lambda i: cms.patch("cm-0", {"data": {"n": str(i)}}),
    }


def official_client(kubeconfig: Path) -> dict[str, Callable[[int], Any]]:
    import kubernetes

    cfg = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
    api = kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(cfg))
    return {
        "get": lambda i: api.read_namespaced_config_map("cm-0", NS),
        "list": lambda i: api.list_namespaced_config_map(NS),
        # merge patch, as the other two send (the client would pick its own patch type otherwise)
        "patch": lambda i: api.patch_namespaced_config_map("cm-0", NS, {"data": {"n": str(i)}},
                                                           _content_type="application/merge-patch+json"),
    }


def latency(requests: int, list_size: int) -> dict[str, Any]:
    """Start a sandbox (no pod simulator), fill it, and time the three clients' requests."""
    from apis.clientset import Clientset

    with tempfile.TemporaryDirectory(prefix="sedna-bench-sandbox-") as tmp:
        api, kubeconfig = start_sandbox(Path(tmp), ["--no-kubelet"])
        try:
            setup = Clientset.from_kubeconfig(str(kubeconfig))
            setup.core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
            for i in range(list_size):
                setup.core_v1().config_maps(NS).create({"apiVersion": "v1", "kind": "ConfigMap",
                                                        "metadata": {"name": f"cm-{i}", "namespace": NS},
                                                        "data": {"n": "0"}})
            import yaml

            user = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]
            clients = {"raw_http_client": raw_client(setup.host, user.get("token", "")),
                       "our_clientset": our_client(kubeconfig), "official_kubernetes": official_client(kubeconfig)}
            times: dict[str, dict[str, list[float]]] = {c: {k: [] for k in KINDS} for c in clients}
            for kind in KINDS:
                for ops in clients.values():  # warm up every connection
                    ops[kind](0)
            cpu0 = cpu_seconds(api.pid)
            for start in range(0, requests, BATCH):
                for kind in KINDS:
                    for name, ops in clients.items():
                        call, out = ops[kind], times[name][kind]
                        for i in range(start, min(requests, start + BATCH)):
                            t0 = time.perf_counter()
                            call(i)
                            out.append(time.perf_counter() - t0)
            server_cpu = cpu_seconds(api.pid) - cpu0
            setup.close()
            total = requests * len(KINDS) * len(clients)
            return {"list_size": list_size,
                    "server_cpu_ms_per_request": round(server_cpu * 1000 / total, 3),
                    **{name: {kind: summary(samples) for kind, samples in per.items()} for name, per in times.items()}}
        finally:
            stop_processes(api)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hack.bench_sandbox", description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", metavar="REV", help="git revision whose sandbox the current tree is compared with")
    p.add_argument("--rounds", type=int, default=5, help="paired rounds (5)")
    p.add_argument("--seconds", type=float, default=1.0, help="seconds of load per operation and server (1)")
    p.add_argument("--connections", type=int, default=4, help="concurrent clients of get/list/patch (4)")
    p.add_argument("--watchers", type=int, default=20, help="watch streams of the fan-out (20)")
    p.add_argument("--watch-events", type=int, default=200, help="patches the watchers hear of (200)")
    p.add_argument("--list-size", type=int, default=50, help="ConfigMaps in the listed namespace (50)")
    p.add_argument("--latency", action="store_true", help="also time single requests of three clients")
    p.add_argument("--requests", type=int, default=1000, help="latency: requests per client and kind (1000)")
    p.add_argument("--gm", action="store_true", help="also run sedna-gm on --jobs ElasticAIJobs")
    p.add_argument("--jobs", type=int, default=200, help="gm: ElasticAIJobs sedna-gm reconciles (200)")
    p.add_argument("--run-seconds", type=float, default=1.0, help="gm: how long each master pod runs (1)")
    args = p.parse_args(argv)
    for name in ("rounds", "connections", "watchers", "watch_events", "list_size", "requests", "jobs"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if not args.seconds > 0:
        p.error("--seconds must be positive")
    out: dict[str, Any] = {"machine": machine()}
    out["throughput"] = throughput(args)
    if args.latency:
        out["latency"] = latency(args.requests, args.list_size)
    ok = True
    if args.gm:
        out["gm"] = run_size(args.jobs, run_seconds=args.run_seconds)
        ok = bool(out["gm"]["steady"])
    print(json.dumps(out, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    sys.exit(main())
