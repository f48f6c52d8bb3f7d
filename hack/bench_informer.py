"""Benchmark: our Reflector → DeltaFIFO → Indexer → handler path against raw orjson decoding and against the
official ``kubernetes`` package's watch deserialization, plus the memory of our cache.

Run from the repo root: ``python hack/bench_informer.py`` (prints one JSON document, in about 10 minutes).
Knobs (environment): BENCH_EVENTS, BENCH_PODS (distinct pods in the stream), BENCH_HOT_PODS (the cache-resident
variant), BENCH_ROUNDS (interleaved rounds; medians are reported), BENCH_OFFICIAL_EVENTS, BENCH_CACHE_PODS (memory),
BENCH_CPU (pin the run to one CPU).
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
from typing import Any

import orjson

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from apis.watch import ListOptions, WatchEvent  # noqa: E402
from informers import ListWatch, SharedIndexInformer  # noqa: E402
from informers.gc_policy import CONTROLLER_GC_THRESHOLDS, tune_gc_for_controllers  # noqa: E402
from informers.index import NAMESPACE_INDEX, meta_namespace_index_func  # noqa: E402

EVENTS = int(os.environ.get("BENCH_EVENTS", "100000"))
PODS = int(os.environ.get("BENCH_PODS", "20000"))
OFFICIAL_SAMPLE = int(os.environ.get("BENCH_OFFICIAL_EVENTS", "10000"))
CACHE_PODS = int(os.environ.get("BENCH_CACHE_PODS", "50000"))
HOT_PODS = int(os.environ.get("BENCH_HOT_PODS", "200"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
PIN_CPU = os.environ.get("BENCH_CPU")  # e.g. "0": run the whole benchmark on that one CPU (threads inherit it)


def make_pod(i: int, rv: int, rng: random.Random) -> dict[str, Any]:
    """A realistic Deployment-owned pod, about 3 KB of JSON."""
    ns = f"team-{i % 37}"
    app = f"svc-{i % 211}"
    name = f"{app}-{i:06d}-{rng.randrange(16**5):05x}"
    node = f"node-{i % 500:03d}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": f"{app}-{i:06d}-",
            "namespace": ns,
            "uid": f"{rng.getrandbits(128):032x}",
            "resourceVersion": str(rv),
            "creationTimestamp": "2026-01-02T03:04:05Z",
            "labels": {"app": app, "pod-template-hash": f"{i % 9973:x}", "tier": "backend", "team": ns},
            "annotations": {
                "kubectl.kubernetes.io/restartedAt": "2026-01-02T03:00:00Z",
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "9090",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{app}-{i % 9973:x}",
                    "uid": f"{rng.getrandbits(128):032x}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": f"registry.example.com/{app}:v1.{i % 17}.3",
                    "args": ["--port=8080", "--log-level=info", f"--shard={i % 8}"],
                    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"},
                              {"containerPort": 9090, "name": "metrics", "protocol": "TCP"}],
                    "env": [{"name": f"ENV_{k}", "value": f"value-{k}-{i % 13}"} for k in range(6)],
                    "resources": {"limits": {"cpu": "1", "memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
                    "volumeMounts": [{"name": "data", "mountPath": "/data"},
                                     {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}],
                    "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10,
                                      "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
                    "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 5,
                                       "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "volumes": [
                {"name": "data", "emptyDir": {}},
                {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}},
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "nodeName": node,
            "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ],
            "priority": 0,
            "enableServiceLinks": True,
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": "2026-01-02T03:04:10Z"}
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": f"10.0.{i % 250}.{i % 200}",
            "podIP": f"172.16.{i % 250}.{(i * 7) % 250}",
            "podIPs": [{"ip": f"172.16.{i % 250}.{(i * 7) % 250}"}],
            "startTime": "2026-01-02T03:04:06Z",
            "containerStatuses": [
                {"name": "main", "ready": True, "restartCount": rv % 3, "started": True,
                 "image": f"registry.example.com/{app}:v1.{i % 17}.3",
                 "imageID": f"registry.example.com/{app}@sha256:{rng.getrandbits(256):064x}",
                 "containerID": f"containerd://{rng.getrandbits(256):064x}",
                 "state": {"running": {"startedAt": "2026-01-02T03:04:08Z"}}, "lastState": {}}
            ],
            "qosClass": "Burstable",
        },
    }


def make_stream(n_events: int, n_pods: int, seed: int = 1) -> list[bytes]:
    """Watch-event lines: every pod ADDED, then MODIFIED (90%), DELETED (5%) and new ADDED (5%)."""
    rng = random.Random(seed)
    lines: list[bytes] = []
    rv = 1000
    alive: list[int] = []
    index_of: dict[int, int] = {}
    next_id = 0

    def emit(etype: str, i: int) -> None:
        nonlocal rv
        rv += 1
        lines.append(orjson.dumps({"type": etype, "object": make_pod(i, rv, random.Random(i))}))

    while len(lines) < n_events and next_id < n_pods:
        index_of[next_id] = len(alive)
        alive.append(next_id)
        emit("ADDED", next_id)
        next_id += 1
    while len(lines) < n_events:
        roll = rng.random()
        if roll < 0.90 and alive:
            emit("MODIFIED", alive[rng.randrange(len(alive))])
        elif roll < 0.95 and alive:
            pos = rng.randrange(len(alive))
            victim = alive[pos]
            last = alive.pop()
            if pos < len(alive):
                alive[pos] = last
                index_of[last] = pos
            del index_of[victim]
            emit("DELETED", victim)
        else:
            index_of[next_id] = len(alive)
            alive.append(next_id)
            emit("ADDED", next_id)
            next_id += 1
    return lines


def bench_raw(lines: list[bytes]) -> float:
    loads = orjson.loads
    t0 = time.perf_counter()
    for line in lines:
        loads(line)
    return len(lines) / (time.perf_counter() - t0)


class _LineWatch:
    """A watch over pre-serialized event lines; parses each line as it is read (like the HTTP watch)."""

    def __init__(self, lines: list[bytes]) -> None:
        self._lines = lines
        self._stopped = threading.Event()

    def __iter__(self):
        loads = orjson.loads
        for line in self._lines:
            if self._stopped.is_set():
                return
            ev = loads(line)
            yield WatchEvent(ev["type"], ev["object"])
        self._stopped.wait()  # then behave like an idle stream until stopped

    def stop(self) -> None:
        self._stopped.set()


def bench_ours(lines: list[bytes]) -> tuple[float, int]:
    n = len(lines)
    done = threading.Event()
    count = 0

    class Counter:
        def on_add(self, obj, is_in_initial_list):
            nonlocal count
            count += 1
            if count == n:
                done.set()

        def on_update(self, old, new):
            self.on_add(new, False)

        def on_delete(self, obj):
            self.on_add(obj, False)

    watches = [0]

    def watch_func(options: ListOptions):
        watches[0] += 1
        return _LineWatch(lines if watches[0] == 1 else [])

    lw = ListWatch(lambda options: {"kind": "PodList", "metadata": {"resourceVersion": "1000"}, "items": []}, watch_func)
    informer = SharedIndexInformer(lw, 0, {NAMESPACE_INDEX: meta_namespace_index_func}, name="bench")
    informer.add_event_handler(Counter())
    stop = threading.Event()
    t0 = time.perf_counter()
    runner = threading.Thread(target=informer.run, args=(stop,), daemon=True)
    runner.start()
    if not done.wait(600):
        raise RuntimeError(f"only {count} of {n} events reached the handler")
    elapsed = time.perf_counter() - t0
    cached = len(informer.get_indexer().list())
    stop.set()
    runner.join(30)
    return n / elapsed, cached


def bench_dict_cache(lines: list[bytes]) -> float:
    """Lower bound of any cache: orjson + one plain dict keyed by namespace/name (no queue, no threads)."""
    loads = orjson.loads
    cache: dict[str, Any] = {}
    t0 = time.perf_counter()
    for line in lines:
        ev = loads(line)
        obj = ev["object"]
        md = obj["metadata"]
        key = f"{md['namespace']}/{md['name']}"
        if ev["type"] == "DELETED":
            cache.pop(key, None)
        else:
            cache[key] = obj
    return len(lines) / (time.perf_counter() - t0)


def bench_official(lines: list[bytes]) -> float | None:
    try:
        from kubernetes import watch as k8s_watch
    except ImportError:
        return None
    w = k8s_watch.Watch()
    text = [line.decode() for line in lines]
    t0 = time.perf_counter()
    for line in text:
        ev = w.unmarshal_event(line, "V1Pod")
        ev["object"].to_dict()
    return len(text) / (time.perf_counter() - t0)


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


def _rounds(lines: list[bytes], official: float | None) -> dict[str, Any]:
    """ROUNDS interleaved rounds of (a) raw, the plain dict cache and (b) ours; medians, and the median of the
    per-round ratios (this machine's speed drifts between rounds, so ratios are taken within a round)."""
    raws, dicts, ours, b_over_a, dict_over_a, b_over_dict = [], [], [], [], [], []
    for _ in range(ROUNDS):
        _settle()
        raw = bench_raw(lines)
        _settle()
        dict_cache = bench_dict_cache(lines)
        _settle()
        b, _ = bench_ours(lines)
        raws.append(raw)
        dicts.append(dict_cache)
        ours.append(b)
        b_over_a.append(b / raw)
        dict_over_a.append(dict_cache / raw)
        b_over_dict.append(b / dict_cache)
    med = statistics.median
    return {
        "a_raw_orjson": round(med(raws)),
        "plain_dict_cache_lower_bound": round(med(dicts)),
        "b_reflector_fifo_indexer_handler": round(med(ours)),
        "ratio_b_over_a": round(med(b_over_a), 3),
        "ratio_b_over_a_per_round": [round(r, 3) for r in b_over_a],
        "ratio_plain_dict_cache_over_a": round(med(dict_over_a), 3),
        "ratio_b_over_plain_dict_cache": round(med(b_over_dict), 3),
        "ratio_b_over_c": round(med(ours) / official, 2) if official else None,
    }


def main() -> None:
    if PIN_CPU is not None:
        # One CPU for every thread: shows what the informer's threads lose when they take turns on the GIL from
        # different cores (objects and allocator state then move between CPU caches).
        os.sched_setaffinity(0, {int(PIN_CPU)})
    lines = make_stream(EVENTS, PODS)
    avg = sum(map(len, lines)) // len(lines)
    _settle()
    official = bench_official(lines[:OFFICIAL_SAMPLE])
    # 1. Python's default GC thresholds (700, 10, 10); the informers' own GC policy (informers.gc_policy: GC paused
    #    during LISTs, gc.freeze() after the initial sync) is on, as it is by default.
    default_thresholds = gc.get_threshold()
    default_gc = _rounds(lines, official)
    # 2. What sedna-gm runs with: tune_gc_for_controllers() at start-up (higher thresholds, start-up heap frozen).
    #    Without it, full collections walk the whole growing cache (~30 GC-tracked containers per cached pod).
    _settle()
    previous = tune_gc_for_controllers()
    daemon_gc = _rounds(lines, official)
    # 3. The same stream over HOT_PODS distinct pods: the cache stays in the CPU caches, so this isolates the
    #    pipeline's own cost (queue, index, threads) from the cost of touching and freeing cold cached objects.
    hot_lines = make_stream(EVENTS, HOT_PODS)
    cache_resident = _rounds(hot_lines, official)
    gc.set_threshold(*previous)
    del hot_lines
    _settle()
    memory = bench_memory(CACHE_PODS)
    result = {
        "events": len(lines),
        "pods": PODS,
        "avg_event_bytes": avg,
        "rounds": ROUNDS,
        "cpus": sorted(os.sched_getaffinity(0)),
        "python": sys.version.split()[0],
        "c_official_kubernetes_watch_deserialize": round(official) if official else None,
        "official_sample_events": min(OFFICIAL_SAMPLE, len(lines)),
        "default_gc": {
            "settings": f"gc thresholds {default_thresholds} (Python default), informers.gc_policy defaults",
            **default_gc,
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
        "memory": memory,
        "targets": {"b_over_a": ">= 0.5", "b_over_c": ">= 3", "memory_ratio": "<= 1.3"},
    }
    print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
