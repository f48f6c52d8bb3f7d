"""sedna-gm's controller metrics: the reconcile runner's families under sedna-gm's names
(``sedna_gm_controller_sync_total{controller,result}``, ``sedna_gm_controller_sync_duration_seconds{controller}``,
``sedna_gm_controller_worker_restarts_total{controller}``) and ``sedna_gm_controller_edge_reports_total
{controller,result}``. One set of families per registry."""

from __future__ import annotations

import threading
import weakref

from prometheus_client import REGISTRY, CollectorRegistry, Counter

from reconcile import PrometheusControllerMetrics

__all__ = ["ControllerMetrics", "controller_metrics"]


class ControllerMetrics(PrometheusControllerMetrics):
    def __init__(self, registry: CollectorRegistry) -> None:
        super().__init__(registry, prefix="sedna_gm_")
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
