"""Issue 7's convergence test: informers over real HTTP stay consistent with the sandbox under fault injection.

A seeded writer makes a few hundred creates, label updates, status updates and deletes of pods and of a custom
resource (Dataset) directly on the sandbox's tracker while the sandbox drops every watch after a few events and
after a short time, answers a seeded fraction of requests with 429/500, keeps a tiny watch history (so re-watches
fall behind it) and, for a middle phase, answers every re-watch with 410. Then the informers' caches — and what
their handlers saw — must equal the server's state exactly (same keys, same resourceVersion per key), every deleted
object must be gone from them, and every deleted object a handler had seen must have reached its ``on_delete``.
The fault counters must show that each kind of fault fired, so the test cannot pass vacuously.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from testkit import wait_for

from apis import resources as r
from apis.clientset import Clientset
from informers import DeletedFinalStateUnknown, SharedInformerFactory
from informers.backoff import Backoff

CRD_DIR = Path(__file__).resolve().parents[2] / "charts" / "sedna" / "crds"
NAMESPACES = ("default", "edge")
OPS = 300
CONVERGENCE_TIMEOUT = 15.0

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False, watch_history=40, crd_dirs=[CRD_DIR])]


def _key(obj: Any) -> str:
    md = obj["metadata"]
    return f"{md.get('namespace') or ''}/{md['name']}"


class RecordingHandler:
    """What one informer's handler saw: its own view of the objects plus add/delete counts per key."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.view: dict[str, str] = {}
        self.adds: Counter[str] = Counter()
        self.deletes: Counter[str] = Counter()
        self.tombstones = 0  # deletions learned from a relist (DeletedFinalStateUnknown)

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        with self._lock:
            self.view[_key(obj)] = obj["metadata"]["resourceVersion"]
            self.adds[_key(obj)] += 1

    def on_update(self, old: Any, new: Any) -> None:
        with self._lock:
            self.view[_key(new)] = new["metadata"]["resourceVersion"]

    def on_delete(self, obj: Any) -> None:
        with self._lock:
            if isinstance(obj, DeletedFinalStateUnknown):
                key = obj.key
                self.tombstones += 1
            else:
                key = _key(obj)
            self.view.pop(key, None)
            self.deletes[key] += 1

    def snapshot(self) -> dict[str, str]:
        with self._lock:
            return dict(self.view)


