"""Benchmark of ``sedna-gm`` at scale: the sandbox API server process (with its pod simulator) and one ``sedna-gm``
process; N ElasticAIJobs (optionally a mix with JointInferenceServices and FederatedLearningJobs) created over HTTP
and followed until every one is in its expected state.

Run from the repo root: ``python -m hack.bench_gm --jobs 1000 --jobs 10000`` (prints one JSON document; not a test).
Each size runs on a fresh sandbox and a fresh ``sedna-gm`` (its default sync workers per controller unless
``--gm-workers`` says otherwise; a sync waits on the API server most of its time, so workers, not CPU, bound the
GM's sync rate).

Per size:
* ``steady_seconds``: from the first create until every object is in its expected state (ElasticAIJob and
  FederatedLearningJob ``phase=Succeeded`` — their pods run for ``--run-seconds`` —, JointInferenceService last
  condition ``Running``), watched by an informer in this process; ``create_seconds``: the creates alone;
  ``phase_set_seconds``: until every object had a phase (or a condition) at all;
* ``syncs``/``syncs_per_second``: ``sedna_gm_controller_sync_total`` over that time (all controllers, and per
  controller); ``sync_p50/p99_seconds``: from the ``sedna_gm_controller_sync_duration_seconds`` histogram (bucket
  upper bounds, so a p99 of 0.005 means "between 2.5 and 5 ms");
* ``gm_cpu_seconds`` (user+system from ``/proc/<pid>/stat``) and ``gm_cpu_share`` (of one core), the same for the
  sandbox (``sandbox_cpu_*``: which side limits) and this process (``bench_cpu_seconds``: creates and the
  informer); ``load_average_1m`` at the end (other work on the machine); ``gm_rss_mb`` after the run,
  ``gm_idle_rss_mb`` before the first create, ``rss_per_job_kb`` = their difference / N;
* with ``--profile-dir``: a py-spy profile (speedscope JSON) of the GM and of the sandbox over the run.
Once per invocation: ``cache_memory_per_pod`` (``hack.pod_memory``), what sedna-gm's cache transform saves.
And over sizes, when both ran: ``ratio_10k_1k`` = steady seconds at 10,000 / at 1,000, and
``phase_set_ratio_10k_1k`` the same of ``phase_set_seconds``.
Target (issue 29), on a 2-core machine with ``sedna-gm``'s defaults: 10,000 ElasticAIJobs all phased in under 60 s,
``phase_set_ratio_10k_1k`` ≤ 10.5.

The peer (issue 29): ``--peer go`` runs Go Sedna's own ``sedna-gm`` (``../shared/go-sedna`` or
``$SEDNA_GO_BIN_DIR``; the run reports ``skipped`` with the reason where it is absent) on the same sandbox and the same
work, ``--peer both`` runs ours then Go's on fresh sandboxes per round and adds ``paired`` (ours / Go ratios of
time, CPU per job and peak RSS). Go Sedna has no ElasticAIJob: ``--kind FederatedLearningJob``,
``JointInferenceService`` or ``IncrementalLearningJob``. Go's client-go keeps 5 QPS, so its runs are capped
(``--go-timeout``) and report how far they got (``in_expected_state``). ``--gm-workers 0`` (the default) runs
sedna-gm as users do, with its defaults.

IncrementalLearningJobs run with real edge halves (``hack.bench_gm_edge``): our ``sedna-lc`` on ``edge-1`` (the
Dataset, an index of 20 samples: every job's train trigger fires at its LC's first check, every second) and on
``edge-2`` (every job's workers), connected to whichever GM runs, and the worker simulator playing the pods. Train and
eval workers work ``--run-seconds``, 5 s by default for this kind, as real ones take a while: Go's GM sends the job
to the worker's node only once it saw the pod Running, and completes a stage without the model when the pod ended
first, so with 1 s workers hardly any of its jobs gets past ``Eval/Waiting``. A job is done after one round,
``Deploy/Completed``; ``phase_set_seconds`` is then the time until every job had its first condition,
``Train/Waiting`` (the GM's own work). Added per run: ``edge_cpu_seconds``/``edge_cpu_share`` and
``edge_peak_rss_mb`` of the two LCs and the worker simulator (they share the machine), ``condition_counts`` (jobs
with each ``stage/type`` condition), ``last_conditions`` (where each job is at the end: an unfinished Go run shows
where its jobs wait) and ``full_rounds`` (jobs with ``Train``/``Eval`` ``Running`` and ``Completed`` and
``Deploy/Completed``, none ``Failed``: a stage whose pod the GM never saw Running, so that it completed it from the
pod's end and the worker's report was lost, has no ``Running``).
``--no-edge`` runs them without LCs, done at ``Train/Waiting``.

``run_size`` is the code path other benchmarks reuse (``hack.bench_sandbox`` runs it with 200 jobs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hack import bench_gm_edge as il_edge  # noqa: E402
from hack._procs import (  # noqa: E402
    announced,
    cpu_seconds,
    free_port,
    memory_mb,
    start_gm,
    start_go_gm,
    start_sandbox,
    stop_processes,
)
from hack.bench_gm_kinds import (  # noqa: E402
    EDGE_KINDS,
    GO_KINDS,
    IL_WORK_SECONDS,
    KINDS,
    NS,
    plan,
    referenced_objects,
)


# -- measurements ------------------------------------------------------------------------------------------------------
def rss_mb(pid: int) -> float:
    return memory_mb(pid)[0]


@dataclass
class GMMetrics:
    """The GM's sync counters and duration histogram at one moment."""

    syncs: dict[str, float] = field(default_factory=dict)  # controller → syncs (every result)
    buckets: dict[float, float] = field(default_factory=dict)  # upper bound → cumulative count (all controllers)

    @classmethod
    def scrape(cls, url: str) -> GMMetrics:
        from prometheus_client.parser import text_string_to_metric_families

        with urllib.request.urlopen(url + "/metrics", timeout=10) as resp:
            text = resp.read().decode()
        out = cls()
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == "sedna_gm_controller_sync_total":
                    controller = sample.labels["controller"]
                    out.syncs[controller] = out.syncs.get(controller, 0.0) + sample.value
                elif sample.name == "sedna_gm_controller_sync_duration_seconds_bucket":
                    bound = float(sample.labels["le"])
                    out.buckets[bound] = out.buckets.get(bound, 0.0) + sample.value
        return out


