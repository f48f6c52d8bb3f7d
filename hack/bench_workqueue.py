"""Benchmark: workqueue.RateLimitingQueue as sedna-gm runs it against the stdlib queue.Queue.

Equal work on both sides: every run moves ITEMS distinct keys through the queue (add->get->forget->done, as
the reconcile runner (reconcile.Controller) forgets a key's rate-limit history after every successful sync; stdlib
put->get->task_done), so our queue collapses nothing and both process exactly ITEMS items (checked). The unit is
processed items per second.

Configuration users run: a named RateLimitingQueue with the default controller rate limiter and the global
PrometheusMetricsProvider (what sedna-gm sets up), under the GC policy sedna-gm calls at start-up
(``informers.gc_policy.tune_gc_for_controllers``). An unnamed queue (no metrics) is reported too, for reference.

Paired rounds: each round runs every side of a pattern back to back (the order alternates between rounds) and takes
the ratio within the round, by wall-clock time (the rate) and by the process's CPU time (``_cpu``: steadier on a
machine shared with other jobs); all rounds and the medians are printed as one JSON document.
Run from the repository root: ``python hack/bench_workqueue.py``. Knobs: BENCH_ITEMS, BENCH_ROUNDS.
"""

from __future__ import annotations

import gc
import json
import os
import queue as stdlib_queue
import statistics
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from prometheus_client import CollectorRegistry  # noqa: E402

from informers.gc_policy import CONTROLLER_GC_THRESHOLDS, tune_gc_for_controllers  # noqa: E402
from workqueue import PrometheusMetricsProvider, RateLimitingQueue, set_provider  # noqa: E402

