"""Registers the controllers shipped with sedna-gm (add one line per controller package)."""

from __future__ import annotations

from .dataset.controller import NAME as DATASET_NAME
from .dataset.controller import new_controller as new_dataset_controller
from .elasticdl.controller import NAME as ELASTICDL_NAME
from .elasticdl.controller import new_controller as new_elasticdl_controller
from .featureextraction import NAME as FEATURE_EXTRACTION_NAME
from .featureextraction import new_controller as new_feature_extraction_controller
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
from .objectsearch import NAME as OBJECT_SEARCH_NAME
from .objectsearch import new_controller as new_object_search_controller
from .objecttracking import NAME as OBJECT_TRACKING_NAME
from .objecttracking import new_controller as new_object_tracking_controller
from .registry import register
from .reid import NAME as REID_NAME
from .reid import new_controller as new_reid_controller
from .videoanalytics import NAME as VIDEO_ANALYTICS_NAME
from .videoanalytics import new_controller as new_video_analytics_controller

register(ELASTICDL_NAME, new_elasticdl_controller)
register(DATASET_NAME, new_dataset_controller)
register(MODEL_NAME, new_model_controller)
register(JOINT_INFERENCE_NAME, new_joint_inference_controller)
register(FEDERATED_LEARNING_NAME, new_federated_learning_controller)
register(INCREMENTAL_LEARNING_NAME, new_incremental_learning_controller)
register(LIFELONG_LEARNING_NAME, new_lifelong_learning_controller)
register(FEATURE_EXTRACTION_NAME, new_feature_extraction_controller)
register(OBJECT_SEARCH_NAME, new_object_search_controller)
register(OBJECT_TRACKING_NAME, new_object_tracking_controller)
register(REID_NAME, new_reid_controller)
register(VIDEO_ANALYTICS_NAME, new_video_analytics_controller)
