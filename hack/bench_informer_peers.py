"""Benchmark: our informer against the Python peers doing the same job against the same sandbox API server.

The job: cache the N pods of a namespace (list, then every object handed to a handler and kept), then follow M
updates of them (watch). Each peer runs in its own subprocess (clean CPU and RSS):

- ``ours``: ``SharedInformerFactory(Clientset.from_kubeconfig(...), namespace=...)``, one handler, library defaults;
- ``ours_gm_gc``: the same, after ``tune_gc_for_controllers()`` (what sedna-gm calls at start-up);
- ``kubernetes_informer``: the official client's ``kubernetes.informer.SharedInformer`` (``kubernetes`` >= 36);
- ``kopf``: a kopf operator (``kopf.operator(standalone=True, namespaces=[...])``) whose ``@kopf.on.event`` handler
  keeps every pod in a dict;
- ``raw_floor``: urllib3 + orjson list and watch into a dict: no queue, no index, no threads, the GC paused while
  listing and the heap frozen after it as our informers do (the floor).

A peer reports ``synced`` once its handler holds all N pods, then stops itself (SIGSTOP); the parent writes the M
updates straight into the tracker (the watch buffers them) and continues the peer, which reports ``done`` once its
handler saw all M updates. So the follow phase measures how fast each peer drains the same backlog of M watch events.

Run: ``python -m hack.bench_informer_peers`` (or as part of ``python -m hack.bench_informer``). Knobs (environment):
BENCH_PEER_OBJECTS (N, 5000), BENCH_PEER_UPDATES (M, 5000), BENCH_PEER_ROUNDS (2), BENCH_PEERS (comma-separated).
"""

from __future__ import annotations

import gc
import json
import logging
import os
import random
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from importlib import metadata
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

NAMESPACE = "bench"
PEERS = ("ours", "ours_gm_gc", "kubernetes_informer", "kopf", "raw_floor")
TIMEOUT = float(os.environ.get("BENCH_PEER_TIMEOUT", "600"))

Handler = Callable[[str, dict[str, Any]], None]  # (event type "ADDED"/"MODIFIED"/"DELETED", object)


