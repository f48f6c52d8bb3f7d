"""Registers the controllers shipped with sedna-gm (add one line per controller package)."""

from __future__ import annotations

from .dataset.controller import NAME as DATASET_NAME
from .dataset.controller import new_controller as new_dataset_controller
from .elasticdl.controller import NAME as ELASTICDL_NAME
from .elasticdl.controller import new_controller as new_elasticdl_controller
from .federatedlearning import NAME as FEDERATED_LEARNING_NAME
from .federatedlearning import new_controller as new_federated_learning_controller
from .incrementallearning import NAME as INCREMENTAL_LEARNING_NAME
from .incrementallearning import new_controller as new_incremental_learning_controller
from .jointinference import NAME as JOINT_INFERENCE_NAME
from .jointinference import new_controller as new_joint_inference_controller
from .lifelonglearning import NAME as LIFELONG_LEARNING_NAME
from .lifelonglearning import new_controller as new_lifelong_learning_controller
from .model.controller import NAME as MODEL_NAME
from .model.controller import new_controller as new_model_controller
from .registry import register

register(ELASTICDL_NAME, new_elasticdl_controller)
register(DATASET_NAME, new_dataset_controller)
register(MODEL_NAME, new_model_controller)
register(JOINT_INFERENCE_NAME, new_joint_inference_controller)
register(FEDERATED_LEARNING_NAME, new_federated_learning_controller)
register(INCREMENTAL_LEARNING_NAME, new_incremental_learning_controller)
register(LIFELONG_LEARNING_NAME, new_lifelong_learning_controller)
