"""Benchmark: our informer pipeline against its bounds and against the official client, plus the peers end to end.

In-process sections, all over the same stream of watch-event lines (100,000 events of 3.5 KB over 20,000 pods):

- ``a``: raw ``orjson.loads`` of every line (the decoding floor);
- ``bound``: a plain dict cache updated from the same decoded stream (no queue, no index, no threads, no handler);
- ``b``: our ``SharedIndexInformer`` (Reflector -> DeltaFIFO -> Indexer with the namespace index -> one handler in
  its own thread), fed by a watch that decodes each line as ``apis.http_watch`` does; timed from the first event
  the reflector reads to the last one the handler gets (start-up and the empty initial list are not events);
- ``c``: the official ``kubernetes`` client's watch deserialization (``Watch.unmarshal_event(line, "V1Pod")``, the
  model objects it hands out; no ``to_dict()``); it builds no cache, which favours it.

Every round runs all four on the same lines in the same process under the same GC settings, in alternating order;
every ratio is taken within a round and reported per round with its median, by wall-clock time (the rate) and by the
process's CPU time (``_cpu``: steadier on a machine shared with other jobs). Configurations: ``daemon_gc`` (what
``sedna-gm`` runs: ``tune_gc_for_controllers()``; the headline), ``default_gc`` (Python's thresholds) and
``cache_resident`` (the same stream shape over 200 pods, daemon GC). Then the cache's memory, then
``hack/bench_informer_peers.py`` (ours, the official ``kubernetes.informer``, a kopf operator, a raw floor, each
in its own process against the sandbox API server).

Run from the repo root: ``python -m hack.bench_informer`` (one JSON document). Knobs (environment): BENCH_EVENTS,
BENCH_PODS, BENCH_HOT_PODS, BENCH_ROUNDS (daemon GC; the other configurations run BENCH_OTHER_ROUNDS),
BENCH_OFFICIAL_EVENTS (c on a prefix only, reported), BENCH_CACHE_PODS (memory), BENCH_CPU (pin the in-process
sections to one CPU; the peers then run on the CPUs the process had before),
BENCH_PEERS ("" skips the peers; see hack/bench_informer_peers.py for theirs).
"""

from __future__ import annotations

import gc
import os
import random
import statistics
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import orjson

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from apis.http_watch import parse_event  # noqa: E402
from apis.watch import ListOptions  # noqa: E402
from hack.bench_data import make_pod, make_stream  # noqa: E402
from informers import ListWatch, SharedIndexInformer  # noqa: E402
from informers.gc_policy import CONTROLLER_GC_THRESHOLDS, tune_gc_for_controllers  # noqa: E402
from informers.index import NAMESPACE_INDEX, meta_namespace_index_func  # noqa: E402

