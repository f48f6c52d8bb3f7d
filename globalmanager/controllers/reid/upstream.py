"""Reports from the edge about a ReidJob or a VideoAnalyticsJob: Go Sedna parses and discards them; here each becomes
a condition with the report in ``data`` (``runtime.reports.report_condition``). Sedna's multi-edge-inference SDK
components send none today, and Go Sedna sends these jobs to no LC, so no LC can relay one yet."""

from __future__ import annotations

from globalmanager.runtime.reports import report_condition

__all__ = ["update_from_edge"]

update_from_edge = report_condition
