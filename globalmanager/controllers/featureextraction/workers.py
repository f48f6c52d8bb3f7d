"""The worker of a FeatureExtractionService as Sedna's GM builds it (``createFeatureExtractionWorker``).

Deployment ``<service>-deployment-fe`` (worker type ``fe``) with ``replicas`` (when set) and ``template`` of the
service's inlined DeploymentSpec (Sedna keeps nothing else of it: the selector is the generated labels plus
``app.sedna.io=<service>-fe-svc``); the Model's URL mounted as ``MODEL_URL`` (downloaded by the storage initializer
for ``s3://``/``http(s)://``, with the Model's Secret when it names one; host paths under ``/home/data``); env
``WORKER_NAME=<5 random>``, ``NAMESPACE``, ``SERVICE_NAME``, ``LC_SERVER``, and ``KAFKA_ENABLED=true`` with
``kafkaSupport``. Its edge-mesh Service is ``<service>-fe`` (port 6000).

Unlike Go Sedna, the worker has exactly one mount (Go prepends an empty one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.sedna.v1alpha1 import FeatureExtractionServiceSpec
from globalmanager.runtime.deployments import deployment_from_template
from globalmanager.runtime.names import rand_string
from globalmanager.runtime.storage import MountURL, WorkerMount
from globalmanager.runtime.worker import WorkerParam

__all__ = ["FE_PORT", "FE_WORKER", "build_deployment", "worker_param"]

FE_WORKER = "fe"
FE_PORT = 6000


def worker_param(
    service: Mapping[str, Any], spec: FeatureExtractionServiceSpec, model: Mapping[str, Any],
    secret: Mapping[str, Any] | None, lc_server: str,
) -> WorkerParam:
    url = str((model.get("spec") or {}).get("url") or "")
    mount = WorkerMount(name="model", url=MountURL(url=url, secret=secret, download_by_initializer=True), env_name="MODEL_URL")
    env = {
        "WORKER_NAME": rand_string(5),
        "NAMESPACE": meta.namespace(service),
        "SERVICE_NAME": meta.name(service),
        "LC_SERVER": lc_server,
    }
    if spec.kafka_support:
        env["KAFKA_ENABLED"] = "true"  # Go's strconv.FormatBool
    return WorkerParam(FE_WORKER, env=env, mounts=[mount])


def build_deployment(
    service: Mapping[str, Any], spec: FeatureExtractionServiceSpec, model: Mapping[str, Any],
    secret: Mapping[str, Any] | None, lc_server: str,
) -> dict[str, Any]:
    param = worker_param(service, spec, model, secret, lc_server)
    return deployment_from_template(service, {"replicas": spec.replicas, "template": spec.template}, param)
