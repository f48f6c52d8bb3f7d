"""The workers of an ObjectSearchService as Sedna's GM builds them (``createWorkers``), and of an
ObjectTrackingService (no user worker; Go Sedna has no controller for it, so its contract is ObjectSearch's).

* ReID: Deployment ``<service>-deployment-reidworker`` from ``spec.reidWorkers`` (its ``replicas`` and
  ``template``; worker type ``reidworker``, no env), Service ``<service>-reidworker`` (port 9378).
* User (ObjectSearch only): Deployment ``<service>-deployment-userworker``, 1 replica of ``spec.userWorker.template``,
  env ``NAMESPACE``, ``SERVICE_NAME``, ``WORKER_NAME=userworker-<5 random>``; Service ``<service>-userworker`` (port
  9379).
* Tracking: one pod per ``spec.trackingWorkers[i]`` (``generateName: <service>-trackingworker-``, the template's
  restart policy), env ``NAMESPACE``, ``SERVICE_NAME``, ``WORKER_NAME=trackingworker-<5 random>``,
  ``USERWORKER_URL=<service>-userworker.<ns>:9379`` (ObjectSearch only) and ``EDGEMESH_URL=<service>-reidworker.
  <ns>:9378``. Each pod records which tracking worker it is (``sedna.io/tracking-worker-index``) and a hash of its
  template (``sedna.io/spec-hash``), so that a spec change replaces exactly the pods whose template changed.
"""

from __future__ import annotations

from typing import Any

from apis import meta
from apis.meta import Obj
from apis.sedna.v1alpha1 import ObjectSearchServiceSpec, ObjectTrackingServiceSpec
from apis.sedna.v1alpha1.common import PodTemplateSpec
from globalmanager.runtime.deployments import deployment_from_template
from globalmanager.runtime.names import rand_string
from globalmanager.runtime.pods import pod_from_template
from globalmanager.runtime.revisions import stamp_spec_hash
from globalmanager.runtime.services import edge_mesh_service_host
from globalmanager.runtime.worker import WorkerParam

__all__ = [
    "INDEX_ANNOTATION",
    "REID_PORT",
    "SearchSpec",
    "REID_WORKER",
    "TRACKING_WORKER",
    "USER_PORT",
    "USER_WORKER",
    "reid_deployment",
    "tracking_index",
    "tracking_pod",
    "tracking_source",
    "tracking_templates",
    "user_deployment",
]

USER_WORKER = "userworker"
TRACKING_WORKER = "trackingworker"
REID_WORKER = "reidworker"
REID_PORT = 9378
USER_PORT = 9379
INDEX_ANNOTATION = "sedna.io/tracking-worker-index"

SearchSpec = ObjectSearchServiceSpec | ObjectTrackingServiceSpec
"""The typed spec of an ObjectSearchService or an ObjectTrackingService (the latter has no ``user_worker``)."""


def tracking_templates(spec: SearchSpec) -> list[PodTemplateSpec | None]:
    return [w.template for w in spec.tracking_workers or []]


def tracking_source(spec: SearchSpec, index: int, with_user_worker: bool) -> dict[str, Any]:
    """What tracking pod ``index`` is built from (its spec hash)."""
    return {"template": tracking_templates(spec)[index], "userWorker": with_user_worker}


def tracking_index(pod: Obj) -> int | None:
    value = meta.annotations(pod).get(INDEX_ANNOTATION, "")
    return int(value) if value.isdigit() else None


def reid_deployment(service: Obj, spec: SearchSpec) -> dict[str, Any]:
    reid = spec.reid_workers
    assert reid is not None  # the kind's spec check
    return deployment_from_template(service, {"replicas": reid.replicas, "template": reid.template}, WorkerParam(REID_WORKER))


def user_deployment(service: Obj, spec: ObjectSearchServiceSpec) -> dict[str, Any]:
    template = (spec.user_worker.template if spec.user_worker is not None else None) or {}
    param = WorkerParam(USER_WORKER, env={
        "NAMESPACE": meta.namespace(service),
        "SERVICE_NAME": meta.name(service),
        "WORKER_NAME": f"{USER_WORKER}-{rand_string(5)}",
    })
    return deployment_from_template(service, {"replicas": 1, "template": template}, param)


def tracking_pod(service: Obj, spec: SearchSpec, index: int, with_user_worker: bool) -> dict[str, Any]:
    env = {
        "NAMESPACE": meta.namespace(service),
        "SERVICE_NAME": meta.name(service),
        "WORKER_NAME": f"{TRACKING_WORKER}-{rand_string(5)}",
    }
    if with_user_worker:
        env["USERWORKER_URL"] = f"{edge_mesh_service_host(service, USER_WORKER)}:{USER_PORT}"
    env["EDGEMESH_URL"] = f"{edge_mesh_service_host(service, REID_WORKER)}:{REID_PORT}"
    pod = pod_from_template(service, tracking_templates(spec)[index], WorkerParam(TRACKING_WORKER, env=env))
    pod["metadata"]["annotations"] = {**(pod["metadata"].get("annotations") or {}), INDEX_ANNOTATION: str(index)}
    stamp_spec_hash(pod, tracking_source(spec, index, with_user_worker))
    return pod
