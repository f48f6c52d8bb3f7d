"""sedna-gm's metrics server: ``/metrics`` (Prometheus text) plus ``/healthz``, ``/livez`` and ``/readyz`` on
``metricsAddress`` (the contract of Go-style deployments that probe the metrics port); the kubelet's probes have a
listener of their own on ``healthProbeAddress`` (``reconcile.probes.ProbeServer`` with the same checks).

Served by waitress through ``apis.httpserver``: a connection idle for ``request_timeout`` seconds is closed, a request
not complete within it (its headers within 5 s) is answered 408, and one client holds at most 64 connections, so a
slow or stuck client neither blocks other requests nor holds a connection for long.
"""

from __future__ import annotations

import math

from prometheus_client import REGISTRY, CollectorRegistry

from apis.httpserver import HTTPLimits
from reconcile.probes import Check, HealthChecks, ProbeServer

__all__ = ["Check", "OperabilityServer"]


class OperabilityServer(ProbeServer):
    """The metrics server (``ProbeServer`` with a registry, the process-wide one by default); ``start()`` binds (port 0
    picks a free one) and logs ``listening`` with ``server=metrics``; ``stop()`` closes."""

    def __init__(self, address: str, registry: CollectorRegistry | None = None, request_timeout: float = 30.0,
                 checks: HealthChecks | None = None) -> None:
        limits = HTTPLimits(max_body_bytes=64 * 1024, connection_limit=128, threads=4,
                            idle_timeout=max(1, math.ceil(request_timeout)), request_deadline=request_timeout)
        super().__init__(address, checks, REGISTRY if registry is None else registry, limits, name="metrics")
        self.request_timeout = request_timeout
