"""The joint-inference manager (Go Sedna's ``managers/jointinference``): holds the JointInferenceServices whose edge
worker runs on this node and relays the edge worker's reports (``LCReporter``: ``ownerInfo`` with
``inferenceNumber``, ``hardExampleNumber``, ``uploadCloudRatio`` every ``LC_PERIOD``) upstream as Go's LC marshals
them: ``{"phase": <kind>, "status": <status>, "output": {"models": null, "ownerInfo": <ownerInfo> | null}}``.

The SDK's edge worker reports ``ownerName: "sedna"`` when its pod has no ``JOB_NAME`` (the SDK's default shadows
``SERVICE_NAME``); as in Go Sedna such a report reaches no service: it is dropped here, with that reason logged.
"""

from __future__ import annotations

from .relay import RelayManager

__all__ = ["KIND", "JointInferenceManager"]

KIND = "jointinferenceservice"


class JointInferenceManager(RelayManager):
    kind = KIND
    relays_results = False