def quantile(before: GMMetrics, after: GMMetrics, q: float) -> float | None:
    """The upper bound of the histogram bucket holding quantile ``q`` of the syncs between the two scrapes."""
    bounds = sorted(after.buckets)
    counts = [after.buckets[b] - before.buckets.get(b, 0.0) for b in bounds]
    if not counts or counts[-1] <= 0:
        return None
    for bound, count in zip(bounds, counts, strict=True):
        if count >= q * counts[-1]:
            return bound
    return bounds[-1]


class Profiler:
    """``py-spy record`` of a process, written as speedscope JSON; nothing when py-spy is missing. ``gil``: only
    samples of the thread holding the GIL (where the CPU goes), else every thread's (where the time goes)."""

    def __init__(self, pid: int, out: Path, gil: bool = True) -> None:
        self.out = out
        exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        self.proc = None
        if Path(exe).exists():
            self.proc = subprocess.Popen([exe, "record", "--pid", str(pid), "--format", "speedscope", "--rate", "50",
                                          "--output", str(out), "--nonblocking", *(["--gil"] if gil else [])],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> str | None:
        if self.proc is None:
            return None
        self.proc.send_signal(2)  # SIGINT: py-spy writes the profile and exits
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        return str(self.out) if self.out.exists() else None


Check = Callable[[Mapping[str, Any]], bool]


class StateWatch:
    """An informer per kind in this process, counting the objects in their expected state (``done``: per kind,
    default ``KINDS[kind].done``) and keeping the latest copy of each (``latest``, read-only)."""

    def __init__(self, cs: Any, counts: Mapping[str, int], done: Mapping[str, Check] | None = None) -> None:
        from apis import resources as r
        from informers import ResourceEventHandlerFuncs, SharedInformerFactory

        self.expected = sum(counts.values())
        self.done: set[tuple[str, str]] = set()
        self.done_at = 0.0
        self.phased: set[tuple[str, str]] = set()  # objects with a phase (or a condition) at all
        self.all_phased_at = 0.0
        self.latest: dict[tuple[str, str], Mapping[str, Any]] = {}
        self.cond = threading.Condition()
        self.factory = SharedInformerFactory(cs, namespace=NS)
        for kind in counts:
            check = (done or {}).get(kind, KINDS[kind].done)

            def seen(obj: Any, kind: str = kind, check: Check = check) -> None:
                if not isinstance(obj, Mapping):
                    return
                key = (kind, obj["metadata"]["name"])
                status = obj.get("status") or {}
                with self.cond:
                    self.latest[key] = obj
                    if key not in self.phased and (status.get("phase") or status.get("conditions")):
                        self.phased.add(key)
                        if len(self.phased) == self.expected:
                            self.all_phased_at = time.time()
                    if key not in self.done and check(obj):
                        self.done.add(key)
                        self.done_at = time.time()
                        self.cond.notify_all()

            gvr = r.lookup_kind(KINDS[kind].api_version, kind).gvr
            self.factory.for_resource(gvr).informer().add_event_handler(
                ResourceEventHandlerFuncs(add_func=seen, update_func=lambda _old, new, seen=seen: seen(new)))

    def start(self, stop: threading.Event) -> None:
        self.factory.start(stop)
        self.factory.wait_for_cache_sync(stop)

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.done) < self.expected:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(min(left, 1.0))
        return True


