"""No controller scans a cache: every registered controller reconciles jobs of its kind in two namespaces (from
the chart's samples, with the Models, Datasets and Secrets they name) with real informers over the fake API
server, and no sync, handler or hook of ``globalmanager`` lists an informer's whole store or a whole namespace:
owned objects are looked up by the ``controller-uid`` index, everything else by key or by a dedicated index.

A scan is any ``list``/``list_keys``/``list_index_func_values`` of an informer store, or a lookup on the namespace
index, made with a ``globalmanager`` frame on the stack (the informers' own bookkeeping has none)."""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from testkit import REPO, wait_for
from testkit.flows.base import SAMPLES_DIR, create_if_absent, load_sample, prepare

from apis import meta, resources
from apis.fake import FakeClientset
from apis.record import EventRecorder
from apis.resources import PODS
from globalmanager.controllers import ControllerContext, select
from globalmanager.controllers.registry import kind_factory
from globalmanager.runtime import Kind, KindContext
from globalmanager.runtime.cachetransform import strip_unread_fields
from globalmanager.runtime.edge import RecordingEdgeLink
from informers import SharedInformerFactory
from informers.index import NAMESPACE_INDEX
from informers.thread_safe_store import ThreadSafeStore
from reconcile import Controller

NAMESPACES = ("default", "team-b")
JOBS_PER_NAMESPACE = 4
GM_DIR = str(REPO / "globalmanager") + os.sep
EDGE_NODE = "edge-node-1"  # where the Datasets the samples name are


def samples() -> dict[str, dict[str, Any]]:
    """The chart's samples by kind."""
    return {doc["kind"]: doc for path in sorted(SAMPLES_DIR.glob("*.yaml")) if (doc := load_sample(path.name))}


class ScanDetector:
    """Records every store scan made from ``globalmanager`` code while ``active``."""

    def __init__(self) -> None:
        self.active = False
        self.scans: list[str] = []
        self._lock = threading.Lock()

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for name, always in (("list", True), ("list_keys", True), ("list_index_func_values", True),
                             ("by_index", False), ("index_keys", False), ("index", False)):
            monkeypatch.setattr(ThreadSafeStore, name, self._wrap(getattr(ThreadSafeStore, name), name, always))

    def _wrap(self, method: Callable[..., Any], name: str, always: bool) -> Callable[..., Any]:
        def scanning(store: ThreadSafeStore, *args: Any) -> Any:
            if self.active and (always or args[0] == NAMESPACE_INDEX):
                where = self._caller()
                if where:
                    with self._lock:
                        self.scans.append(f"{name}{args[:1]} from {where}")
            return method(store, *args)

        return scanning

    @staticmethod
    def _caller() -> str:
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename.startswith(GM_DIR):
                return f"{os.path.relpath(frame.f_code.co_filename, REPO)}:{frame.f_lineno} {frame.f_code.co_name}"
            frame = frame.f_back
        return ""