class SeededWriter:
    """A deterministic sequence of writes on the tracker; names are never reused, so a deleted key stays gone."""

    def __init__(self, tracker: Any, seed: int) -> None:
        self.tracker = tracker
        self.rng = random.Random(seed)
        self.live: dict[r.GroupVersionResource, list[tuple[str, str]]] = {r.PODS: [], r.DATASETS: []}
        self.deleted: dict[r.GroupVersionResource, set[str]] = {r.PODS: set(), r.DATASETS: set()}
        self.counts: Counter[str] = Counter()
        self._serial = 0

    def _new(self, gvr: r.GroupVersionResource) -> dict[str, Any]:
        self._serial += 1
        md = {"name": f"{gvr.resource}-{self._serial:04d}", "labels": {"gen": "0"}}
        if gvr == r.PODS:
            return {"metadata": md, "spec": {"containers": [{"name": "main", "image": "busybox"}]}}
        spec = {"url": f"/data/{self._serial}.txt", "format": "txt", "nodeName": "edge-1"}
        return {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": md, "spec": spec}

    def step(self) -> None:
        rng = self.rng
        gvr = r.PODS if rng.random() < 0.6 else r.DATASETS
        live = self.live[gvr]
        op = "create" if len(live) < 5 else rng.choice(["create", "create", "label", "status", "status", "delete"])
        if op == "create":
            ns = rng.choice(NAMESPACES)
            created = self.tracker.create(gvr, self._new(gvr), ns)
            live.append((ns, created["metadata"]["name"]))
        else:
            ns, name = live[rng.randrange(len(live))]
            if op == "delete":
                self.tracker.delete(gvr, ns, name)
                live.remove((ns, name))
                self.deleted[gvr].add(f"{ns}/{name}")
            else:
                obj = self.tracker.get(gvr, ns, name)
                if op == "label":
                    obj["metadata"]["labels"] = {"gen": str(rng.randrange(1000))}
                    self.tracker.update(gvr, obj, ns)
                elif gvr == r.PODS:
                    obj["status"] = {"phase": rng.choice(["Pending", "Running", "Succeeded"]), "message": str(rng.random())}
                    self.tracker.update(gvr, obj, ns, subresource="status")
                else:
                    obj["status"] = {"numberOfSamples": rng.randrange(10_000)}
                    self.tracker.update(gvr, obj, ns, subresource="status")
        self.counts[op] += 1


def _server_state(tracker: Any, gvr: r.GroupVersionResource) -> dict[str, str]:
    return {_key(o): o["metadata"]["resourceVersion"] for o in tracker.list(gvr)["items"]}


def _cache_state(informer: Any) -> dict[str, str]:
    return {_key(o): o["metadata"]["resourceVersion"] for o in informer.get_store().list()}


def test_informers_converge_to_server_state_under_watch_faults(sandbox) -> None:
    faults = sandbox.faults
    faults.seed = 7
    faults.drop_watch_after_events = 9
    faults.drop_watch_after = 1.5
    faults.error_rate = 0.1

    # a short reflector backoff (client-go's 0.8 s → 30 s would make every injected fault cost seconds)
    reflector_options = {"backoff": Backoff(initial=0.02, cap=0.2, rng=random.Random(3)), "rng": random.Random(5)}
    factory = SharedInformerFactory(
        Clientset.from_kubeconfig(sandbox.kubeconfig), informer_options={"reflector_options": reflector_options}
    )
    informers = {gvr: factory.for_resource(gvr).informer() for gvr in (r.PODS, r.DATASETS)}
    handlers = {gvr: RecordingHandler() for gvr in informers}
    for gvr, informer in informers.items():
        informer.add_event_handler(handlers[gvr])
    stop = threading.Event()
    factory.start(stop)
    writer = SeededWriter(sandbox.tracker, seed=20240607)
    try:
        wait_for("the initial sync", lambda: all(i.has_synced() for i in informers.values()), timeout=10, interval=0.05)
        for i in range(OPS):
            if i == OPS // 3:
                faults.gone_on_rewatch = True
            if i == 2 * OPS // 3:
                wait_for("a forced 410 on re-watch", lambda: faults.stats.gone_rewatches > 0, timeout=10, interval=0.05)
                faults.gone_on_rewatch = False
            writer.step()
            time.sleep(0.005)  # a paced writer: the informers see most objects before they go away
        stats = faults.stats
        wait_for("an injected 429/500", lambda: stats.errors_429 + stats.errors_500 > 0, timeout=10, interval=0.05)

        def converged(gvr: r.GroupVersionResource) -> bool:
            server = _server_state(sandbox.tracker, gvr)
            return _cache_state(informers[gvr]) == server and handlers[gvr].snapshot() == server

        for gvr in informers:
            wait_for(
                f"the {gvr.resource} cache and handler view to equal the server's state",
                lambda gvr=gvr: converged(gvr),
                timeout=CONVERGENCE_TIMEOUT,
                interval=0.05,
            )
    finally:
        stop.set()
        factory.shutdown(timeout=10)

    assert stats.dropped_watches > 0 and stats.gone_rewatches > 0 and stats.errors_429 + stats.errors_500 > 0
    assert writer.counts["delete"] > 0 and writer.counts["status"] > 0 and writer.counts["label"] > 0
    for gvr, informer in informers.items():
        server = _server_state(sandbox.tracker, gvr)
        assert _cache_state(informer) == server and handlers[gvr].snapshot() == server
        cache_keys = set(_cache_state(informer))
        handler = handlers[gvr]
        for key in writer.deleted[gvr]:
            assert key not in cache_keys and key not in server, f"lost delete of {gvr.resource} {key}"
            if handler.adds[key]:
                assert handler.deletes[key] >= 1, f"handler never told that {gvr.resource} {key} was deleted"
        assert sum(handler.deletes[k] for k in writer.deleted[gvr]) > 0
    print(
        f"faults: {stats}; writes: {dict(writer.counts)}; "
        + "; ".join(
            f"{gvr.resource}: {len(writer.deleted[gvr])} deleted, {sum(h.deletes.values())} on_delete "
            f"({h.tombstones} tombstones), {len(_server_state(sandbox.tracker, gvr))} live"
            for gvr, h in handlers.items()
        )
    )
