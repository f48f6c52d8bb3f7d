"""Controller metrics: ``sedna_gm_controller_sync_total{controller,result}``,
``sedna_gm_controller_sync_duration_seconds{controller}``, ``sedna_gm_controller_worker_restarts_total{controller}``
and ``sedna_gm_controller_edge_reports_total{controller,result}``. One set of families per registry."""

from __future__ import annotations

import threading
import weakref

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram

__all__ = ["ControllerMetrics", "controller_metrics"]

_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class ControllerMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.sync_total = Counter(
            "sedna_gm_controller_sync",
            "Syncs per controller by result: success, error (retried with rate limiting), dropped (after max retries).",
            ["controller", "result"],
            registry=registry,
        )
        self.sync_duration = Histogram(
            "sedna_gm_controller_sync_duration_seconds",
            "Time a controller's sync(key) took.",
            ["controller"],
            buckets=_BUCKETS,
            registry=registry,
        )
        self.worker_restarts = Counter(
            "sedna_gm_controller_worker_restarts",
            "Worker threads restarted after an unexpected error.",
            ["controller"],
            registry=registry,
        )
        self.edge_reports = Counter(
            "sedna_gm_controller_edge_reports",
            "Edge reports a controller handled, by result: applied, resent (recorded already), out_of_stage (it does "
            "not answer the object's current stage: not applied).",
            ["controller", "result"],
            registry=registry,
        )

    @property
    def workers(self) -> Counter:
        """Former name of ``worker_restarts``."""
        return self.worker_restarts


_lock = threading.Lock()
_by_registry: weakref.WeakKeyDictionary[CollectorRegistry, ControllerMetrics] = weakref.WeakKeyDictionary()


def controller_metrics(registry: CollectorRegistry | None = None) -> ControllerMetrics:
    """The controller metric families registered on ``registry`` (default: the global registry)."""
    registry = REGISTRY if registry is None else registry
    with _lock:
        found = _by_registry.get(registry)
        if found is None:
            found = ControllerMetrics(registry)
            _by_registry[registry] = found
        return found
