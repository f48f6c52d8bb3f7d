"""Benchmark of the LC's dataset counting (issue 26 item 5): a 1 GB index file counted by the LC's dataset manager,
and a 3-line Dataset created a second later.

Run from the repo root: ``python -m hack.bench_dataset_count`` (prints one JSON document; not a test). Options:
``--size-mb 1024`` (the big index), ``--naive-size-mb 64`` (the naive path is measured on a smaller file: at 1 GB it
would need gigabytes), ``--keep`` (keep the files). The files go to a temporary directory, removed at the end.

Each measurement runs in its own child process (a fresh interpreter: its peak RSS is the counting's):
* ``manager``: the LC's ``DatasetManager`` (its threads, the real local storage); the big Dataset is inserted, the
  small one a second later; ``small_first_count_seconds`` is from the small insert to its report (target < 2 s),
  ``big_count_seconds`` from the big insert to its report, ``peak_rss_mb`` the process's peak (target < 100 MB),
  ``baseline_rss_mb`` its RSS after the imports, ``probe_max_delay_ms`` the worst delay of a thread that wakes every
  10 ms meanwhile (how long other work, like ``/healthz``, can wait); then the big file grows by 1,000 lines and
  ``append_recount_seconds`` is its next count;
* ``naive``: the former path (every line read into a list, one thread for all Datasets: the small one waits for the
  big one), on ``--naive-size-mb``.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hack._procs import child_env  # noqa: E402

NS = "default"
LINE = b"img/%08d.jpg\n"  # 17 bytes: 1 GB is about 63 M lines (the index: 59.7 M)


def write_index(path: Path, size_mb: int) -> int:
    """A txt index of about ``size_mb`` MiB; returns its line count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    per_block = 40_000
    lines = 0
    target = size_mb * 1024 * 1024
    with open(path, "wb") as fh:
        while fh.tell() < target:
            fh.write(b"".join(LINE % (lines + i) for i in range(per_block)))
            lines += per_block
    return lines


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Probe:
    """A thread waking every 10 ms; ``max_delay_ms`` is its worst lateness."""

    def __init__(self) -> None:
        self.max_delay_ms = 0.0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            start = time.perf_counter()
            time.sleep(0.01)
            self.max_delay_ms = max(self.max_delay_ms, (time.perf_counter() - start - 0.01) * 1000)

    def close(self) -> float:
        self.stop.set()
        self.thread.join()
        return round(self.max_delay_ms, 1)


def dataset(name: str, url: str) -> dict[str, Any]:
    return {"kind": "Dataset", "metadata": {"namespace": NS, "name": name, "uid": f"uid-{name}"},
            "spec": {"url": url, "format": "txt", "nodeName": "edge-1"}}


def child_manager(rootfs: Path) -> dict[str, Any]:
    from localcontroller.config import LCConfig
    from localcontroller.managers.base import ManagerContext
    from localcontroller.managers.dataset import DatasetManager
    from localcontroller.store import Store

    baseline = rss_mb()
    reported: dict[str, tuple[float, int]] = {}
    arrived = threading.Condition()

    def report(namespace: str, kind: str, name: str, content: dict[str, Any], **_: Any) -> None:
        with arrived:
            reported[name] = (time.perf_counter(), content["numberOfSamples"])
            arrived.notify_all()

    def wait_report(name: str, after: float) -> tuple[float, int]:
        with arrived:
            arrived.wait_for(lambda: name in reported and reported[name][0] >= after, timeout=600)
            return reported[name]

    store = Store(str(rootfs.parent / "bench-lc.db"))
    manager = DatasetManager(ManagerContext(LCConfig(rootfs=str(rootfs), dataset_check_period=3600), store, report))
    stop = threading.Event()
    manager.start(stop)
    probe = Probe()
    big_inserted = time.perf_counter()
    manager.insert(dataset("big", "/data/big.txt"))
    time.sleep(1.0)  # "created a second later"
    small_inserted = time.perf_counter()
    manager.insert(dataset("small", "/data/small.txt"))
    small_at, small_count = wait_report("small", small_inserted)
    big_at, big_count = wait_report("big", big_inserted)
    probe_delay = probe.close()
    with open(rootfs / "data/big.txt", "ab") as fh:
        fh.write(b"".join(LINE % i for i in range(1000)))
    recount_started = time.perf_counter()
    recounted = manager.check(f"{NS}/big")
    recount_seconds = time.perf_counter() - recount_started
    stop.set()
    store.close()
    return {
        "big_count": big_count, "big_count_seconds": round(big_at - big_inserted, 2),
        "small_count": small_count, "small_first_count_seconds": round(small_at - small_inserted, 3),
        "append_recount": recounted, "append_recount_seconds": round(recount_seconds, 3),
        "baseline_rss_mb": round(baseline, 1), "peak_rss_mb": round(peak_rss_mb(), 1),
        "probe_max_delay_ms": probe_delay,
    }


