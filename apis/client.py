"""The clientset interface shared by the real clientset (over HTTP) and the fake one (over an object tracker).

A resource client is bound to one resource and one namespace ("" = all namespaces for list/watch; for create and
update the object's own ``metadata.namespace`` is used). Objects go in and come out as plain dicts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from . import resources as r
from .resources import GroupVersionResource, ResourceInfo
from .watch import ListOptions, Watch

__all__ = [
    "ResourceClient", "ClientsetBase", "PatchBody", "PATCH_TYPES", "PATCH_CONTENT_TYPES", "PROPAGATION_POLICIES",
]

PATCH_CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
PATCH_TYPES = tuple(PATCH_CONTENT_TYPES)
PROPAGATION_POLICIES = ("Orphan", "Background", "Foreground")


# A patch: the JSON object of a merge, strategic-merge or apply patch, the operations of a JSON patch, or either
# one already encoded.
PatchBody = dict[str, Any] | list[dict[str, Any]] | str | bytes


class ResourceClient(ABC):
    """Every verb on one resource in one namespace."""

    def __init__(self, info: ResourceInfo, namespace: str = "") -> None:
        if not info.namespaced and namespace:
            raise ValueError(f"{info.gvr.group_resource} is cluster-scoped: no namespace may be given (got {namespace!r})")
        self.info = info
        self.namespace = namespace

    @property
    def gvr(self) -> GroupVersionResource:
        return self.info.gvr

    # -- helpers for implementations ------------------------------------------------------------------------------
    def _namespace_for(self, obj: dict[str, Any] | None = None) -> str:
        """The namespace a single-object request goes to; raises ``ValueError`` when none can be found."""
        if not self.info.namespaced:
            return ""
        obj_ns = ((obj or {}).get("metadata") or {}).get("namespace") or ""
        if self.namespace and obj_ns and obj_ns != self.namespace:
            from .errors import BadRequestError

            raise BadRequestError(
                400,
                "BadRequest",
                f"the namespace of the provided object ({obj_ns}) does not match the namespace sent on the request "
                f"({self.namespace})",
            )
        ns = self.namespace or obj_ns
        if not ns:
            raise ValueError(f"{self.info.gvr.group_resource} is namespaced: a namespace is required for this call")
        return ns

    @staticmethod
    def _options(options: ListOptions | None, kwargs: dict[str, Any]) -> ListOptions:
        if options is not None and kwargs:
            raise TypeError("pass either a ListOptions or keyword options, not both")
        return options if options is not None else ListOptions.from_kwargs(**kwargs)

    @staticmethod
    def _check_patch_options(patch_type: str, force: bool) -> None:
        """Refuses an unknown ``patch_type``, and ``force`` with anything but an apply patch."""
        if patch_type not in PATCH_CONTENT_TYPES:
            raise ValueError(f"unknown patch_type {patch_type!r}: expected one of {', '.join(PATCH_TYPES)}")
        if force and patch_type != "apply":
            raise ValueError("force is only valid with patch_type='apply'")

    @staticmethod
    def _check_propagation_policy(propagation_policy: str | None) -> None:
        if propagation_policy is not None and propagation_policy not in PROPAGATION_POLICIES:
            raise ValueError(
                f"invalid propagation_policy {propagation_policy!r}: expected one of {', '.join(PROPAGATION_POLICIES)}"
            )

    # -- verbs -----------------------------------------------------------------------------------------------------
    @abstractmethod
    def get(self, name: str) -> dict[str, Any]: ...

    @abstractmethod
    def list(self, options: ListOptions | None = None, **kwargs: Any) -> dict[str, Any]:
        """The List object: ``items``, ``metadata.resourceVersion``, ``metadata.continue``."""

    @abstractmethod
    def watch(self, options: ListOptions | None = None, **kwargs: Any) -> Watch: ...

    @abstractmethod
    def create(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    @abstractmethod
    def update(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    @abstractmethod
    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    @abstractmethod
    def patch(
        self,
        name: str,
        body: PatchBody,
        patch_type: str = "merge",
        subresource: str | None = None,
        *,
        field_manager: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        """Patch ``name`` with a ``patch_type`` body; ``field_manager`` and ``force`` (apply only) as the API's
        query parameters."""

    @abstractmethod
    def delete(
        self,
        name: str,
        propagation_policy: str | None = None,
        preconditions: dict[str, Any] | None = None,
        *,
        grace_period_seconds: int | None = None,
    ) -> dict[str, Any]:
        """Delete one object; returns the object while finalizers run, else a Status."""

    @abstractmethod
    def delete_collection(
        self, options: ListOptions | None = None, propagation_policy: str | None = None, **kwargs: Any
    ) -> None:
        """Delete every object the list with ``options`` (or keyword list options) selects."""


class _Group:
    """Typed accessors of one API group/version, e.g. ``cs.core_v1().pods("default")``."""

    def __init__(self, cs: ClientsetBase) -> None:
        self._cs = cs


class CoreV1(_Group):
    def pods(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.PODS, namespace)

    def nodes(self) -> ResourceClient:
        return self._cs.resource(r.NODES)

    def services(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.SERVICES, namespace)

    def secrets(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.SECRETS, namespace)

    def config_maps(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.CONFIG_MAPS, namespace)

    def events(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.EVENTS, namespace)

    def namespaces(self) -> ResourceClient:
        return self._cs.resource(r.NAMESPACES)


class AppsV1(_Group):
    def deployments(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.DEPLOYMENTS, namespace)


class CoordinationV1(_Group):
    def leases(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.LEASES, namespace)


class AutoscalingV2(_Group):
    def horizontal_pod_autoscalers(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.HORIZONTAL_POD_AUTOSCALERS, namespace)


class SednaV1alpha1(_Group):
    def datasets(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.DATASETS, namespace)

    def models(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.MODELS, namespace)

    def joint_inference_services(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.JOINT_INFERENCE_SERVICES, namespace)

    def federated_learning_jobs(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.FEDERATED_LEARNING_JOBS, namespace)

    def incremental_learning_jobs(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.INCREMENTAL_LEARNING_JOBS, namespace)

    def lifelong_learning_jobs(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.LIFELONG_LEARNING_JOBS, namespace)

    def feature_extraction_services(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.FEATURE_EXTRACTION_SERVICES, namespace)

    def object_search_services(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.OBJECT_SEARCH_SERVICES, namespace)

    def object_tracking_services(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.OBJECT_TRACKING_SERVICES, namespace)

    def reid_jobs(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.REID_JOBS, namespace)

    def video_analytics_jobs(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.VIDEO_ANALYTICS_JOBS, namespace)


class ElasticdlV1alpha1(_Group):
    def elastic_ai_jobs(self, namespace: str = "") -> ResourceClient:
        return self._cs.resource(r.ELASTIC_AI_JOBS, namespace)


class ClientsetBase(ABC):
    """``resource(gvr, namespace)`` plus the typed group accessors."""

    @abstractmethod
    def resource(self, gvr: GroupVersionResource, namespace: str = "") -> ResourceClient: ...

    def core_v1(self) -> CoreV1:
        return CoreV1(self)

    def apps_v1(self) -> AppsV1:
        return AppsV1(self)

    def coordination_v1(self) -> CoordinationV1:
        return CoordinationV1(self)

    def autoscaling_v2(self) -> AutoscalingV2:
        return AutoscalingV2(self)

    def sedna_v1alpha1(self) -> SednaV1alpha1:
        return SednaV1alpha1(self)

    def elasticdl_v1alpha1(self) -> ElasticdlV1alpha1:
        return ElasticdlV1alpha1(self)