ITEMS = int(os.environ.get("BENCH_ITEMS", "50000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))
KEYS = [f"default/object-{i}" for i in range(ITEMS)]
QUEUE_NAME = "bench"

Run = Callable[[], tuple[float, int]]  # -> (seconds, items processed)


def named_queue() -> RateLimitingQueue:
    return RateLimitingQueue(name=QUEUE_NAME)  # records through the global provider, as sedna-gm's queues do


def unnamed_queue() -> RateLimitingQueue:
    return RateLimitingQueue()


def ours_single(make: Callable[[], RateLimitingQueue]) -> tuple[float, int]:
    q = make()
    add, get, forget, done = q.add, q.get, q.forget, q.done
    n = 0
    start = time.perf_counter()
    for key in KEYS:
        add(key)
        item, _ = get()
        forget(item)  # the reconcile runner (reconcile.Controller) after a successful sync
        done(item)
        n += 1
    elapsed = time.perf_counter() - start
    q.shut_down()
    return elapsed, n


def stdlib_single() -> tuple[float, int]:
    q: stdlib_queue.Queue[Any] = stdlib_queue.Queue()
    put, get, task_done = q.put, q.get, q.task_done
    n = 0
    start = time.perf_counter()
    for key in KEYS:
        put(key)
        get()
        task_done()
        n += 1
    return time.perf_counter() - start, n


def ours_workers(make: Callable[[], RateLimitingQueue], workers: int) -> tuple[float, int]:
    q = make()
    processed = [0] * workers

    def work(idx: int) -> None:
        get, forget, done = q.get, q.forget, q.done
        n = 0
        while True:
            item, shutdown = get()
            if shutdown:
                break
            forget(item)  # the reconcile runner (reconcile.Controller) after a successful sync
            done(item)
            n += 1
        processed[idx] = n

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    start = time.perf_counter()
    add = q.add
    for key in KEYS:
        add(key)
    q.shut_down()  # workers drain what is queued, then see shutdown
    for t in threads:
        t.join()
    return time.perf_counter() - start, sum(processed)


def stdlib_workers(workers: int) -> tuple[float, int]:
    q: stdlib_queue.Queue[Any] = stdlib_queue.Queue()
    processed = [0] * workers
    sentinel = object()

    def work(idx: int) -> None:
        get, task_done = q.get, q.task_done
        n = 0
        while True:
            item = get()
            task_done()
            if item is sentinel:
                break
            n += 1
        processed[idx] = n

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    start = time.perf_counter()
    put = q.put
    for key in KEYS:
        put(key)
    for _ in range(workers):
        put(sentinel)
    for t in threads:
        t.join()
    return time.perf_counter() - start, sum(processed)


def patterns() -> dict[str, dict[str, Run]]:
    return {
        "single_thread": {
            "named_prometheus": lambda: ours_single(named_queue),
            "unnamed": lambda: ours_single(unnamed_queue),
            "stdlib": stdlib_single,
        },
        "producer_2_workers": {
            "named_prometheus": lambda: ours_workers(named_queue, 2),
            "unnamed": lambda: ours_workers(unnamed_queue, 2),
            "stdlib": lambda: stdlib_workers(2),
        },
        "producer_4_workers": {
            "named_prometheus": lambda: ours_workers(named_queue, 4),
            "unnamed": lambda: ours_workers(unnamed_queue, 4),
            "stdlib": lambda: stdlib_workers(4),
        },
    }


def measure(run: Run) -> tuple[float, float]:
    """Processed items per second of wall-clock time and per second of the process's CPU time (all threads)."""
    gc.collect()
    cpu = time.process_time()
    elapsed, processed = run()
    cpu = time.process_time() - cpu
    if processed != ITEMS:
        raise RuntimeError(f"processed {processed} of {ITEMS} items: the work is not equal")
    return processed / elapsed, processed / max(cpu, 1e-9)


def main() -> None:
    tune_gc_for_controllers()  # as sedna-gm at start-up
    registry = CollectorRegistry()
    set_provider(PrometheusMetricsProvider(registry))  # as sedna-gm: every named queue records into it
    results: dict[str, Any] = {
        "python": sys.version.split()[0],
        "cpus": len(os.sched_getaffinity(0)),
        "items_per_run": ITEMS,
        "distinct_keys": ITEMS,
        "rounds": ROUNDS,
        "unit": "processed items per second (add->get->forget->done; stdlib put->get->task_done), equal work per run",
        "configuration": {
            "named_prometheus": f"RateLimitingQueue(name={QUEUE_NAME!r}) with the global PrometheusMetricsProvider "
                                "(sedna-gm's queues)",
            "unnamed": "RateLimitingQueue() (records no metrics)",
            "stdlib": "queue.Queue",
            "gc": f"tune_gc_for_controllers(): thresholds {CONTROLLER_GC_THRESHOLDS}, start-up heap frozen (sedna-gm)",
            "pairing": "each round runs all sides back to back, order alternating between rounds; ratios per round",
        },
        "patterns": {},
    }
    for pattern, sides in patterns().items():
        rates: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
        for r in range(ROUNDS):
            order = list(sides) if r % 2 == 0 else list(reversed(sides))
            for side in order:
                rates[side].append(measure(sides[side]))
        med = statistics.median
        entry: dict[str, Any] = {f"{side}_per_sec": round(med(x[0] for x in v)) for side, v in rates.items()}
        for side in ("named_prometheus", "unnamed"):
            for clock, i in (("", 0), ("_cpu", 1)):
                per_round = [a[i] / b[i] for a, b in zip(rates[side], rates["stdlib"], strict=True)]
                entry[f"ratio_{side}_over_stdlib{clock}"] = round(med(per_round), 3)
                entry[f"ratio_{side}_over_stdlib{clock}_per_round"] = [round(x, 3) for x in per_round]
        entry["rounds_per_sec"] = {side: [round(x[0]) for x in v] for side, v in rates.items()}
        entry["rounds_per_cpu_sec"] = {side: [round(x[1]) for x in v] for side, v in rates.items()}
        results["patterns"][pattern] = entry
    results["targets"] = {"ratio_named_prometheus_over_stdlib": ">= 0.7 in every pattern (median of rounds)"}
    results["met"] = all(p["ratio_named_prometheus_over_stdlib"] >= 0.7 for p in results["patterns"].values())
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
