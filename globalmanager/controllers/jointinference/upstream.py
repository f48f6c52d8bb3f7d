"""Reports from the edge about a JointInferenceService (Sedna's ``upstream.go``): ``{"phase", "status", "output":
{"ownerInfo": {...}}}`` as the LC relays its workers' ``LCReporter`` (``inferenceNumber``, ``hardExampleNumber``,
``uploadCloudRatio``...). ``ownerInfo`` without ``startTime``/``updateTime`` becomes ``status.metrics``
(``runtime.reports.owner_info_metrics``); only ``metrics`` is written, so conditions and counts written meanwhile
are kept."""

from __future__ import annotations

from globalmanager.runtime.reports import owner_info_metrics

__all__ = ["update_from_edge"]

update_from_edge = owner_info_metrics
