"""Typed informers and listers of Sedna's ``sedna.io/v1alpha1`` kinds (as Sedna's generated ``pkg/client``), for any
``informers.SharedInformerFactory``: ``factory.sedna_v1alpha1().incremental_learning_jobs()`` is
``factory.for_resource(INCREMENTAL_LEARNING_JOBS)``, and its lister has ``incremental_learning_jobs(namespace)``.
Listed in ``apis.informer_registry``.
"""

from __future__ import annotations

from typing import Any

from apis import resources as r
from apis.typed_lister import InformerFactory, TypedLister

__all__ = [
    "SednaV1alpha1Informers",
    "DatasetLister",
    "ModelLister",
    "JointInferenceServiceLister",
    "FederatedLearningJobLister",
    "IncrementalLearningJobLister",
    "LifelongLearningJobLister",
    "FeatureExtractionServiceLister",
    "ObjectSearchServiceLister",
    "ObjectTrackingServiceLister",
    "ReidJobLister",
    "VideoAnalyticsJobLister",
]


class DatasetLister(TypedLister):
    def datasets(self, namespace: str) -> Any:
        return self.namespaced(namespace)


class ModelLister(TypedLister):
    def models(self, namespace: str) -> Any:
        return self.namespaced(namespace)


class JointInferenceServiceLister(TypedLister):
    def joint_inference_services(self, namespace: str) -> Any:
        return self.namespaced(namespace)


class FederatedLearningJobLister(TypedLister):
    def federated_learning_jobs(self, namespace: str) -> Any:
        return self.namespaced(namespace)


class IncrementalLearningJobLister(TypedLister):
    def incremental_learning_jobs(self, namespace: str) -> Any:
        return self.namespaced(namespace)


class LifelongLearningJobLister(TypedLister):
    def lifelong_learning_jobs(self, namespace: str) -> Any:
        return self.namespaced(namespace)


class FeatureExtractionServiceLister(TypedLister):
    def feature_extraction_services(self, namespace: str) -> Any:
        return self.namespaced(namespace)


class ObjectSearchServiceLister(TypedLister):
    def object_search_services(self, namespace: str) -> Any:
        return self.namespaced(namespace)


class ObjectTrackingServiceLister(TypedLister):
    def object_tracking_services(self, namespace: str) -> Any:
        return self.namespaced(namespace)


class ReidJobLister(TypedLister):
    def reid_jobs(self, namespace: str) -> Any:
        return self.namespaced(namespace)


class VideoAnalyticsJobLister(TypedLister):
    def video_analytics_jobs(self, namespace: str) -> Any:
        return self.namespaced(namespace)


class SednaV1alpha1Informers:
    """``factory.sedna_v1alpha1()``: the shared informer of each Sedna kind (``.informer()``, ``.lister()``)."""

    def __init__(self, factory: InformerFactory) -> None:
        self._factory = factory

    def datasets(self) -> Any:
        return self._factory.for_resource(r.DATASETS)

    def models(self) -> Any:
        return self._factory.for_resource(r.MODELS)

    def joint_inference_services(self) -> Any:
        return self._factory.for_resource(r.JOINT_INFERENCE_SERVICES)

    def federated_learning_jobs(self) -> Any:
        return self._factory.for_resource(r.FEDERATED_LEARNING_JOBS)

    def incremental_learning_jobs(self) -> Any:
        return self._factory.for_resource(r.INCREMENTAL_LEARNING_JOBS)

    def lifelong_learning_jobs(self) -> Any:
        return self._factory.for_resource(r.LIFELONG_LEARNING_JOBS)

    def feature_extraction_services(self) -> Any:
        return self._factory.for_resource(r.FEATURE_EXTRACTION_SERVICES)

    def object_search_services(self) -> Any:
        return self._factory.for_resource(r.OBJECT_SEARCH_SERVICES)

    def object_tracking_services(self) -> Any:
        return self._factory.for_resource(r.OBJECT_TRACKING_SERVICES)

    def reid_jobs(self) -> Any:
        return self._factory.for_resource(r.REID_JOBS)

    def video_analytics_jobs(self) -> Any:
        return self._factory.for_resource(r.VIDEO_ANALYTICS_JOBS)