def run_size(total: int, *, mix: bool = False, run_seconds: float = 1.0, create_threads: int = 8,
             workers: Mapping[str, int] | None = None, resync: float = 30.0, timeout: float = 600.0,
             profile_dir: Path | None = None, profile_gil: bool = True,
             sandbox_args: list[str] | None = None, kind: str = "ElasticAIJob", peer: str = "ours",
             edge: bool | None = None) -> dict[str, Any]:
    """One fresh sandbox and GM (``peer``: ``ours``, sedna-gm; ``go``, Go Sedna's); ``total`` objects created and
    followed to steady state (module doc). Go's GM has no metrics endpoint: its sync figures are ``None``. ``edge``
    (default: for ``EDGE_KINDS``): our LCs and the worker simulator run the edge side (``hack.bench_gm_edge``)."""
    from apis.clientset import Clientset
    from globalmanager.config import DEFAULT_MAX_WORKERS, DEFAULT_WORKERS

    counts = plan(total, mix, kind)
    edge = (not mix and kind in EDGE_KINDS) if edge is None else edge
    done_at = {} if edge else {"IncrementalLearningJob": il_edge.train_waiting}  # no LC: the GM's own work only
    edge_side: il_edge.EdgeSide | None = None
    children: list[subprocess.Popen[bytes]] = []
    stop = threading.Event()
    with tempfile.TemporaryDirectory(prefix="sedna-bench-gm-") as tmp:
        workdir = Path(tmp)
        try:
            api, kubeconfig = start_sandbox(workdir, list(sandbox_args or []))
            children.append(api)
            cs = Clientset.from_kubeconfig(str(kubeconfig))
            cs.core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
            if set(counts) - {"ElasticAIJob"}:
                for obj in referenced_objects():
                    cs.resource(_gvr_of(obj), NS).create(obj)
            gm_url: str | None = None
            if peer == "go":
                edge_port = free_port()  # Go's GM cannot bind port 0 and say which port it got
                go_gm = start_go_gm(workdir, kubeconfig, edge_port=edge_port)
                if isinstance(go_gm, str):
                    return {"objects": total, "kinds": counts, "peer": peer, "skipped": go_gm}
                gm = go_gm
                edge_address = f"127.0.0.1:{edge_port}"
            else:
                gm, gm_url = start_gm(workdir, kubeconfig,
                                      {"minResyncPeriodSeconds": resync, "workers": dict(workers or {})})
                edge_address = announced(workdir / "gm.log", "edge", gm, 60).removeprefix("ws://")
            children.append(gm)
            if edge:
                edge_side = il_edge.start_edge(workdir, kubeconfig, edge_address)
            watch = StateWatch(cs, counts, done_at)
            watch.start(stop)
            time.sleep(1.0 if peer != "go" else 5.0)  # let the GM settle after its caches synced (Go: no readyz)
            idle_rss = rss_mb(gm.pid)
            before = GMMetrics.scrape(gm_url) if gm_url else GMMetrics()
            gm_cpu0, api_cpu0, own_cpu0 = cpu_seconds(gm.pid), cpu_seconds(api.pid), time.process_time()
            edge_cpu0 = edge_side.cpu_seconds() if edge_side else {}
            profilers = []
            if profile_dir is not None:
                profile_dir.mkdir(parents=True, exist_ok=True)
                tag = f"{total}{'-mix' if mix else ''}"
                profilers = [(name, Profiler(pid, profile_dir / f"{name}-{tag}.speedscope.json", profile_gil))
                             for name, pid in (("gm", gm.pid), ("sandbox", api.pid))]
            objs = [KINDS[kind].build(f"{KINDS[kind].prefix}-{i:05d}", run_seconds)  # kinds interleaved
                    for i in range(max(counts.values())) for kind, n in counts.items() if i < n]

            def create(obj: dict[str, Any]) -> None:
                cs.resource(_gvr_of(obj), NS).create(obj)

            started = time.time()
            with ThreadPoolExecutor(create_threads) as pool:
                list(pool.map(create, objs))
            created = time.time()
            steady = watch.wait(timeout)
            ended = watch.done_at if steady else time.time()
            gm_cpu, api_cpu = cpu_seconds(gm.pid) - gm_cpu0, cpu_seconds(api.pid) - api_cpu0
            own_cpu = time.process_time() - own_cpu0
            edge_cpu = {name: round(cpu - edge_cpu0[name], 2) for name, cpu in edge_side.cpu_seconds().items()} \
                if edge_side else {}
            after = GMMetrics.scrape(gm_url) if gm_url else GMMetrics()
            profiles = {name: p.stop() for name, p in profilers}
            gm_rss, gm_peak_rss = memory_mb(gm.pid)
            elapsed = ended - started
            syncs = {c: after.syncs.get(c, 0.0) - before.syncs.get(c, 0.0) for c in after.syncs}
            syncs = {c: int(v) for c, v in syncs.items() if v}
            result: dict[str, Any] = {
                "objects": total,
                "kinds": counts,
                "peer": peer,
                "run_seconds": run_seconds,
                "edge": "our sedna-lc on " + " and ".join(il_edge.EDGE_NODES) + ", workersim" if edge else None,
                "gm_workers": ("Go's default" if peer == "go" else dict(workers) if workers
                               else f"sedna-gm's defaults ({DEFAULT_WORKERS} per controller, up to {DEFAULT_MAX_WORKERS} under a backlog)"),
                "steady": steady,
                "in_expected_state": len(watch.done),
                "create_seconds": round(created - started, 2),
                "phase_set_seconds": round(watch.all_phased_at - started, 2) if watch.all_phased_at else None,
                "steady_seconds": round(elapsed, 2),
                "objects_per_second": round(total / elapsed, 1) if elapsed > 0 else None,
                "syncs": sum(syncs.values()) if gm_url else None,
                "syncs_by_controller": syncs if gm_url else None,
                "syncs_per_second": round(sum(syncs.values()) / elapsed, 1) if elapsed > 0 and gm_url else None,
                "sync_p50_seconds": quantile(before, after, 0.50),
                "sync_p99_seconds": quantile(before, after, 0.99),
                "gm_cpu_seconds": round(gm_cpu, 2),
                "gm_cpu_share": round(gm_cpu / elapsed, 2) if elapsed > 0 else None,
                "gm_cpu_ms_per_job": round(gm_cpu * 1000 / total, 2),
                "sandbox_cpu_seconds": round(api_cpu, 2),
                "sandbox_cpu_share": round(api_cpu / elapsed, 2) if elapsed > 0 else None,
                "bench_cpu_seconds": round(own_cpu, 2),
                "load_average_1m": round(os.getloadavg()[0], 2),
                "gm_idle_rss_mb": round(idle_rss, 1),
                "gm_rss_mb": round(gm_rss, 1),
                "gm_peak_rss_mb": round(gm_peak_rss, 1),
                "rss_per_job_kb": round((gm_rss - idle_rss) * 1024 / total, 1),
            }
            if edge_side:
                result.update(edge_figures(edge_cpu, edge_side.peak_rss_mb(), elapsed, watch))
            if profiles:
                result["profiles"] = profiles
            if not steady:
                log_name = "go-gm.log" if peer == "go" else "gm.log"
                result["gm_log_tail"] = (workdir / log_name).read_text(errors="replace")[-2000:]
                if edge_side:
                    result["edge_log_tails"] = edge_side.log_tails()
            cs.close()
            return result
        finally:
            stop.set()
            if edge_side:
                edge_side.stop()
            stop_processes(*reversed(children))


