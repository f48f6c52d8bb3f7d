"""The two workers of a JointInferenceService as Sedna's GM builds them (``createOrUpdateWorker``).

Both: Deployment ``<service>-deployment-<cloud|edge>`` from the worker's template (replicas left to the API server
or the HPA), the worker's Model URL mounted (downloaded by the storage initializer; the Model's Secret, when it names
one, gives the S3 credentials) as ``MODEL_URL``, env ``NAMESPACE``, ``SERVICE_NAME``,
``WORKER_NAME=<cloud|edge>worker-<5 random>``, and ``JOB_NAME=<service>`` (beyond Go: Sedna's SDK names the owner of
its reports ``JOB_NAME``, defaulting to ``sedna`` before it looks at ``SERVICE_NAME``, so without it an unchanged
worker image reports about a service called ``sedna`` and its metrics never reach the service).
* cloud: ``BIG_MODEL_BIND_PORT=5000``; its Service ``<service>-cloud`` (port 5000) is created before the edge worker.
* edge: ``BIG_MODEL_IP=<service>-cloud.<namespace>``, ``BIG_MODEL_PORT=5000``, ``HEM_NAME``, ``HEM_PARAMETERS`` (JSON
  ``[{"key", "value"}]``, ``null`` without parameters), ``LC_SERVER``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.sedna.v1alpha1 import CloudWorker, EdgeWorker, HardExampleMining, JointInferenceServiceSpec
from globalmanager.runtime.deployments import deployment_from_template
from globalmanager.runtime.names import rand_string
from globalmanager.runtime.services import edge_mesh_service_host
from globalmanager.runtime.status import go_json
from globalmanager.runtime.storage import MountURL, WorkerMount
from globalmanager.runtime.worker import WorkerParam

__all__ = ["BIG_MODEL_PORT", "CLOUD", "EDGE", "WORKER_SPEC", "big_model_host", "build_worker_deployment", "hem_parameters", "worker_of"]

CLOUD = "Cloud"
EDGE = "Edge"
BIG_MODEL_PORT = 5000
WORKER_SPEC = {CLOUD: "cloudWorker", EDGE: "edgeWorker"}


def big_model_host(service: Mapping[str, Any]) -> str:
    return edge_mesh_service_host(service, CLOUD)


def hem_parameters(hem: HardExampleMining | Mapping[str, Any] | None) -> str:
    """``HEM_PARAMETERS``: Go's ``json.Marshal`` of the parameters (``null`` without any) of ``hem``, the typed
    ``hardExampleMining``, or a plain worker spec that holds one (IncrementalLearning's ``deploySpec``)."""
    if isinstance(hem, Mapping):
        params = (hem.get("hardExampleMining") or {}).get("parameters")
        pairs = None if params is None else [(p.get("key", ""), p.get("value", "")) for p in params]
    else:
        pairs = None if hem is None or hem.parameters is None else [(p.key or "", p.value or "") for p in hem.parameters]
    if pairs is None:
        return "null"
    return go_json([{"key": str(key), "value": str(value)} for key, value in pairs])


def worker_param(
    service: Mapping[str, Any], spec: JointInferenceServiceSpec, worker_type: str, model: Mapping[str, Any],
    secret: Mapping[str, Any] | None, lc_server: str,
) -> WorkerParam:
    if worker_type == CLOUD:
        env = {"BIG_MODEL_BIND_PORT": str(BIG_MODEL_PORT)}
    else:
        hem = spec.edge_worker.hard_example_mining if spec.edge_worker is not None else None
        env = {
            "BIG_MODEL_IP": big_model_host(service),
            "BIG_MODEL_PORT": str(BIG_MODEL_PORT),
            "HEM_NAME": (hem.name if hem is not None else None) or "",
            "HEM_PARAMETERS": hem_parameters(hem),
            "LC_SERVER": lc_server,
        }
    env["NAMESPACE"] = meta.namespace(service)
    env["SERVICE_NAME"] = meta.name(service)
    env["JOB_NAME"] = meta.name(service)
    env["WORKER_NAME"] = f"{worker_type.lower()}worker-{rand_string(5)}"
    url = str((model.get("spec") or {}).get("url", ""))
    mount = WorkerMount(name="model", url=MountURL(url=url, secret=secret, download_by_initializer=True), env_name="MODEL_URL")
    return WorkerParam(worker_type, env=env, mounts=[mount])


def worker_of(spec: JointInferenceServiceSpec, worker_type: str) -> CloudWorker | EdgeWorker | None:
    return spec.cloud_worker if worker_type == CLOUD else spec.edge_worker


def build_worker_deployment(
    service: Mapping[str, Any], spec: JointInferenceServiceSpec, worker_type: str, model: Mapping[str, Any],
    secret: Mapping[str, Any] | None, lc_server: str,
) -> dict[str, Any]:
    """The Deployment of the ``worker_type`` worker (``Cloud`` or ``Edge``)."""
    worker = worker_of(spec, worker_type)
    param = worker_param(service, spec, worker_type, model, secret, lc_server)
    return deployment_from_template(service, {"template": (worker.template if worker is not None else None) or {}}, param)
