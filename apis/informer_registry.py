"""Typed informer groups and listers that API packages define next to their types, for the generic ``informers``.

client-go keeps the generated informers and listers of a custom resource in the CRD's own project; here an API
package (``apis.sedna``, ``apis.elasticdl``) defines them and ``GROUPS``/``LISTERS`` list them, so that
``informers.SharedInformerFactory`` finds them without knowing any kind:

* ``GROUPS["sedna_v1alpha1"] = SednaV1alpha1Informers`` makes ``factory.sedna_v1alpha1()`` return
  ``SednaV1alpha1Informers(factory)``, whose methods return ``factory.for_resource(gvr)``;
* ``LISTERS[gvr] = JobLister`` makes the lister of ``gvr`` a ``JobLister`` wrapping the generic one, so that
  ``lister.jobs(namespace)`` works next to ``list``, ``get`` and ``namespaced``.

A controller author adds a kind of their own at run time with ``register_group`` and ``register_lister``.
``apis`` never imports ``informers``: a group only needs the factory's ``for_resource``, a typed lister only the
generic lister's ``list``/``get``/``namespaced``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import resources as r
from .elasticdl import informers as elasticdl
from .resources import GroupVersionResource
from .sedna import informers as sedna
from .typed_lister import GenericLister, TypedLister

__all__ = [
    "GROUPS",
    "LISTERS",
    "GenericLister",
    "TypedLister",
    "group",
    "register_group",
    "register_lister",
    "typed_lister",
]

GROUPS: dict[str, Callable[[Any], Any]] = {
    "sedna_v1alpha1": sedna.SednaV1alpha1Informers,
    "elasticdl_v1alpha1": elasticdl.ElasticdlV1alpha1Informers,
}

LISTERS: dict[GroupVersionResource, Callable[[GenericLister], Any]] = {
    r.DATASETS: sedna.DatasetLister,
    r.MODELS: sedna.ModelLister,
    r.JOINT_INFERENCE_SERVICES: sedna.JointInferenceServiceLister,
    r.FEDERATED_LEARNING_JOBS: sedna.FederatedLearningJobLister,
    r.INCREMENTAL_LEARNING_JOBS: sedna.IncrementalLearningJobLister,
    r.LIFELONG_LEARNING_JOBS: sedna.LifelongLearningJobLister,
    r.FEATURE_EXTRACTION_SERVICES: sedna.FeatureExtractionServiceLister,
    r.OBJECT_SEARCH_SERVICES: sedna.ObjectSearchServiceLister,
    r.OBJECT_TRACKING_SERVICES: sedna.ObjectTrackingServiceLister,
    r.REID_JOBS: sedna.ReidJobLister,
    r.VIDEO_ANALYTICS_JOBS: sedna.VideoAnalyticsJobLister,
    r.ELASTIC_AI_JOBS: elasticdl.ElasticAIJobLister,
}


def register_group(method: str, make: Callable[[Any], Any]) -> None:
    """``factory.<method>()`` returns ``make(factory)`` (for every ``SharedInformerFactory``)."""
    if not method.isidentifier() or method.startswith("_"):
        raise ValueError(f"group accessor name must be a public identifier, got {method!r}")
    GROUPS[method] = make


def group(method: str) -> Callable[[Any], Any] | None:
    """The group registered under ``method``, or None."""
    return GROUPS.get(method)


def register_lister(gvr: GroupVersionResource, wrap: Callable[[GenericLister], Any]) -> None:
    """Listers of ``gvr`` are ``wrap(generic_lister)``."""
    LISTERS[gvr] = wrap


def typed_lister(gvr: GroupVersionResource) -> Callable[[GenericLister], Any] | None:
    """The typed lister registered for ``gvr``, or None."""
    return LISTERS.get(gvr)
