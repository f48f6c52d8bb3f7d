"""Edge-mesh Services of Sedna workers (Sedna's ``CreateEdgeMeshService``).

``edge_mesh_service(owner, worker_type, port)``: a ClusterIP Service ``lower(<owner>-<workerType>)`` with a controller
ownerReference, labels and selector = the worker's generated labels, one port ``{name: tcp-0, protocol: TCP, port,
targetPort: port}`` (EdgeMesh needs the ``<protocol>-<suffix>`` port name). Workers reach it as
``edge_mesh_service_host(owner, worker_type)`` = ``<service>.<namespace>``. ``service_name_error`` says why the name
cannot be a Service name (DNS-1035 label, at most 63 characters), so that a kind reports it instead of failing every
sync. ``ensure_service`` creates it when missing. ``check_model_worker_spec`` is the spec check of a kind whose one
worker runs a Model behind such a Service (FeatureExtraction, VideoAnalytics).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from apis import meta
from apis.resources import SERVICES
from apis.sedna.v1alpha1 import ModelRef

from .labels import generate_labels
from .names import dns1035_label_error
from .owned_errors import NotOwnedError

if TYPE_CHECKING:
    from .context import KindContext

__all__ = [
    "check_model_worker_spec",
    "edge_mesh_service",
    "edge_mesh_service_host",
    "edge_mesh_service_name",
    "ensure_service",
    "service_name_error",
]


class ModelWorkerSpec(Protocol):
    """The typed spec of a kind whose one worker runs a Model (read-only: any view with these fields)."""

    @property
    def template(self) -> object: ...

    @property
    def model(self) -> ModelRef | None: ...


SpecT = TypeVar("SpecT", bound=ModelWorkerSpec)


def check_model_worker_spec(owner: Mapping[str, Any], spec: SpecT | None, worker_type: str) -> SpecT:
    """``spec``, or ``ValueError`` naming what is missing: ``spec.template``, ``spec.model.name``, or a name of
    ``owner`` that cannot name its worker's Service."""
    if spec is None or spec.template is None:
        raise ValueError("spec.template is required")
    if spec.model is None or not spec.model.name:
        raise ValueError("spec.model.name is required")
    problem = service_name_error(owner, worker_type)
    if problem:
        raise ValueError(problem)
    return spec


def edge_mesh_service_name(owner: Mapping[str, Any], worker_type: str) -> str:
    return f"{meta.name(owner)}-{worker_type}".lower()


def edge_mesh_service_host(owner: Mapping[str, Any], worker_type: str) -> str:
    return f"{edge_mesh_service_name(owner, worker_type)}.{meta.namespace(owner)}"


def service_name_error(owner: Mapping[str, Any], worker_type: str) -> str:
    """``""`` when the Service name is valid, else the problem, naming ``metadata.name``."""
    problem = dns1035_label_error(edge_mesh_service_name(owner, worker_type))
    return f"metadata.name: the {worker_type} service name {problem}" if problem else ""


def edge_mesh_service(owner: Mapping[str, Any], worker_type: str, port: int) -> dict[str, Any]:
    labels = generate_labels(owner, worker_type)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": edge_mesh_service_name(owner, worker_type),
            "namespace": meta.namespace(owner),
            "ownerReferences": [meta.new_controller_ref(owner)],
            "labels": labels,
        },
        "spec": {
            "selector": dict(labels),
            "ports": [{"name": "tcp-0", "protocol": "TCP", "port": port, "targetPort": port}],
        },
    }


def ensure_service(ctx: KindContext[Any], job: Mapping[str, Any], worker_type: str, port: int) -> str:
    """Create the job's edge-mesh Service when it is not in the cache; returns its host ``<service>.<ns>``."""
    desired = edge_mesh_service(job, worker_type, port)
    existing = ctx.get_cached(SERVICES, meta.namespace(desired), meta.name(desired))
    if existing is None:
        ctx.create_owned(SERVICES, job, desired, f"{worker_type.lower()} service")
    elif not meta.is_controlled_by(existing, job):
        raise NotOwnedError(f"service {meta.namespace(existing)}/{meta.name(existing)} exists and is not controlled "
                            f"by {job.get('kind')} {meta.name(job)}")
    return edge_mesh_service_host(job, worker_type)
