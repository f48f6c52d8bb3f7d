"""Deployments of a Sedna worker (Sedna's ``CreateDeploymentWithTemplate`` / ``UpdateDeploymentWithTemplate``) and
what their status says.

* ``deployment_from_template(owner, spec, param)``: ``<owner>-deployment-<lower(workerType)>``, a controller
  ownerReference, ``replicas`` (when given) and ``template`` from ``spec``; ``inject_deployment_param`` adds storage
  (when ``param.mounts`` is set), the generated labels and ``app.sedna.io=<owner>-<workerType>-svc`` to the
  Deployment, its template and its selector, and ``param.env`` to every container.
* ``ensure_deployment(ctx, job, name, source, build)``: create it when missing (counted against the
  recreation TTL), update it in place (template and labels; replicas are left to the HPA or the user) when
  ``source`` — what it is built from — changed; an object of that name not controlled by the job raises
  ``NotOwnedError``. ``scale_deployment`` sets its ``replicas`` alone (no rollout) when the job's spec names them.
* ``deployment_failure(d)``: why a Deployment failed (``Progressing=False`` with ``ProgressDeadlineExceeded``, or
  ``ReplicaFailure=True``), ``""`` otherwise; ``deployment_available(d)``: ``Available=True``. A Deployment that is
  neither is still progressing, which is not a failure. ``deployment_update_matters(old, cur)``: whether an update
  can change what a sync does with the Deployment (the owned-update handler wakes the job only then).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from apis import meta
from apis.resources import DEPLOYMENTS

from .labels import generate_labels
from .names import label_value
from .owned_errors import NotOwnedError
from .pods import read_metadata_changed
from .revisions import spec_hash_matches, stamp_spec_hash
from .storage import inject_env, inject_storage
from .worker import WorkerParam

if TYPE_CHECKING:
    from .context import KindContext

__all__ = [
    "APP_LABEL",
    "NotOwnedError",
    "deployment_available",
    "deployment_failure",
    "deployment_from_template",
    "deployment_name",
    "deployment_update_matters",
    "ensure_deployment",
    "inject_deployment_param",
    "scale_deployment",
]

APP_LABEL = "app.sedna.io"


def deployment_name(owner: Mapping[str, Any], worker_type: str) -> str:
    return f"{meta.name(owner)}-deployment-{worker_type.lower()}"


def inject_deployment_param(deployment: dict[str, Any], param: WorkerParam, owner: Mapping[str, Any]) -> None:
    """Sedna's ``injectDeploymentParam`` (in place)."""
    spec = deployment.setdefault("spec", {})
    template = spec.setdefault("template", {})
    pod_spec = template.setdefault("spec", {})
    if param.mounts:
        inject_storage(pod_spec, param)
    labels = generate_labels(owner, param.worker_type)
    labels[APP_LABEL] = label_value(f"{meta.name(owner)}-{param.worker_type}-svc")
    md = deployment.setdefault("metadata", {})
    tmd = template.setdefault("metadata", {})
    selector = spec.setdefault("selector", {})
    md["labels"] = {**(md.get("labels") or {}), **labels}
    tmd["labels"] = {**(tmd.get("labels") or {}), **labels}
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), **labels}
    inject_env(pod_spec.setdefault("containers", []), param.env)


def deployment_from_template(owner: Mapping[str, Any], spec: Mapping[str, Any], param: WorkerParam) -> dict[str, Any]:
    """A new Deployment of ``owner`` from a DeploymentSpec-like ``spec`` (``template``, optional ``replicas``)."""
    dspec: dict[str, Any] = {"template": meta.deep_copy(spec.get("template") or {}), "selector": {"matchLabels": {}}}
    if spec.get("replicas") is not None:
        dspec["replicas"] = spec["replicas"]
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": deployment_name(owner, param.worker_type),
            "namespace": meta.namespace(owner),
            "ownerReferences": [meta.new_controller_ref(owner)],
        },
        "spec": dspec,
    }
    inject_deployment_param(deployment, param, owner)
    return deployment


