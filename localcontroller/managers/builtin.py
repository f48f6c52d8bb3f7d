"""Registers the managers shipped with sedna-lc (one line per manager module)."""

from __future__ import annotations

from .base import register
from .dataset import KIND as DATASET_KIND
from .dataset import DatasetManager
from .federatedlearning import KIND as FEDERATED_LEARNING_KIND
from .federatedlearning import FederatedLearningManager
from .incrementallearning import KIND as IL_KIND
from .incrementallearning import IncrementalLearningManager
from .jointinference import KIND as JOINT_INFERENCE_KIND
from .jointinference import JointInferenceManager
from .lifelonglearning import KIND as LL_KIND
from .lifelonglearning import LifelongLearningManager
from .model import KIND as MODEL_KIND
from .model import ModelManager

register(DATASET_KIND, DatasetManager)
register(MODEL_KIND, ModelManager)
register(JOINT_INFERENCE_KIND, JointInferenceManager)
register(FEDERATED_LEARNING_KIND, FederatedLearningManager)
register(IL_KIND, IncrementalLearningManager)
register(LL_KIND, LifelongLearningManager)