def edge_figures(edge_cpu: Mapping[str, float], edge_peak_rss: Mapping[str, float], elapsed: float,
                 watch: StateWatch) -> dict[str, Any]:
    """The edge side's CPU (per process, and their sum's share of one core) and peak RSS, and how many jobs have
    each condition, are at each last condition and went through a whole round (``hack.bench_gm_edge.ROUND``)."""
    return {"edge_cpu_seconds": dict(edge_cpu),
            "edge_cpu_share": round(sum(edge_cpu.values()) / elapsed, 2) if elapsed > 0 else None,
            "edge_peak_rss_mb": dict(edge_peak_rss),
            "condition_counts": il_edge.condition_counts(watch.latest.values()),
            "last_conditions": il_edge.last_conditions(watch.latest.values()),
            "full_rounds": il_edge.full_rounds(watch.latest.values())}


def _gvr_of(obj: Mapping[str, Any]) -> Any:
    from apis import resources as r

    return r.lookup_kind(str(obj["apiVersion"]), str(obj["kind"])).gvr


def machine() -> dict[str, Any]:
    load = os.getloadavg()
    return {"cpus": os.cpu_count(), "python": platform.python_version(), "load_average_1m_at_start": round(load[0], 2)}


def compare(ours: Mapping[str, Any], go: Mapping[str, Any]) -> dict[str, Any]:
    """Ours against Go on one paired round: time (to steady state, and until every object had a phase or a
    condition), CPU per job and peak RSS as ratios ours / Go (Go's figures over the part it finished when it ran out
    of time: ``go_done`` of ``objects``)."""
    def ratio(key: str) -> float | None:
        a, b = ours.get(key), go.get(key)
        return round(a / b, 2) if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else None

    return {"objects": ours["objects"], "go_done": go.get("in_expected_state"), "go_steady": go.get("steady"),
            "steady_seconds": [ours.get("steady_seconds"), go.get("steady_seconds")],
            "time_ratio": ratio("steady_seconds") if go.get("steady") else None,
            "phase_set_ratio": ratio("phase_set_seconds"),  # None unless both had every object phased
            "cpu_per_job_ratio": ratio("gm_cpu_ms_per_job") if go.get("steady") else None,
            "peak_rss_ratio": ratio("gm_peak_rss_mb")}