class SyncCounter:
    """How often each controller has synced each key (the reconcile runner's ``Controller.process``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        process = Controller.process

        def counted_process(controller: Controller, key: str) -> str:
            try:
                return process(controller, key)
            finally:
                self._count(controller.name, key)

        monkeypatch.setattr(Controller, "process", counted_process)

    def _count(self, controller: str, key: str) -> None:
        with self._lock:
            self.counts[(controller, key)] += 1

    def of(self, controller: str, key: str) -> int:
        with self._lock:
            return self.counts[(controller, key)]


def gvr_of(obj: Mapping[str, Any]) -> resources.GroupVersionResource:
    return resources.lookup_kind(obj["apiVersion"], obj["kind"]).gvr


class World:
    """Every registered controller (or those named) over one FakeClientset and one informer factory."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, rootfs: Path, names: list[str] | None = None) -> None:
        self.detector = ScanDetector()
        self.detector.install(monkeypatch)
        self.counter = SyncCounter(monkeypatch)
        self.cs = FakeClientset()
        self.rootfs = {EDGE_NODE: rootfs}  # the Datasets' index files
        self.factory = SharedInformerFactory(self.cs, transform=strip_unread_fields)
        self.edge = RecordingEdgeLink()
        ctx = ControllerContext(clientset=self.cs, informer_factory=self.factory,
                                recorder=EventRecorder(self.cs, "sedna-gm"), registry=CollectorRegistry(),
                                default_workers=2, edge=self.edge)
        self.controllers = [make(ctx) for make in select(names).values()]
        self.keys: dict[str, list[str]] = {}  # controller → the keys of its jobs
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []

    @staticmethod
    def kind_of(controller: Any) -> str:
        return getattr(controller, "kind", None) or controller.name

    def create_jobs(self) -> None:
        by_kind = samples()
        for ns in NAMESPACES:
            self.cs.core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for controller in self.controllers:
            kind = self.kind_of(controller)
            assert kind in by_kind, f"no sample of {kind} in {SAMPLES_DIR}: add one (this test runs every controller)"
            sample = by_kind[kind]
            keys = self.keys.setdefault(controller.name, [])
            for ns in NAMESPACES:
                prepared = prepare(self.cs, ns, sample, self.rootfs)  # with the Models, Datasets, Secrets it names
                for i in range(JOBS_PER_NAMESPACE):
                    obj = meta.deep_copy(prepared)
                    obj["metadata"]["name"] = f"{meta.name(sample)[:40]}-{i}"
                    create_if_absent(self.cs, obj)  # e.g. a Model shared with another controller's references
                    keys.append(f"{ns}/{meta.name(obj)}")

    def start(self) -> None:
        self.detector.active = True
        self.factory.start(self.stop)
        for controller in self.controllers:
            t = threading.Thread(target=controller.run, args=(self.stop,), daemon=True)
            t.start()
            self.threads.append(t)

    def wait_synced_at_least(self, times: Mapping[str, int]) -> None:
        for controller in self.controllers:
            for key in self.keys[controller.name]:
                wait_for(f"{controller.name} to sync {key} {times[key]} time(s)",
                         lambda c=controller.name, k=key: self.counter.of(c, k) >= times[k], timeout=30)

    def wait_caches_caught_up(self) -> None:
        """Every informer cache holds what the fake API server holds (owned objects created by the first syncs)."""
        for gvr in self.factory.wait_for_cache_sync(self.stop):
            indexer = self.factory.for_resource(gvr).informer().get_indexer()

            def caught_up(gvr: Any = gvr, indexer: Any = indexer) -> bool:
                served = self.cs.resource(gvr, "").list()["items"]
                return {f"{meta.namespace(o)}/{meta.name(o)}".lstrip("/") for o in served} == set(indexer.list_keys())

            wait_for(f"the {gvr} cache to catch up", caught_up, timeout=30)

    def touch_jobs(self) -> None:
        for controller in self.controllers:
            gvr = getattr(controller, "job_resource", None) or gvr_of(samples()[self.kind_of(controller)])
            for key in self.keys[controller.name]:
                ns, name = key.split("/")
                self.cs.resource(gvr, ns).patch(name, {"metadata": {"labels": {"touched": "yes"}}})

    def close(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(15)
        self.factory.shutdown(5.0)


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Callable[..., World]]:
    worlds: list[World] = []

    def make(names: list[str] | None = None) -> World:
        worlds.append(World(monkeypatch, tmp_path / f"rootfs-{len(worlds)}", names))
        return worlds[-1]

    yield make
    for w in worlds:
        w.close()


def run_two_rounds(w: World) -> None:
    """Every job synced once, the caches caught up with what those syncs created, then every job changed and
    synced again (now with its owned objects in the cache)."""
    w.create_jobs()
    w.start()
    all_keys = [k for keys in w.keys.values() for k in keys]
    w.wait_synced_at_least(dict.fromkeys(all_keys, 1))
    w.wait_caches_caught_up()
    before = {c.name: {k: w.counter.of(c.name, k) for k in w.keys[c.name]} for c in w.controllers}
    w.touch_jobs()
    w.wait_synced_at_least({k: n + 1 for counts in before.values() for k, n in counts.items()})


def test_no_controller_scans_a_namespace_or_a_whole_cache(world):
    w = world()
    assert {c.name for c in w.controllers} >= {"ElasticAIJob", "JointInference", "FederatedLearning", "Model", "Dataset"}
    run_two_rounds(w)
    assert w.detector.scans == []
    # the syncs did their work: every owning controller has created objects for its jobs
    created = {meta.name(o) for o in w.cs.resource(PODS, "").list()["items"]}
    assert any(name.startswith("elasticdl-") for name in created) and any("-train-" in n for n in created)


def scanning_sync(ctx: KindContext[None], key: str, job: dict[str, Any]) -> None:
    """What the test must catch: a sync that lists the namespace's pods and filters them by owner."""
    [p for p in ctx.indexer(PODS).by_index(NAMESPACE_INDEX, meta.namespace(job)) if meta.is_controlled_by(p, job)]


SCANNING: Kind[None] = Kind(name="Scanning", resource=resources.ELASTIC_AI_JOBS, sync=scanning_sync, owns=(PODS,))


def test_the_detector_catches_a_sync_that_lists_a_namespace(world, register_controller):
    register_controller(SCANNING.name, kind_factory(SCANNING))
    w = world([SCANNING.name])
    run_two_rounds(w)
    assert w.detector.scans and all(s.startswith("by_index('namespace',) from globalmanager/") for s in w.detector.scans)
