"""Reports from the edge about a JointInferenceService (Sedna's ``upstream.go``): ``{"phase", "status", "output":
{"ownerInfo": {...}}}`` as the LC relays its workers' ``LCReporter`` (``inferenceNumber``, ``hardExampleNumber``,
``uploadCloudRatio``...). ``ownerInfo`` without ``startTime``/``updateTime`` becomes ``status.metrics``
(``convert_map_to_metrics``); only ``metrics`` is written, so conditions and counts written meanwhile are kept."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from globalmanager.runtime.edge import UpstreamMessage
from globalmanager.runtime.status import convert_map_to_metrics

if TYPE_CHECKING:
    from .controller import JointInferenceController

__all__ = ["update_from_edge"]

_IGNORED_KEYS = ("startTime", "updateTime")


def update_from_edge(controller: JointInferenceController, msg: UpstreamMessage) -> None:
    key = f"{msg.namespace}/{msg.name}"
    output = msg.content.get("output")
    info = output.get("ownerInfo") if isinstance(output, Mapping) else None
    if not isinstance(info, Mapping) or not info:
        controller.log_report_dropped(msg, "no output.ownerInfo in the report")
        return
    metrics = convert_map_to_metrics({k: v for k, v in info.items() if k not in _IGNORED_KEYS})
    service = controller.get_job(key)
    if service is None:
        controller.log_report_dropped(msg, "no such JointInferenceService")
        return

    def mutate(obj: dict[str, Any]) -> bool:
        status = obj.setdefault("status", {})
        if status.get("metrics") == metrics:
            return False
        status["metrics"] = metrics
        return True

    controller.update_job_status(service, mutate)