# -- in the peer subprocess ---------------------------------------------------------------------------------------
def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_rss_mib() -> float:
    """This process image's peak RSS (VmHWM; ru_maxrss would carry over the parent's across exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


_RECORD = "BENCH-PEER-RECORD "  # prefixes the peer's reports on its stdout (its logs go to stderr)


def _emit(**fields: Any) -> None:
    sys.stdout.write(_RECORD + json.dumps(fields) + "\n")
    sys.stdout.flush()


# Each peer: import what it needs (before the baseline RSS is taken), return the function that starts it.
def _ours(kubeconfig: str, handle: Handler, tune_gc: bool) -> Callable[[], None]:
    import kubernetes.client  # noqa: F401 - what Clientset.from_kubeconfig imports for the configuration
    import kubernetes.config  # noqa: F401

    from apis import Clientset
    from apis.resources import PODS
    from informers import ResourceEventHandlerFuncs, SharedInformerFactory
    from informers.gc_policy import tune_gc_for_controllers

    def start() -> None:
        if tune_gc:
            tune_gc_for_controllers()
        factory = SharedInformerFactory(Clientset.from_kubeconfig(kubeconfig), namespace=NAMESPACE)
        factory.for_resource(PODS).informer().add_event_handler(ResourceEventHandlerFuncs(
            add_func=lambda obj: handle("ADDED", obj),
            update_func=lambda old, new: handle("MODIFIED", new),
            delete_func=lambda obj: handle("DELETED", obj),
        ))
        factory.start(threading.Event())

    return start


def _kubernetes_informer(kubeconfig: str, handle: Handler) -> Callable[[], None]:
    from kubernetes import client, config
    from kubernetes.informer import ADDED, DELETED, MODIFIED, SharedInformer

    def start() -> None:
        api = client.CoreV1Api(config.new_client_from_config(kubeconfig))
        informer = SharedInformer(api.list_namespaced_pod, namespace=NAMESPACE)
        for etype in (ADDED, MODIFIED, DELETED):
            informer.add_event_handler(etype, lambda obj, etype=etype: handle(etype, obj))
        informer.start()

    return start


def _kopf(handle: Handler) -> Callable[[], None]:
    import asyncio

    import kopf
    import kubernetes.client  # noqa: F401 - what kopf.login_via_client imports
    import kubernetes.config  # noqa: F401

    logging.getLogger("kopf").setLevel(logging.WARNING)
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    def login(**kwargs: Any) -> Any:
        return kopf.login_via_client(**kwargs)  # kopf's own default: the kubeconfig in $KUBECONFIG

    @kopf.on.startup(registry=registry)
    def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.posting.enabled = False  # no Kubernetes Events for our own log lines

    @kopf.on.event("v1", "pods", registry=registry)
    def on_event(event: dict[str, Any], **_: Any) -> None:
        handle(event["type"] or "ADDED", event["object"])  # the initial listing comes with type None

    def run() -> None:
        asyncio.run(kopf.operator(registry=registry, standalone=True, namespaces=[NAMESPACE]))

    return threading.Thread(target=run, name="kopf", daemon=True).start


def _raw(kubeconfig: str, handle: Handler) -> Callable[[], None]:
    import orjson
    import urllib3
    import yaml

    with open(kubeconfig) as f:
        server = yaml.safe_load(f)["clusters"][0]["cluster"]["server"]
    base = f"{server}/api/v1/namespaces/{NAMESPACE}/pods"

    def run() -> None:
        http = urllib3.PoolManager()
        gc.disable()  # the GC treatment our informers get by default: paused while listing, then the heap frozen
        listed = orjson.loads(http.request("GET", base).data)
        for obj in listed["items"]:
            handle("ADDED", obj)
        gc.enable()
        gc.freeze()
        rv = listed["metadata"]["resourceVersion"]
        resp = http.request("GET", f"{base}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true",
                            preload_content=False)
        buf = b""
        while data := resp.read1(1 << 16):  # as apis.http_watch reads the stream
            buf += data
            *lines, buf = buf.split(b"\n")
            for line in lines:
                if line:
                    event = orjson.loads(line)
                    if event["type"] != "BOOKMARK":
                        handle(event["type"], event["object"])

    return threading.Thread(target=run, name="raw", daemon=True).start


def run_peer(peer: str, kubeconfig: str, objects: int, updates: int) -> None:
    """The peer subprocess: start the peer, report synced, stop itself, report done once M updates were seen."""
    cache: dict[str, Any] = {}
    lock = threading.Lock()
    synced, followed = threading.Event(), threading.Event()
    seen_updates = 0

    def handle(etype: str, obj: Any) -> None:
        nonlocal seen_updates
        md = obj["metadata"] if isinstance(obj, dict) else obj.metadata  # the official client hands out V1Pod
        key = f"{md['namespace']}/{md['name']}" if isinstance(md, dict) else f"{md.namespace}/{md.name}"
        with lock:
            if etype == "DELETED":
                cache.pop(key, None)
            else:
                cache[key] = obj
            if etype == "MODIFIED" and synced.is_set():
                seen_updates += 1
                if seen_updates == updates:
                    followed.set()
            elif len(cache) == objects:
                synced.set()

    preparers: dict[str, Callable[[], Callable[[], None]]] = {
        "ours": lambda: _ours(kubeconfig, handle, tune_gc=False),
        "ours_gm_gc": lambda: _ours(kubeconfig, handle, tune_gc=True),
        "kubernetes_informer": lambda: _kubernetes_informer(kubeconfig, handle),
        "kopf": lambda: _kopf(handle),  # kopf's login reads $KUBECONFIG (run_once sets it)
        "raw_floor": lambda: _raw(kubeconfig, handle),
    }
    start = preparers[peer]()
    rss_base = _rss_mib()
    cpu0, t0 = _cpu(), time.perf_counter()
    start()
    if not synced.wait(TIMEOUT):
        raise SystemExit(f"{peer}: only {len(cache)} of {objects} objects after {TIMEOUT} s")
    sync_seconds, sync_cpu = time.perf_counter() - t0, _cpu() - cpu0
    _emit(phase="synced", sync_seconds=sync_seconds, sync_cpu_seconds=sync_cpu, rss_synced_mib=_rss_mib())
    os.kill(os.getpid(), signal.SIGSTOP)  # the parent writes the updates meanwhile, then continues us
    cpu1, t1 = _cpu(), time.perf_counter()
    if not followed.wait(TIMEOUT):
        raise SystemExit(f"{peer}: only {seen_updates} of {updates} updates after {TIMEOUT} s")
    _emit(phase="done", rss_base_mib=rss_base, sync_seconds=sync_seconds, sync_cpu_seconds=sync_cpu,
          follow_seconds=time.perf_counter() - t1, follow_cpu_seconds=_cpu() - cpu1, rss_done_mib=_rss_mib(),
          rss_peak_mib=_peak_rss_mib())
    os._exit(0)  # peers' own threads (kopf's loop, the official informer) need no orderly shutdown here


# -- in the parent ------------------------------------------------------------------------------------------------
class Sandbox:
    """The sandbox API server in this process, holding N pods in namespace ``bench``."""

    def __init__(self, objects: int, updates: int, workdir: str) -> None:
        from apis.fake.tracker import ObjectTracker
        from apis.resources import NAMESPACES, PODS
        from hack.bench_data import make_pod
        from sandbox.apiserver import SandboxAPIServer

        # every update of a round stays replayable and buffered while a peer is stopped
        depth = objects + 2 * updates + 1000
        self.tracker = ObjectTracker(watch_history=depth, watch_buffer=depth)
        self.server = SandboxAPIServer(tracker=self.tracker, kubelet=False).start()
        self.kubeconfig = str(self.server.write_kubeconfig(os.path.join(workdir, "kubeconfig"), namespace=NAMESPACE))
        self.tracker.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        self.names = []
        for i in range(objects):
            pod = make_pod(i, 0, random.Random(i), namespace=NAMESPACE)
            del pod["metadata"]["resourceVersion"]
            # seeded: their owners (ReplicaSets) are not here, and the garbage collector leaves seeded objects be
            self.names.append(self.tracker.add(pod)["metadata"]["name"])
        self._pods = PODS
        self._sequence = 0

    def update_all(self, updates: int) -> None:
        for i in range(updates):
            self._sequence += 1
            name = self.names[i % len(self.names)]
            self.tracker.patch(self._pods, NAMESPACE, name,
                               {"metadata": {"annotations": {"bench/sequence": str(self._sequence)}}}, "merge")

    def stop(self) -> None:
        self.server.stop()


def _read_phase(proc: subprocess.Popen[str], phase: str) -> dict[str, Any]:
    assert proc.stdout is not None
    for line in proc.stdout:
        at = line.find(_RECORD)
        if at >= 0:
            record = json.loads(line[at + len(_RECORD):])
            if record.get("phase") == phase:
                return record  # type: ignore[no-any-return]
    raise RuntimeError(f"peer exited (code {proc.wait(TIMEOUT)}) before reporting {phase}")


def run_once(sandbox: Sandbox, peer: str, objects: int, updates: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=ROOT, KUBECONFIG=sandbox.kubeconfig)  # kopf's login reads $KUBECONFIG
    log_path = os.path.join(os.path.dirname(sandbox.kubeconfig), f"{peer}.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hack.bench_informer_peers", "--peer", peer, "--kubeconfig", sandbox.kubeconfig,
             "--objects", str(objects), "--updates", str(updates)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log, text=True,
        )
    try:
        _read_phase(proc, "synced")
        _, status = os.waitpid(proc.pid, os.WUNTRACED)  # until it has stopped itself
        if not os.WIFSTOPPED(status):
            raise RuntimeError(f"{peer} ended instead of stopping (status {status})")
        sandbox.update_all(updates)
        os.kill(proc.pid, signal.SIGCONT)
        done = _read_phase(proc, "done")
        proc.wait(TIMEOUT)
        return done
    except Exception as e:
        with open(log_path) as log:
            raise RuntimeError(f"peer {peer} failed: {e}; its stderr ends with:\n{log.read()[-3000:]}") from e
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(TIMEOUT)


def versions() -> dict[str, str]:
    found = {}
    for dist in ("kubernetes", "kopf", "urllib3", "orjson"):
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            found[dist] = "not installed"
    return found


def bench_peers(objects: int, updates: int, rounds: int, peers: tuple[str, ...] = PEERS) -> dict[str, Any]:
    """Every peer once per round (order alternating between rounds); medians and every round's figures. Ratios
    are taken within each round (``<field>``: their median; ``<field>_per_round``: every round's)."""
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as workdir:
        sandbox = Sandbox(objects, updates, workdir)
        runs: dict[str, list[dict[str, Any]]] = {peer: [] for peer in peers}
        try:
            for r in range(rounds):
                for peer in peers if r % 2 == 0 else tuple(reversed(peers)):
                    runs[peer].append(run_once(sandbox, peer, objects, updates))
        finally:
            sandbox.stop()
    fields = ("sync_seconds", "sync_cpu_seconds", "follow_seconds", "follow_cpu_seconds", "rss_cache_mib")
    med = statistics.median
    summary: dict[str, Any] = {}
    for peer, records in runs.items():
        for rec in records:
            rec["rss_cache_mib"] = rec["rss_done_mib"] - rec["rss_base_mib"]  # what the peer holds over its imports
        summary[peer] = {f: round(med(rec[f] for rec in records), 3) for f in fields}
        summary[peer]["rss_peak_mib"] = round(med(rec["rss_peak_mib"] for rec in records), 1)
        summary[peer]["rounds"] = [{f: round(rec[f], 3) for f in (*fields, "rss_peak_mib")} for rec in records]
    def per_round(num: str, den: str) -> dict[str, Any]:
        """num / den of every field, taken within each round (both ran in it): the median, and every round's."""
        ratios: dict[str, Any] = {}
        lists: dict[str, list[float | None]] = {}
        for f in fields:
            rounds_f = [a[f] / b[f] if b[f] > 0 else None for a, b in zip(runs[num], runs[den], strict=True)]
            known = [x for x in rounds_f if x is not None]
            ratios[f] = round(med(known), 2) if known else None
            lists[f"{f}_per_round"] = [None if x is None else round(x, 2) for x in rounds_f]
        return {"ratios": ratios, "per_round": lists}

    ahead: dict[str, Any] = {}
    if "ours" in runs:
        for peer in peers:
            if peer.startswith("ours") or peer == "raw_floor":
                continue
            # peer / ours: above 1 means ours is ahead by that factor
            got = per_round(peer, "ours")
            ratios = got["ratios"]
            ratios["ours_ahead_on_all"] = all(v is not None and v > 1 for v in ratios.values())
            ahead[peer] = {**ratios, **got["per_round"]}
        if "raw_floor" in runs:
            got = per_round("ours", "raw_floor")
            ahead["ours_over_raw_floor"] = {**got["ratios"], **got["per_round"]}
    return {
        "objects": objects,
        "updates": updates,
        "rounds": rounds,
        "versions": versions(),
        "python": sys.version.split()[0],
        "unit": "seconds (wall, and CPU of the peer process), MiB (RSS over the peer's RSS after its imports)",
        "peers": summary,
        "peer_over_ours": ahead,
    }


def main_result() -> dict[str, Any]:
    """``bench_peers`` with the settings of the environment (see the module doc)."""
    peers = tuple(p for p in (os.environ.get("BENCH_PEERS") or ",".join(PEERS)).split(",") if p)
    return bench_peers(int(os.environ.get("BENCH_PEER_OBJECTS", "5000")),
                       int(os.environ.get("BENCH_PEER_UPDATES", "5000")),
                       int(os.environ.get("BENCH_PEER_ROUNDS", "2")), peers)


def main() -> None:
    from apis.logs import configure_process_logging

    if "--peer" in sys.argv:
        # Logs to stderr, as the peers' own logging does: stdout carries the reports only.
        configure_process_logging("warning", "json", sys.stderr)
        args = dict(zip(sys.argv[1::2], sys.argv[2::2], strict=False))
        run_peer(args["--peer"], args["--kubeconfig"], int(args["--objects"]), int(args["--updates"]))
        return
    configure_process_logging("warning")
    print(json.dumps(main_result(), indent=2))


if __name__ == "__main__":
    main()