def child_naive(rootfs: Path) -> dict[str, Any]:
    from localcontroller.managers.dataset import parse_samples
    from localcontroller.storage import Storage

    baseline = rss_mb()
    storage = Storage(rootfs)
    started = time.perf_counter()
    # the former monitor: one thread counts every Dataset in turn, each file read into a list of lines
    big = len(parse_samples(storage.iter_lines("/data/naive.txt"), "txt")[1])
    big_seconds = time.perf_counter() - started
    small_inserted = started + 1.0  # inserted a second after the big one: counted once the big count is done
    small = len(parse_samples(storage.iter_lines("/data/small.txt"), "txt")[1])
    small_at = time.perf_counter()
    return {
        "big_count": big, "big_count_seconds": round(big_seconds, 2), "small_count": small,
        "small_first_count_seconds": round(max(small_at - small_inserted, 0.0), 3),
        "baseline_rss_mb": round(baseline, 1), "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def run_child(mode: str, rootfs: Path) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "hack.bench_dataset_count", "--child", mode, "--rootfs", str(rootfs)],
                         cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"{mode} child failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--naive-size-mb", type=int, default=64)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--child", choices=["manager", "naive"], help=argparse.SUPPRESS)
    parser.add_argument("--rootfs", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        from apis.logs import configure_process_logging

        configure_process_logging("error", "json")  # errors only, on stderr: stdout is the JSON result
        result = child_manager(args.rootfs) if args.child == "manager" else child_naive(args.rootfs)
        print(json.dumps(result))
        return 0

    tmp = Path(tempfile.mkdtemp(prefix="bench-dataset-"))
    try:
        rootfs = tmp / "rootfs"
        started = time.perf_counter()
        big_lines = write_index(rootfs / "data/big.txt", args.size_mb)
        naive_lines = write_index(rootfs / "data/naive.txt", args.naive_size_mb)
        (rootfs / "data/small.txt").write_bytes(b"a.jpg\nb.jpg\nc.jpg\n")
        generated = time.perf_counter() - started
        manager = run_child("manager", rootfs)
        naive = run_child("naive", rootfs)
        assert manager["big_count"] == big_lines and manager["small_count"] == 3 and naive["big_count"] == naive_lines
        assert manager["append_recount"] == big_lines + 1000
        result = {
            "index_mb": round((rootfs / "data/big.txt").stat().st_size / 2**20), "index_lines": big_lines,
            "generate_seconds": round(generated, 1),
            "manager": manager,
            "naive": {"index_mb": args.naive_size_mb, "index_lines": naive_lines, **naive,
                      "peak_rss_mb_per_gb_extrapolated": round(
                          naive["baseline_rss_mb"] + (naive["peak_rss_mb"] - naive["baseline_rss_mb"])
                          * 1024 / args.naive_size_mb)},
            "targets": {"peak_rss_under_100_mb": manager["peak_rss_mb"] < 100,
                        "small_first_count_within_2_s": manager["small_first_count_seconds"] < 2.0},
        }
        print(json.dumps(result, indent=2))
        return 0 if all(result["targets"].values()) else 1
    finally:
        if args.keep:
            print(f"files kept in {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
