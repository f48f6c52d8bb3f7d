"""The managers sedna-lc ships, by kind (lower-cased as on the wire): the one list a new manager adds its line to."""

from __future__ import annotations

from . import dataset, federatedlearning, incrementallearning, jointinference, lifelonglearning, model
from .base import ManagerFactory

__all__ = ["MANAGERS"]

MANAGERS: dict[str, ManagerFactory] = {
    dataset.KIND: dataset.DatasetManager,
    model.KIND: model.ModelManager,
    jointinference.KIND: jointinference.JointInferenceManager,
    federatedlearning.KIND: federatedlearning.FederatedLearningManager,
    incrementallearning.KIND: incrementallearning.IncrementalLearningManager,
    lifelonglearning.KIND: lifelonglearning.LifelongLearningManager,
}
