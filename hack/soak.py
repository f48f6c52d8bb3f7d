"""Soak: local-up's cluster (``hack.local_up``: the sandbox API server, sedna-gm, an LC on each edge node, the worker
simulator) with the main job learning round after round, and what each process holds as time goes by.

    python -m hack.soak [--minutes 30] [--warmup-minutes 10] [--interval 10] [--workdir DIR] [--out FILE.json]

* The job is local-up's main IncrementalLearningJob (``hack.local_up_il``). Rounds run back to back: whenever it waits
  at Train/Waiting, ``--samples`` new samples are appended to its Dataset's index (enough for the train trigger), and
  the Dataset also grows by ``--churn`` samples every ``--churn-seconds`` whatever the stage.
* The sandbox keeps Events ``--event-ttl`` seconds (120; a cluster's 1 h would make its memory grow for an hour:
  shorter than the warm-up, the soak sees the steady state).
* Every ``--interval`` seconds: each process's resident memory (``VmRSS``), open files (``/proc/<pid>/fd``) and
  threads; the job's round, conditions and size as JSON; the pods and Events stored; the load average.
* At the end (``--minutes`` elapsed, SIGTERM or Ctrl-C): ``--out`` (JSON: the samples; per process the RSS slope
  after the warm-up in MB per 10 minutes, least squares, with its first and last RSS and the most open files and
  threads; the rounds done; the job's size at the end) and, when matplotlib is installed (``pip install -e
  '.[soak]'``), a plot beside it (``.png``: each process's RSS, the job's size).
Exit 0 when every process ran to the end and exited 0, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from apis.sedna.constants import condition_offset
from apis.signals import SignalWatcher

from ._procs import STOP, Stopped, pause, proc_status
from .local_up import Cluster, StartFailed, say, start_cluster
from .local_up_il import FIRST, NS, create_job

MIB = 1024 * 1024


@dataclass
class Soak:
    """What the soak measured so far (``samples``), and the Dataset it grows."""

    cs: Any
    job: str
    index: Path
    samples: list[dict[str, Any]] = field(default_factory=list)
    next_sample: int = FIRST  # the number of the next sample appended to the index
    fed_at: int = -1  # the condition count at which the job was last given its round's samples

    def append_samples(self, count: int) -> None:
        with open(self.index, "a", encoding="utf-8") as fh:
            fh.writelines(f"images/{i}.jpg\n" for i in range(self.next_sample, self.next_sample + count))
        self.next_sample += count

    def job_status(self) -> tuple[dict[str, Any], int]:
        """The job's status and its size as JSON."""
        job = self.cs.sedna_v1alpha1().incremental_learning_jobs(NS).get(self.job)
        return job.get("status") or {}, len(orjson.dumps(job))

    def feed(self, samples: int) -> None:
        """At a round's Train/Waiting (each once): the samples that make its train trigger fire."""
        status, _ = self.job_status()
        conditions = status.get("conditions") or []
        count = condition_offset(status) + len(conditions)
        last = conditions[-1] if conditions else {}
        if (last.get("stage"), last.get("type")) == ("Train", "Waiting") and count != self.fed_at:
            self.append_samples(samples)
            self.fed_at = count


def process_sample(pid: int) -> dict[str, float]:
    """``rss_mb``, ``open_files``, ``threads`` of ``pid`` (from ``/proc``)."""
    status = proc_status(pid, "VmRSS", "Threads")
    return {"rss_mb": round(status.get("VmRSS", 0) / 1024, 2), "threads": status.get("Threads", 0),
            "open_files": len(os.listdir(f"/proc/{pid}/fd"))}


def take_sample(soak: Soak, cluster: Cluster, started: float) -> dict[str, Any]:
    status, size = soak.job_status()
    core = soak.cs.core_v1()
    return {
        "t": round(time.monotonic() - started, 1),
        "processes": {p.name: process_sample(p.proc.pid) for p in cluster.processes if p.proc.poll() is None},
        "job": {"bytes": size, "round": status.get("round"), "conditions": len(status.get("conditions") or []),
                "pruned_conditions": status.get("prunedConditions") or 0},
        "stored": {"pods": len(core.pods(NS).list()["items"]), "events": len(core.events(NS).list()["items"])},
        "load": [round(x, 2) for x in os.getloadavg()],
        "dataset_samples": soak.next_sample,
    }


