"""Typed informer and lister of ElasticDL's ``elasticdl.org/v1alpha1`` ElasticAIJob, for any
``informers.SharedInformerFactory``: ``factory.elasticdl_v1alpha1().elastic_ai_jobs()`` is
``factory.for_resource(ELASTIC_AI_JOBS)``, and its lister has ``elastic_ai_jobs(namespace)``. Listed in
``apis.informer_registry``.
"""

from __future__ import annotations

from typing import Any

from apis import resources as r
from apis.typed_lister import InformerFactory, TypedLister

__all__ = ["ElasticAIJobLister", "ElasticdlV1alpha1Informers"]


class ElasticAIJobLister(TypedLister):
    def elastic_ai_jobs(self, namespace: str) -> Any:
        return self.namespaced(namespace)


class ElasticdlV1alpha1Informers:
    """``factory.elasticdl_v1alpha1()``: the shared ElasticAIJob informer (``.informer()``, ``.lister()``)."""

    def __init__(self, factory: InformerFactory) -> None:
        self._factory = factory

    def elastic_ai_jobs(self) -> Any:
        return self._factory.for_resource(r.ELASTIC_AI_JOBS)