def ensure_deployment(
    ctx: KindContext[Any],
    job: Mapping[str, Any],
    name: str,
    source: Any,
    build: Callable[[], dict[str, Any]],
    what: str = "deployment",
    recreation: bool = False,
) -> dict[str, Any] | None:
    """Make the job's Deployment ``name`` exist and match ``source`` (what it is built from); ``build()`` makes the
    desired Deployment and is called only when one must be created or updated. A creation goes through
    ``ensure_worker`` (slot: the Deployment's name; ``recreation``: the job had its workers already). Returns the
    Deployment, or ``None`` when it was just created (by someone else, or by us and not cached yet), the job is gone,
    or it must wait for the recreation TTL (the job is requeued for then)."""
    ns = meta.namespace(job)
    existing = ctx.get_cached(DEPLOYMENTS, ns, name)
    if existing is None:

        def stamped() -> dict[str, Any]:
            desired = build()
            stamp_spec_hash(desired, source)
            return desired

        return ctx.ensure_worker(job, DEPLOYMENTS, name, stamped, what=what, recreation=recreation).created
    if not meta.is_controlled_by(existing, job):
        raise NotOwnedError(f"deployment {ns}/{name} exists and is not controlled by {job.get('kind')} {meta.name(job)}")
    if meta.deletion_timestamp(existing) or spec_hash_matches(existing, source):
        return existing
    desired = build()
    updated = meta.deep_copy(existing)
    updated["metadata"]["labels"] = {**(updated["metadata"].get("labels") or {}), **meta.labels(desired)}
    stamp_spec_hash(updated, source)
    updated["spec"]["template"] = desired["spec"]["template"]
    return ctx.update_owned(DEPLOYMENTS, job, updated, what)


def scale_deployment(
    ctx: KindContext[Any], job: Mapping[str, Any], deployment: Mapping[str, Any], replicas: int | None,
    what: str = "deployment",
) -> Mapping[str, Any]:
    """Set the Deployment's ``replicas`` when ``replicas`` is given and differs; returns the Deployment as it is now."""
    if replicas is None or (deployment.get("spec") or {}).get("replicas") == replicas or meta.deletion_timestamp(deployment):
        return deployment
    scaled = meta.deep_copy(deployment)
    scaled["spec"]["replicas"] = replicas
    return ctx.update_owned(DEPLOYMENTS, job, scaled, what)


def _condition(deployment: Mapping[str, Any], ctype: str) -> Mapping[str, Any] | None:
    for cond in (deployment.get("status") or {}).get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == ctype:
            return cond
    return None


def deployment_failure(deployment: Mapping[str, Any]) -> str:
    progressing = _condition(deployment, "Progressing")
    if progressing is not None and progressing.get("status") == "False" and progressing.get("reason") == "ProgressDeadlineExceeded":
        return progressing.get("message") or "progress deadline exceeded"
    replica_failure = _condition(deployment, "ReplicaFailure")
    if replica_failure is not None and replica_failure.get("status") == "True":
        return replica_failure.get("message") or replica_failure.get("reason") or "replica failure"
    return ""


def deployment_update_matters(old: Mapping[str, Any], cur: Mapping[str, Any]) -> bool:
    """False when ``cur`` differs from ``old`` only where no sync looks: status fields other than the health
    (replica counts, ``observedGeneration``, a condition's timestamps) and server-set metadata. The deployment
    controller writes such updates several times per rollout; each woke the job for a sync that did nothing. The
    status is read only through ``deployment_failure`` and ``deployment_available``."""
    if old.get("spec") != cur.get("spec") or read_metadata_changed(old, cur):
        return True
    return (deployment_failure(old), deployment_available(old)) != (deployment_failure(cur), deployment_available(cur))


def deployment_available(deployment: Mapping[str, Any]) -> bool:
    available = _condition(deployment, "Available")
    return available is not None and available.get("status") == "True"
