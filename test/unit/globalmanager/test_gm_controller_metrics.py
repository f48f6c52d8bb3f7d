"""Controller metric families: named for what they count."""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, generate_latest

import globalmanager.runtime.controller as controller_module
from apis.fake import FakeClientset
from apis.resources import ELASTIC_AI_JOBS
from globalmanager.runtime.controller import BaseController
from globalmanager.runtime.metrics import controller_metrics
from informers import SharedInformerFactory


class CrashingOnce(BaseController):
    kind = "ElasticAIJob"

    def __init__(self, registry: CollectorRegistry) -> None:
        cs = FakeClientset()
        super().__init__("CrashingOnce", cs, SharedInformerFactory(cs), ELASTIC_AI_JOBS, 1, registry=registry)
        self.calls = 0

    def worker(self) -> None:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("worker bug")

    def sync(self, key: str) -> bool:
        return True


def test_a_restarted_worker_is_counted_as_a_worker_restart(monkeypatch):
    monkeypatch.setattr(controller_module, "WORKER_RESTART_PERIOD", 0.01)
    registry = CollectorRegistry()
    c = CrashingOnce(registry)
    t = threading.Thread(target=c._run_worker)
    t.start()
    t.join(10)
    assert not t.is_alive() and c.calls == 2
    text = generate_latest(registry).decode()
    assert 'sedna_gm_controller_worker_restarts_total{controller="CrashingOnce"} 1.0' in text
    metrics = controller_metrics(registry)
    assert metrics.workers is metrics.worker_restarts  # the former attribute name still works
    c.queue.shut_down()
