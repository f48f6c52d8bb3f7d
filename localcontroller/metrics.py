"""sedna-lc metrics (served on ``/metrics``)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge

__all__ = ["LCMetrics"]


class LCMetrics:
    def __init__(self, registry: CollectorRegistry, pending_reports: Callable[[], float],
                 kept_worker_reports: Callable[[], float] = lambda: 0) -> None:
        self.registry = registry
        self.gm_connected = Gauge("sedna_lc_gm_connected", "1 while connected to the GM, else 0.", registry=registry)
        self.upstream_pending = Gauge(
            "sedna_lc_upstream_pending", "Reports in the outbox not yet delivered (acked) to the GM.", registry=registry
        )
        self.upstream_pending.set_function(pending_reports)
        self.kept_worker_reports = Gauge(
            "sedna_lc_kept_worker_reports", "Worker reports kept for a job this node does not hold yet.",
            registry=registry,
        )
        self.kept_worker_reports.set_function(kept_worker_reports)
        self.kept_worker_reports_dropped = Counter(
            "sedna_lc_kept_worker_reports_dropped",
            "Worker reports kept for a job this node did not hold, dropped, by reason (expired: their job did not "
            "arrive in time; evicted: room made for another client's report; deleted: their job was deleted).",
            ["reason"],
            registry=registry,
        )
        self.worker_reports = Counter(
            "sedna_lc_worker_reports",
            "Worker reports received on the worker API, by result (ok: relayed; pending: kept for a job this node "
            "does not hold yet; unhandled: no manager for its ownerKind; dropped: no ownerName; refused: 503, the "
            "outbox or the pending reports are full; bad_request).",
            ["result"],
            registry=registry,
        )