def slope_per_10_min(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, MB) points, in MB per 10 minutes (None below two points)."""
    if len(points) < 2:
        return None
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var == 0:
        return None
    return round(sum((t - mean_t) * (v - mean_v) for t, v in points) / var * 600, 2)


def summary(samples: list[dict[str, Any]], warmup: float) -> dict[str, Any]:
    """Per process: the RSS slope after ``warmup`` seconds, first and last RSS after it, the most open files and
    threads; the job at the end."""
    after = [s for s in samples if s["t"] >= warmup]
    names = sorted({name for s in samples for name in s["processes"]})
    per_process = {}
    for name in names:
        points = [(s["t"], s["processes"][name]["rss_mb"]) for s in after if name in s["processes"]]
        every = [s["processes"][name] for s in samples if name in s["processes"]]
        per_process[name] = {
            "rss_slope_mb_per_10_min": slope_per_10_min(points),
            "rss_mb_after_warmup": [points[0][1], points[-1][1]] if points else None,
            "max_open_files": max(int(v["open_files"]) for v in every),
            "max_threads": max(int(v["threads"]) for v in every),
        }
    last = samples[-1] if samples else {}
    return {"minutes": round(last.get("t", 0) / 60, 1), "warmup_minutes": round(warmup / 60, 1),
            "processes": per_process, "job_at_end": last.get("job"), "stored_at_end": last.get("stored"),
            "rounds_done": max(0, int((last.get("job") or {}).get("round") or 1) - 1),
            "load_average": {"mean_1min": round(sum(s["load"][0] for s in samples) / len(samples), 2)}
            if samples else None}


def plot(samples: list[dict[str, Any]], path: Path) -> str:
    """The PNG of each process's RSS and the job's size over time; ``""``, or why there is none."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no plot: matplotlib is not installed (pip install -e '.[soak]')"
    minutes = [s["t"] / 60 for s in samples]
    fig, (rss, job) = plt.subplots(2, 1, figsize=(10, 8), sharex=True)
    for name in sorted({n for s in samples for n in s["processes"]}):
        rss.plot([m for m, s in zip(minutes, samples, strict=True) if name in s["processes"]],
                 [s["processes"][name]["rss_mb"] for s in samples if name in s["processes"]], label=name)
    rss.set_ylabel("RSS (MB)")
    rss.legend(loc="upper left")
    rss.grid(True, alpha=0.3)
    job.plot(minutes, [s["job"]["bytes"] / 1024 for s in samples], label="job object (KB)")
    job.plot(minutes, [s["job"]["round"] or 0 for s in samples], label="round")
    job.set_xlabel("minutes")
    job.legend(loc="upper left")
    job.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return ""


def run(args: argparse.Namespace, workdir: Path) -> int:
    from apis.clientset import Clientset

    cluster: Cluster | None = None
    soak: Soak | None = None
    ok = False
    out = Path(args.out) if args.out else workdir / "soak.json"
    try:
        cluster = start_cluster(workdir, sandbox_args=("--event-ttl", f"{args.event_ttl:g}"))
        cs = Clientset.from_kubeconfig(str(cluster.kubeconfig))
        created = create_job(cs, workdir, 120, say)
        if created is None:
            return 1
        soak = Soak(cs, *created)
        started = next_sample = next_churn = time.monotonic()
        end = started + args.minutes * 60
        say(f"==> soaking for {args.minutes:g} min (a sample of each process every {args.interval:g} s)")
        while time.monotonic() < end:
            now = time.monotonic()
            if now >= next_sample:
                soak.samples.append(take_sample(soak, cluster, started))
                next_sample += args.interval
                s = soak.samples[-1]
                say(f"    {s['t'] / 60:5.1f} min  round {s['job']['round']}  job {s['job']['bytes'] / 1024:.1f} KB  "
                    + "  ".join(f"{n} {p['rss_mb']:.0f} MB" for n, p in s["processes"].items()))
            if now >= next_churn:
                soak.append_samples(args.churn)
                next_churn += args.churn_seconds
            soak.feed(args.samples)
            if any(p.proc.poll() is not None for p in cluster.processes):
                say("==> a process ended during the soak")
                break
            pause(0.5)
        else:
            ok = True
    except StartFailed as exc:
        say(str(exc))
    except Stopped:
        say("==> stopping on a signal")
        ok = True  # what was measured so far is written
    finally:
        if cluster is not None and not cluster.stop():
            ok = False
    if soak is not None and soak.samples:
        report = {"summary": summary(soak.samples, args.warmup_minutes * 60), "samples": soak.samples}
        out.write_text(json.dumps(report, indent=1))
        problem = plot(soak.samples, out.with_suffix(".png"))
        say(json.dumps(report["summary"], indent=1))
        say(f"==> wrote {out}" + (f" ({problem})" if problem else f" and {out.with_suffix('.png')}"))
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hack.soak", description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=30.0, help="how long to soak (30)")
    p.add_argument("--warmup-minutes", type=float, default=10.0,
                   help="not counted in the slopes (10: sedna-gm's Event aggregation cache fills for 10 minutes)")
    p.add_argument("--interval", type=float, default=10.0, help="seconds between samples (10)")
    p.add_argument("--samples", type=int, default=15, help="samples appended at each Train/Waiting (15)")
    p.add_argument("--churn", type=int, default=1, help="samples appended every --churn-seconds (1)")
    p.add_argument("--churn-seconds", type=float, default=20.0, help="(20)")
    p.add_argument("--event-ttl", type=float, default=120.0,
                   help="the sandbox's Event TTL in seconds (120: Events live 1 h on a cluster, so its memory grows "
                        "for an hour; shorter than the warm-up, the soak sees the steady state)")
    p.add_argument("--workdir", help="directory for the kubeconfig and logs (default: a temporary one, kept)")
    p.add_argument("--out", help="the JSON report (default: <workdir>/soak.json; the plot beside it)")
    args = p.parse_args(argv)
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="sedna-soak-"))
    workdir.mkdir(parents=True, exist_ok=True)

    def on_signal(signum: signal.Signals, count: int) -> None:
        if count == 1:
            say(f"==> {signum.name}: stopping the soak")
        STOP.set()

    SignalWatcher(on_signal).install()
    return run(args, workdir)


if __name__ == "__main__":
    sys.exit(main())
