"""What a Sedna worker gets besides its template (Sedna's ``worker.go``): ``WorkerParam`` and its injection.

``inject_worker_param(pod, param, owner)`` applies, in Sedna's order: storage (``storage.inject_storage``), the model
hot-update mount, env and the ``sedna.io/model-hot-update-config`` annotation naming the host's config file
(inference workers with ``model_hot_update.enable``, as Sedna's IL sets them), ``param.env`` to every container, the
generated labels, ``generateName`` ``<owner>-<lower(workerType)>-`` and the namespace, ``hostNetwork``,
``restartPolicy`` (only when the template leaves it empty), ``dnsPolicy`` and ``param.annotations``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from apis import meta
from apis.sedna.constants import (
    MODEL_HOT_UPDATE_ANNOTATION,
    MODEL_HOT_UPDATE_CONFIG_FILE,
    MODEL_HOT_UPDATE_CONTAINER_PREFIX,
    MODEL_HOT_UPDATE_HOST_PREFIX,
)

from .labels import generate_labels
from .names import convert_k8s_valid_name
from .storage import WorkerMount, inject_env, inject_storage, inject_volumes

__all__ = [
    "INFERENCE_WORKER",
    "ModelHotUpdate",
    "TRAIN_WORKER",
    "EVAL_WORKER",
    "WorkerParam",
    "inject_worker_param",
    "model_hot_update_config_file",
]

TRAIN_WORKER = "train"
EVAL_WORKER = "eval"
INFERENCE_WORKER = "inference"

MODEL_HOT_UPDATE_VOLUME = "sedna-model-hot-update-volume"


@dataclass
class ModelHotUpdate:
    enable: bool = False
    poll_period_seconds: int = 0


@dataclass
class WorkerParam:
    """How a worker differs from its template. ``env`` values are strings; ``mounts`` become volumes/env."""

    worker_type: str
    env: dict[str, str] = field(default_factory=dict)
    mounts: list[WorkerMount] = field(default_factory=list)
    host_network: bool = False
    model_hot_update: ModelHotUpdate = field(default_factory=ModelHotUpdate)
    restart_policy: str = ""  # set only when the template leaves it empty
    dns_policy: str = ""
    annotations: dict[str, str] = field(default_factory=dict)  # extra pod annotations (e.g. the hot-update one)


def model_hot_update_config_file(obj: Mapping[str, Any], prefix: str = MODEL_HOT_UPDATE_HOST_PREFIX) -> str:
    """``lower(<prefix>/<ns>/<Kind>/<name>/model_config.json)`` (Sedna's ``GetModelHotUpdateConfigFile``)."""
    path = posixpath.join(prefix, meta.namespace(obj), obj.get("kind", ""), meta.name(obj), MODEL_HOT_UPDATE_CONFIG_FILE)
    return posixpath.normpath(path).lower()


def _inject_model_hot_update(pod_spec: dict[str, Any], param: WorkerParam, owner: Mapping[str, Any]) -> None:
    config_file = model_hot_update_config_file(owner)
    param.annotations.setdefault(MODEL_HOT_UPDATE_ANNOTATION, config_file)  # where the LC writes the config
    host_dir = config_file.rpartition("/")[0] + "/"
    volume = convert_k8s_valid_name(MODEL_HOT_UPDATE_VOLUME)
    inject_volumes(
        pod_spec,
        [{"name": volume, "hostPath": {"path": host_dir, "type": "DirectoryOrCreate"}}],
        [{"name": volume, "mountPath": MODEL_HOT_UPDATE_CONTAINER_PREFIX}],
    )
    param.env["MODEL_HOT_UPDATE"] = "true"
    param.env["MODEL_POLL_PERIOD_SECONDS"] = str(param.model_hot_update.poll_period_seconds)
    param.env["MODEL_HOT_UPDATE_CONFIG"] = posixpath.join(MODEL_HOT_UPDATE_CONTAINER_PREFIX, MODEL_HOT_UPDATE_CONFIG_FILE)


def inject_worker_param(pod: dict[str, Any], param: WorkerParam, owner: Mapping[str, Any]) -> None:
    """Sedna's ``injectWorkerParam``: changes ``pod`` (a new pod, see ``pods.get_pod_from_template``) in place."""
    spec = pod.setdefault("spec", {})
    inject_storage(spec, param)
    if param.worker_type == INFERENCE_WORKER and param.model_hot_update.enable:
        _inject_model_hot_update(spec, param, owner)
    inject_env(spec.setdefault("containers", []), param.env)
    md = pod.setdefault("metadata", {})
    md["labels"] = {**(md.get("labels") or {}), **generate_labels(owner, param.worker_type)}
    if param.annotations:
        md["annotations"] = {**(md.get("annotations") or {}), **param.annotations}
    md["generateName"] = f"{meta.name(owner)}-{param.worker_type.lower()}-"
    md["namespace"] = meta.namespace(owner)
    if param.host_network:
        spec["hostNetwork"] = True
    if not spec.get("restartPolicy") and param.restart_policy:
        spec["restartPolicy"] = param.restart_policy
    if param.dns_policy:
        spec["dnsPolicy"] = param.dns_policy
