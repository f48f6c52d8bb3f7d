"""HorizontalPodAutoscalers (autoscaling/v2) of workers' Deployments (Sedna's ``CreateHPA``/``UpdateHPA``/``DeleteHPA``).

``new_hpa(owner, deployment_name, worker_type, hpa)``: ``hpa-<deployment>`` with a controller ownerReference, the
worker's labels, ``scaleTargetRef`` ``apps/v1 Deployment <deployment>`` and ``minReplicas``/``maxReplicas``/
``metrics``/``behavior`` from the kind's ``hpa`` spec. ``ensure_hpa`` makes the cluster match: created when the spec
asks for one and it is missing, updated in place when the spec changed (Sedna's update also creates a missing one),
deleted when the spec no longer has one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from apis import meta
from apis.resources import HORIZONTAL_POD_AUTOSCALERS

from .labels import generate_labels
from .owned_errors import NotOwnedError
from .revisions import spec_hash_matches, stamp_spec_hash

if TYPE_CHECKING:
    from .context import KindContext

__all__ = ["ensure_hpa", "hpa_name", "new_hpa"]

HPAS = HORIZONTAL_POD_AUTOSCALERS


def hpa_name(deployment_name: str) -> str:
    return f"hpa-{deployment_name}"


def new_hpa(owner: Mapping[str, Any], deployment_name: str, worker_type: str, hpa: Mapping[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "maxReplicas": hpa.get("maxReplicas"),
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment_name},
    }
    for field in ("minReplicas", "metrics", "behavior"):
        if hpa.get(field):
            spec[field] = meta.deep_copy(hpa[field])
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": hpa_name(deployment_name),
            "namespace": meta.namespace(owner),
            "ownerReferences": [meta.new_controller_ref(owner)],
            "labels": generate_labels(owner, worker_type),
        },
        "spec": spec,
    }


def ensure_hpa(
    ctx: KindContext[Any], job: Mapping[str, Any], deployment_name: str, worker_type: str,
    hpa: Mapping[str, Any] | None,
) -> None:
    """Create, update or delete the HPA of ``deployment_name`` so that it follows ``hpa`` (``None``: no HPA)."""
    ns, name = meta.namespace(job), hpa_name(deployment_name)
    existing = ctx.get_cached(HPAS, ns, name)
    if existing is not None and not meta.is_controlled_by(existing, job):
        raise NotOwnedError(f"horizontalpodautoscaler {ns}/{name} exists and is not controlled by "
                            f"{job.get('kind')} {meta.name(job)}")
    if not hpa:
        if existing is not None and meta.deletion_timestamp(existing) is None:
            ctx.delete_object(HPAS, ns, name)
            ctx.events.event(job, "Normal", "SuccessfulDelete", f"deleted horizontalpodautoscaler {name}")
        return
    desired = new_hpa(job, deployment_name, worker_type, hpa)
    stamp_spec_hash(desired, hpa)
    if existing is None:
        ctx.create_owned(HPAS, job, desired, "horizontalpodautoscaler")
    elif not spec_hash_matches(existing, hpa):
        updated = meta.deep_copy(existing)
        updated["metadata"]["labels"] = desired["metadata"]["labels"]
        updated["metadata"]["annotations"] = {**(updated["metadata"].get("annotations") or {}),
                                              **desired["metadata"]["annotations"]}
        updated["spec"] = desired["spec"]
        ctx.update_owned(HPAS, job, updated, "horizontalpodautoscaler")