def main(argv: list[str] | None = None) -> int:
    from globalmanager.config import DEFAULT_MAX_WORKERS, DEFAULT_WORKERS

    p = argparse.ArgumentParser(prog="python -m hack.bench_gm", description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, action="append", help="objects per run (repeatable; default 1000 and 10000)")
    p.add_argument("--kind", choices=sorted(KINDS), default="ElasticAIJob", help="the kind created (ElasticAIJob)")
    p.add_argument("--mix", action="store_true",
                   help="split the objects over ElasticAIJob, JointInferenceService and FederatedLearningJob")
    p.add_argument("--peer", choices=("ours", "go", "both"), default="ours",
                   help="which GM runs: sedna-gm, Go Sedna's (../shared/go-sedna or $SEDNA_GO_BIN_DIR), or both "
                        "in paired rounds on fresh sandboxes (ours first, then Go's, per round)")
    p.add_argument("--rounds", type=int, default=1, help="paired rounds per size (1)")
    p.add_argument("--go-timeout", type=float, default=300.0,
                   help="seconds Go's GM gets per run (300); the run then reports how far it got")
    p.add_argument("--run-seconds", type=float,
                   help="how long the simulated pods run (1; an IncrementalLearningJob's train and eval workers work "
                        f"{IL_WORK_SECONDS:g} s before they report, as real ones take a while: Go's GM loses the "
                        "report of a worker that ends before it saw the pod Running)")
    p.add_argument("--no-edge", action="store_true",
                   help="IncrementalLearningJob without LCs and workersim: done at its first condition Train/Waiting")
    p.add_argument("--create-threads", type=int, default=8, help="parallel creating clients (8)")
    p.add_argument("--gm-workers", type=int, default=0,
                   help=f"sync workers per controller, fixed (0: sedna-gm's defaults, {DEFAULT_WORKERS} growing to "
                        f"{DEFAULT_MAX_WORKERS} under a backlog: what users run)")
    p.add_argument("--resync", type=float, default=30.0, help="sedna-gm's minResyncPeriodSeconds (30, its default)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for steady state per run")
    p.add_argument("--profile-dir", type=Path, help="write py-spy profiles of the GM and the sandbox here")
    p.add_argument("--profile-wall", action="store_true",
                   help="profile every thread (where the time goes), not only the GIL holder (where the CPU goes)")
    args = p.parse_args(argv)
    # SIGTERM ends the run like Ctrl-C: through the finally blocks that stop the sandbox, the GM and the edge processes
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if args.peer != "ours" and (args.mix or args.kind not in GO_KINDS):
        p.error(f"Go's GM runs only {', '.join(GO_KINDS)} (Go Sedna has no ElasticAIJob); pick one with --kind")
    sizes = args.jobs or [1000, 10000]
    workers = {k.controller: args.gm_workers for k in KINDS.values()} if args.gm_workers else {}
    peers = ["ours", "go"] if args.peer == "both" else [args.peer]
    from hack.pod_memory import cache_memory_per_pod

    out: dict[str, Any] = {"machine": machine(), "cache_memory_per_pod": cache_memory_per_pod(), "runs": []}
    if args.peer == "both":
        out["paired"] = []
    for n in sizes:
        for _ in range(args.rounds):
            pair: dict[str, dict[str, Any]] = {}
            for peer in peers:
                run_seconds = args.run_seconds or (IL_WORK_SECONDS if args.kind in EDGE_KINDS and not args.no_edge
                                                   and not args.mix else 1.0)
                run = run_size(n, mix=args.mix, run_seconds=run_seconds, create_threads=args.create_threads,
                               workers=workers, resync=args.resync,
                               timeout=args.go_timeout if peer == "go" else args.timeout,
                               profile_dir=args.profile_dir, profile_gil=not args.profile_wall, kind=args.kind,
                               peer=peer, edge=False if args.no_edge else None)
                pair[peer] = run
                out["runs"].append(run)
                print(json.dumps(run), file=sys.stderr, flush=True)
            if len(pair) == 2 and "skipped" not in pair["go"]:
                out["paired"].append(compare(pair["ours"], pair["go"]))
    by_size = {r["objects"]: r for r in out["runs"] if r.get("steady") and r.get("peer") == "ours"}
    if 1000 in by_size and 10000 in by_size:
        for key, measure in (("ratio_10k_1k", "steady_seconds"), ("phase_set_ratio_10k_1k", "phase_set_seconds")):
            if by_size[10000].get(measure) and by_size[1000].get(measure):
                out[key] = round(by_size[10000][measure] / by_size[1000][measure], 2)
    print(json.dumps(out, indent=2))
    return 0 if all(r.get("steady") for r in out["runs"] if r.get("peer") == "ours") else 1


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    sys.exit(main())
