"""BaseController log lines and metric help: what an operator reads must be true and name the object."""

from __future__ import annotations

import threading

import structlog
from prometheus_client import CollectorRegistry

from apis.fake import FakeClientset
from apis.resources import ELASTIC_AI_JOBS
from globalmanager.runtime.controller import BaseController
from globalmanager.runtime.metrics import ControllerMetrics
from informers import SharedInformerFactory


class Quiet(BaseController):
    kind = "ElasticAIJob"

    def __init__(self) -> None:
        cs = FakeClientset()
        super().__init__("Quiet", cs, SharedInformerFactory(cs), ELASTIC_AI_JOBS, 1, registry=CollectorRegistry())

    def sync(self, key):
        return True


def test_metric_help_lists_only_results_that_are_emitted():
    registry = CollectorRegistry()
    ControllerMetrics(registry)
    help_text = {m.name: m.documentation for m in registry.collect()}["sedna_gm_controller_sync"]
    assert "requeue" not in help_text
    for result in ("success", "error", "dropped"):
        assert result in help_text


def test_an_object_without_a_key_is_named_in_the_warning():
    c = Quiet()
    with structlog.testing.capture_logs() as logs:
        c.enqueue_controller({"kind": "ElasticAIJob", "spec": {"jobArgs": []}})  # no metadata at all
    c.queue.shut_down()
    warning = [entry for entry in logs if entry["event"] == "cannot get key for object"]
    assert len(warning) == 1 and "ElasticAIJob" in warning[0]["object"]


def test_stopping_before_the_caches_synced_is_not_an_error():
    c = Quiet()  # informers never started: the caches never sync
    stop = threading.Event()
    stop.set()
    with structlog.testing.capture_logs() as logs:
        c.run(stop)
    assert [e for e in logs if e["log_level"] == "error"] == []
    assert any(e["event"] == "stopped before the caches synced" for e in logs)
