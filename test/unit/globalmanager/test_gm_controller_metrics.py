"""Controller metric families: named for what they count, under sedna-gm's names (the runner's tests check the
mechanics: test/unit/reconcile)."""

from __future__ import annotations

import threading
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from testkit import wait_for

from apis.fake import FakeClientset
from apis.resources import ELASTIC_AI_JOBS
from globalmanager.runtime import JobController, Kind, KindContext
from globalmanager.runtime.metrics import controller_metrics
from informers import SharedInformerFactory


def _sync_nothing(ctx: KindContext[None], key: str, job: dict[str, Any]) -> None:
    return None


def quiet_controller(registry: CollectorRegistry) -> JobController[None]:
    cs = FakeClientset()
    kind: Kind[None] = Kind(name="CrashingOnce", resource=ELASTIC_AI_JOBS, sync=_sync_nothing)
    return JobController(kind, cs, SharedInformerFactory(cs), 1, registry=registry)


def test_a_restarted_worker_is_counted_as_a_worker_restart():
    registry = CollectorRegistry()
    c = quiet_controller(registry)
    calls: list[int] = []
    real_worker = c.loop.worker

    def crashing_once() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("worker bug")
        real_worker()

    c.loop.worker = crashing_once  # type: ignore[method-assign]
    c.loop.restart_period = 0.01
    stop = threading.Event()
    c.informer_factory.start(stop)
    runner = threading.Thread(target=c.run, args=(stop,))
    runner.start()
    wait_for("the worker restarted", lambda: len(calls) == 2, timeout=10)
    text = generate_latest(registry).decode()
    assert 'sedna_gm_controller_worker_restarts_total{controller="CrashingOnce"} 1.0' in text
    stop.set()
    runner.join(10)
    c.informer_factory.shutdown()
    assert not runner.is_alive()
    metrics = controller_metrics(registry)
    assert metrics.workers is metrics.worker_restarts  # the former attribute name still works


def test_sedna_gm_keeps_its_metric_names():
    registry = CollectorRegistry()
    metrics = controller_metrics(registry)
    metrics.observe_sync("Kind", "success", 0.01)
    metrics.worker_restarted("Kind")
    metrics.edge_reports.labels(controller="Kind", result="applied").inc()
    names = {sample.name for family in registry.collect() for sample in family.samples}
    assert {"sedna_gm_controller_sync_total", "sedna_gm_controller_sync_duration_seconds_count",
            "sedna_gm_controller_sync_duration_seconds_bucket", "sedna_gm_controller_worker_restarts_total",
            "sedna_gm_controller_edge_reports_total"} <= names