EVENTS = int(os.environ.get("BENCH_EVENTS", "100000"))
PODS = int(os.environ.get("BENCH_PODS", "20000"))
HOT_PODS = int(os.environ.get("BENCH_HOT_PODS", "200"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
OTHER_ROUNDS = int(os.environ.get("BENCH_OTHER_ROUNDS", "3"))
OFFICIAL_EVENTS = int(os.environ.get("BENCH_OFFICIAL_EVENTS", "0"))  # 0: the whole stream
CACHE_PODS = int(os.environ.get("BENCH_CACHE_PODS", "50000"))
PIN_CPU = os.environ.get("BENCH_CPU")  # e.g. "0": run the in-process sections on that one CPU (threads inherit it)
PEERS = os.environ.get("BENCH_PEERS")


Rate = tuple[float, float]  # events per second of wall-clock time, and per second of the process's CPU time


def _now() -> Rate:
    return time.perf_counter(), time.process_time()


def _rate(events: int, start: Rate, end: Rate) -> Rate:
    return events / (end[0] - start[0]), events / max(end[1] - start[1], 1e-9)


def bench_raw(lines: list[bytes]) -> Rate:
    loads = orjson.loads
    t0 = _now()
    for line in lines:
        loads(line)
    return _rate(len(lines), t0, _now())


def bench_dict_cache(lines: list[bytes]) -> Rate:
    """The bound of any cache: orjson + one plain dict keyed by namespace/name (no queue, no threads)."""
    loads = orjson.loads
    cache: dict[str, Any] = {}
    t0 = _now()
    for line in lines:
        ev = loads(line)
        obj = ev["object"]
        md = obj["metadata"]
        key = f"{md['namespace']}/{md['name']}"
        if ev["type"] == "DELETED":
            cache.pop(key, None)
        else:
            cache[key] = obj
    return _rate(len(lines), t0, _now())


class _LineWatch:
    """A watch over pre-serialized event lines, each decoded as it is read by ``apis.http_watch.parse_event`` (what
    the real watch does per line); the first line is read once ``gate`` is set, and when is recorded."""

    def __init__(self, lines: list[bytes], gate: threading.Event | None = None) -> None:
        self._lines = lines
        self._stopped = threading.Event()
        self.stop_requested = False
        self._gate = gate
        self.first_read: Rate | None = None

    def __iter__(self):  # type: ignore[no-untyped-def]
        if self._gate is not None:
            self._gate.wait()
        self.first_read = _now()
        for line in self._lines:
            if self.stop_requested:  # a flag, as HTTPWatch checks its own (once per read, here once per line)
                return
            yield parse_event(line)
        self._stopped.wait()  # then behave like an idle stream until stopped

    def stop(self) -> None:
        self.stop_requested = True
        self._stopped.set()


def bench_ours(lines: list[bytes]) -> Rate:
    """Events per second from the first event read to the last one handled (the process's CPU time: all its
    threads)."""
    n = len(lines) + 1  # the stream and the one pod of the initial list
    done = threading.Event()
    count = 0
    finished = (0.0, 0.0)

    class Counter:
        """The least a handler does: count (each method counts itself: no call in between)."""

        def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
            nonlocal count
            count += 1
            if count == n:
                counted_last()

        def on_update(self, old: Any, new: Any) -> None:
            nonlocal count
            count += 1
            if count == n:
                counted_last()

        def on_delete(self, obj: Any) -> None:
            nonlocal count
            count += 1
            if count == n:
                counted_last()

    def counted_last() -> None:
        nonlocal finished
        finished = _now()
        done.set()

    watches: list[_LineWatch] = []
    synced = threading.Event()

    def watch_func(options: ListOptions) -> _LineWatch:
        watches.append(_LineWatch(lines if not watches else [], gate=synced))
        return watches[-1]

    # The initial list holds one pod outside the stream's namespaces; the stream starts once that initial sync is
    # complete, its callback (the GC freeze) included, as for a long-running informer: start-up is not events.
    seed = make_pod(0, 999, random.Random(0), namespace="bench-seed")
    lw = ListWatch(lambda options: {"kind": "PodList", "metadata": {"resourceVersion": "1000"}, "items": [seed]},
                   watch_func)
    informer = SharedIndexInformer(lw, 0, {NAMESPACE_INDEX: meta_namespace_index_func}, name="bench")
    informer.add_event_handler(Counter())
    on_initial_sync = informer._on_initial_sync

    def initial_sync_then_stream() -> None:
        on_initial_sync()
        synced.set()

    informer._on_initial_sync = initial_sync_then_stream  # type: ignore[method-assign]
    stop = threading.Event()
    runner = threading.Thread(target=informer.run, args=(stop,), daemon=True)
    runner.start()
    if not done.wait(600):
        raise RuntimeError(f"only {count} of {n} events reached the handler")
    first_read = watches[0].first_read
    assert first_read is not None
    stop.set()
    runner.join(30)
    return _rate(len(lines), first_read, finished)


def official_text(lines: list[bytes]) -> list[str] | None:
    """The lines section c decodes, as text (what ``Watch.unmarshal_event`` takes); None without the client."""
    try:
        import kubernetes.watch  # noqa: F401
    except ImportError:
        return None
    return [line.decode() for line in (lines[:OFFICIAL_EVENTS] if OFFICIAL_EVENTS else lines)]


def bench_official(text: list[str] | None) -> Rate | None:
    """The official client's watch decoding: ``Watch.unmarshal_event`` builds the ``V1Pod`` it hands out."""
    if text is None:
        return None
    from kubernetes import watch as k8s_watch

    w = k8s_watch.Watch()
    t0 = _now()
    for line in text:
        w.unmarshal_event(line, "V1Pod")
    return _rate(len(text), t0, _now())


def bench_memory(n_pods: int) -> dict[str, Any]:
    pods = [orjson.dumps(make_pod(i, 5000 + i, random.Random(i))) for i in range(n_pods)]

    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    plain = [orjson.loads(p) for p in pods]
    plain_bytes = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del plain
    gc.collect()

    lw = ListWatch(lambda o: {"metadata": {"resourceVersion": "1"}, "items": []}, lambda o: _LineWatch([]))
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    informer = SharedIndexInformer(lw, 0, {NAMESPACE_INDEX: meta_namespace_index_func})
    indexer = informer.get_indexer()
    for p in pods:
        indexer.add(orjson.loads(p))
    cache_bytes = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return {
        "pods": n_pods,
        "avg_json_bytes": sum(map(len, pods)) // n_pods,
        "plain_dicts_mib": round(plain_bytes / 2**20, 1),
        "informer_cache_mib": round(cache_bytes / 2**20, 1),
        "ratio": round(cache_bytes / plain_bytes, 3),
    }


def _settle() -> None:
    """Before each timed section: nothing left over from the previous one (garbage, pending collections)."""
    gc.collect()


def _rounds(lines: list[bytes], rounds: int) -> dict[str, Any]:
    """``rounds`` rounds of a, bound, b and c on ``lines`` (order reversed every other round); every rate and every
    within-round ratio per round, and their medians, by wall-clock time and by CPU time."""
    text = official_text(lines)  # decoded once for every round of c
    sections: dict[str, Callable[[], Rate | None]] = {
        "a": lambda: bench_raw(lines),
        "bound": lambda: bench_dict_cache(lines),
        "b": lambda: bench_ours(lines),
        "c": lambda: bench_official(text),
    }
    rates: dict[str, list[Rate]] = {name: [] for name in sections}
    for r in range(rounds):
        for name in sections if r % 2 == 0 else reversed(list(sections)):
            _settle()
            rate = sections[name]()
            if rate is not None:
                rates[name].append(rate)
    med = statistics.median
    ratios = {"b_over_bound": ("b", "bound"), "bound_over_a": ("bound", "a"), "b_over_a": ("b", "a"),
              "b_over_c": ("b", "c")}
    out: dict[str, Any] = {"rounds": rounds}
    for name, values in rates.items():
        out[f"{name}_events_per_sec"] = round(med(v[0] for v in values)) if values else None
    for clock, i in (("", 0), ("_cpu", 1)):
        for name, (num, den) in ratios.items():
            per_round = [x[i] / y[i] for x, y in zip(rates[num], rates[den], strict=False)]
            out[f"ratio_{name}{clock}"] = round(med(per_round), 3) if per_round else None
            out[f"ratio_{name}{clock}_per_round"] = [round(x, 3) for x in per_round]
    out["events_per_sec_per_round"] = {name: [round(v[0]) for v in values] for name, values in rates.items()}
    out["events_per_cpu_sec_per_round"] = {name: [round(v[1]) for v in values] for name, values in rates.items()}
    return out


def main() -> None:
    affinity = os.sched_getaffinity(0)
    if PIN_CPU is not None:
        os.sched_setaffinity(0, {int(PIN_CPU)})
    lines = make_stream(EVENTS, PODS)
    avg = sum(map(len, lines)) // len(lines)
    # 1. What sedna-gm runs: tune_gc_for_controllers() at start-up (higher thresholds, start-up heap frozen), with the
    #    informers' own GC policy (GC paused during LISTs, gc.freeze() after the initial sync) on by default.
    default_thresholds = gc.get_threshold()
    _settle()
    previous = tune_gc_for_controllers()
    daemon_gc = _rounds(lines, ROUNDS)
    # 2. The same stream over HOT_PODS distinct pods: the cache stays in the CPU caches, so this isolates the
    #    pipeline's own cost (queue, index, threads) from the cost of touching and freeing cold cached objects.
    hot_lines = make_stream(EVENTS, HOT_PODS)
    cache_resident = _rounds(hot_lines, OTHER_ROUNDS)
    del hot_lines
    # 3. Python's default GC thresholds (700, 10, 10), the informers' GC policy still on.
    gc.set_threshold(*previous)
    _settle()
    default_gc = _rounds(lines, OTHER_ROUNDS)
    del lines
    _settle()
    memory = bench_memory(CACHE_PODS)
    result: dict[str, Any] = {
        "events": EVENTS,
        "pods": PODS,
        "avg_event_bytes": avg,
        "cpus": sorted(os.sched_getaffinity(0)),
        "python": sys.version.split()[0],
        "sections": {
            "a": "orjson.loads of every line",
            "bound": "a plain dict cache updated from the same decoded stream",
            "b": "our SharedIndexInformer with the namespace index and one handler, lines decoded by "
                 "apis.http_watch.parse_event; first event read -> last event handled",
            "c": "kubernetes Watch.unmarshal_event(line, 'V1Pod') (no to_dict(), no cache)"
                 + (f", on the first {OFFICIAL_EVENTS} events" if OFFICIAL_EVENTS else ", on the whole stream"),
        },
        "daemon_gc_policy": {
            "settings": f"tune_gc_for_controllers(): gc thresholds {CONTROLLER_GC_THRESHOLDS} + start-up heap frozen "
                        "(what sedna-gm calls at start), informers.gc_policy defaults",
            **daemon_gc,
        },
        "daemon_gc_policy_cache_resident": {
            "settings": f"as daemon_gc_policy, the same stream shape over {HOT_PODS} distinct pods",
            **cache_resident,
        },
        "default_gc": {
            "settings": f"gc thresholds {default_thresholds} (Python default), informers.gc_policy defaults",
            **default_gc,
        },
        "memory": memory,
        "targets": {"daemon_gc_policy.ratio_b_over_bound": ">= 0.8", "ratio_b_over_c": ">= 3",
                    "memory_ratio": "<= 1.3", "peers": "ours ahead of each on time, CPU and RSS"},
    }
    if PEERS != "":
        from hack.bench_informer_peers import main_result as peers

        os.sched_setaffinity(0, affinity)  # BENCH_CPU pins the in-process sections only: the peers get every CPU
        result["peers"] = peers()
        result["peers"]["cpus"] = sorted(affinity)
    print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
