"""Reports from the edge about a FeatureExtractionService (Sedna's ``upstream.go``, as JointInference's): ``output.
ownerInfo`` without ``startTime``/``updateTime`` becomes ``status.metrics`` (``runtime.reports.owner_info_metrics``).
Sedna's feature-extraction SDK component sends none today, and Go Sedna sends the object to no LC (no downstream),
so no LC can relay one yet; a report that does arrive is shown instead of dropped."""

from __future__ import annotations

from globalmanager.runtime.reports import owner_info_metrics

__all__ = ["update_from_edge"]

update_from_edge = owner_info_metrics
