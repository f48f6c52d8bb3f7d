"""What a ``Controller`` reports about its syncs and workers: a small protocol, a no-op default, and a Prometheus
implementation whose metric names the caller chooses (sedna-gm keeps ``sedna_gm_controller_*``).

Results counted: ``success`` (the sync returned), ``error`` (it raised and the key is retried), ``dropped`` (it
raised ``max_retries`` times in a row: given up), ``terminal`` (it raised ``TerminalError``: never retried). The
queue's own metrics (depth, adds, latency...) come from the workqueue metrics provider (``workqueue.set_provider``)."""

from __future__ import annotations

from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = [
    "DROPPED", "ERROR", "SUCCESS", "TERMINAL", "ControllerMetrics", "NoopControllerMetrics",
    "PrometheusControllerMetrics", "SYNC_DURATION_BUCKETS",
]

SUCCESS, ERROR, DROPPED, TERMINAL = "success", "error", "dropped", "terminal"
SYNC_DURATION_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class ControllerMetrics(Protocol):
    def observe_sync(self, controller: str, result: str, seconds: float) -> None:
        """One sync of ``controller`` ended with ``result`` after ``seconds``."""
        ...

    def worker_restarted(self, controller: str) -> None:
        """A worker thread of ``controller`` died of an unexpected error and is restarted."""
        ...


class NoopControllerMetrics:
    def observe_sync(self, controller: str, result: str, seconds: float) -> None:
        pass

    def worker_restarted(self, controller: str) -> None:
        pass


class PrometheusControllerMetrics:
    """``{prefix}controller_sync_total{controller,result}``, ``{prefix}controller_sync_duration_seconds{controller}``
    and ``{prefix}controller_worker_restarts_total{controller}`` on ``registry``. Registering the same names twice on
    one registry fails (Prometheus refuses duplicates): build one per registry and share it between controllers."""

    def __init__(self, registry: CollectorRegistry, prefix: str = "") -> None:
        self.sync_total = Counter(
            f"{prefix}controller_sync",
            "Syncs per controller by result: success, error (retried with rate limiting), dropped (after max "
            "retries), terminal (a TerminalError: never retried).",
            ["controller", "result"],
            registry=registry,
        )
        self.sync_duration = Histogram(
            f"{prefix}controller_sync_duration_seconds",
            "Time a controller's sync(key) took.",
            ["controller"],
            buckets=SYNC_DURATION_BUCKETS,
            registry=registry,
        )
        self.worker_restarts = Counter(
            f"{prefix}controller_worker_restarts",
            "Worker threads restarted after an unexpected error.",
            ["controller"],
            registry=registry,
        )

    def observe_sync(self, controller: str, result: str, seconds: float) -> None:
        self.sync_total.labels(controller=controller, result=result).inc()
        self.sync_duration.labels(controller=controller).observe(seconds)

    def worker_restarted(self, controller: str) -> None:
        self.worker_restarts.labels(controller=controller).inc()
