"""The federated-learning manager (Go Sedna's ``managers/federatedlearning``): holds the FederatedLearningJobs with a
training worker on this node and relays the training workers' reports (one per round: ``results`` with the model and
its metrics, ``ownerInfo`` with ``currentRound``) upstream as Go's LC marshals them: ``{"phase": <kind>, "status":
<status>, "output": {"models": <results> | null, "ownerInfo": <ownerInfo> | null}}``.

The SDK's ``FederatedLearning`` never sets its kind and reports ``ownerKind: "default"``; such reports reach no
manager (as in Go Sedna's LC) and are counted as ``unhandled`` by the worker API.
"""

from __future__ import annotations

from .relay import RelayManager

__all__ = ["KIND", "FederatedLearningManager"]

KIND = "federatedlearningjob"


class FederatedLearningManager(RelayManager):
    kind = KIND
    relays_results = True
