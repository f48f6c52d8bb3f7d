"""The federated-learning manager (Go Sedna's ``managers/federatedlearning``): holds the FederatedLearningJobs with a
training worker on this node and relays the training workers' reports (one per round: ``results`` with the model and
its metrics, ``ownerInfo`` with ``currentRound``) upstream as Go's LC marshals them: ``{"phase": <kind>, "status":
<status>, "output": {"models": <results> | null, "ownerInfo": <ownerInfo> | null}}``.

The SDK's ``FederatedLearning`` never sets its kind and reports ``ownerKind: "default"``; such reports reach no
manager (as in Go Sedna's LC) and are counted as ``unhandled`` by the worker API.
"""

from __future__ import annotations

from typing import Any

from localcontroller.worker import WorkerMessage

from .relay import RelayManager

__all__ = ["KIND", "FederatedLearningManager"]

KIND = "federatedlearningjob"


class FederatedLearningManager(RelayManager):
    kind = KIND

    def content(self, message: WorkerMessage) -> dict[str, Any]:
        return {"phase": message.kind, "status": message.status,
                "output": {"models": message.results or None, "ownerInfo": message.owner_info or None}}
