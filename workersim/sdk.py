"""What Sedna's Python SDK (``lib/sedna``, v0.4.1 at kubeedge/sedna HEAD) puts in a worker report, as functions.

* ``Identity`` is ``JobBase.__init__``: ``job_name = JOB_NAME or SERVICE_NAME`` (``JOB_NAME`` defaults to ``sedna``),
  ``worker_name = WORKER_NAME or job_name``, ``namespace = NAMESPACE or job_name``, ``lc_server = LC_SERVER``
  (default ``http://127.0.0.1:9100``); ``ownerKind`` is the class's ``job_kind``.
* ``task_report`` is ``JobBase.report_task_info(task_info, status, results, kind)``.
* ``model_info`` is the backend's ``model_info(model, relpath=DATA_PATH_PREFIX, result)`` (TensorFlow/Keras add a
  ``ckpt`` entry for a ``.pb`` model), ``default_model_name`` the backend's ``model_name``.
* ``reporter_owner_info`` is the ``ownerInfo`` that ``LCReporter`` (joint inference) sends every period.

The SDK's two bugs are reproduced unless ``quirks`` is off (annotation ``sandbox.sedna.io/worker-sdk-quirks:
"false"``): its ``JOB_NAME`` default ``sedna`` shadows ``SERVICE_NAME`` (a joint-inference worker without ``JOB_NAME``
reports ``ownerName: sedna``), and ``FederatedLearning`` never sets its ``job_kind`` (``ownerKind: default``).
"""

from __future__ import annotations

import posixpath
import time
from dataclasses import dataclass
from typing import Any

from .workerpod import WorkerPod

__all__ = [
    "COMPLETED",
    "FAILED",
    "RUNNING",
    "Identity",
    "default_model_name",
    "identity",
    "model_info",
    "remove_path_prefix",
    "reporter_owner_info",
    "sdk_time",
    "task_report",
]

COMPLETED = "completed"
FAILED = "failed"
RUNNING = "running"
DEFAULT_LC_SERVER = "http://127.0.0.1:9100"
DEFAULT_DATA_PATH_PREFIX = "/home/data"
_SDK_DEFAULT_KIND = "default"

# BACKEND_TYPE → (framework, model file suffix) of the SDK's backends (sedna.backend.set_backend)
_BACKENDS = {
    "TENSORFLOW": ("tensorflow", ".pb"),
    "KERAS": ("keras", ".pb"),
    "TORCH": ("pytorch", ".pth"),  # the SDK formats its suffix list [".pth", ".pt"] into the name; the first is used
    "MINDSPORE": ("mindspore", ".ckpt"),
}
_TF_BACKENDS = ("TENSORFLOW", "KERAS")


@dataclass(frozen=True)
class Identity:
    worker_name: str
    namespace: str
    owner_name: str
    owner_kind: str
    lc_server: str  # the pod's LC_SERVER (the simulator may send elsewhere: see WorkerSimulator)
    data_path_prefix: str
    backend_type: str


def identity(pod: WorkerPod, quirks: bool = False) -> Identity:
    env = pod.env
    job_name = env.get("JOB_NAME", "sedna")
    if not quirks and "JOB_NAME" not in env:
        job_name = env.get("SERVICE_NAME", "") or job_name
    job_name = job_name or env.get("SERVICE_NAME", "")
    owner_kind = pod.kind
    if quirks and pod.kind == "federatedlearningjob":
        owner_kind = _SDK_DEFAULT_KIND
    return Identity(
        worker_name=env.get("WORKER_NAME", "") or job_name,
        namespace=env.get("NAMESPACE", "") or job_name,
        owner_name=job_name,
        owner_kind=owner_kind,
        lc_server=env.get("LC_SERVER", DEFAULT_LC_SERVER),
        data_path_prefix=env.get("DATA_PATH_PREFIX", DEFAULT_DATA_PATH_PREFIX),
        backend_type=str(env.get("BACKEND_TYPE", "TENSORFLOW")).upper(),
    )


def task_report(ident: Identity, status: str, results: list[dict[str, Any]] | None = None, kind: str = "train",
                task_info: dict[str, Any] | None = None) -> dict[str, Any]:
    """``JobBase.report_task_info``: ``results`` and ``ownerInfo`` only when non-empty."""
    message: dict[str, Any] = {
        "name": ident.worker_name,
        "namespace": ident.namespace,
        "ownerName": ident.owner_name,
        "ownerKind": ident.owner_kind,
        "kind": kind,
        "status": status,
    }
    if results:
        message["results"] = results
    if task_info:
        message["ownerInfo"] = task_info
    return message


def remove_path_prefix(path: str, prefix: str) -> str:
    """``FileOps.remove_path_prefix``: a container path under the data prefix back to the host path."""
    if not prefix:
        return path
    p = prefix[:-1] if prefix.endswith("/") else prefix
    return path.replace(p, "", 1) if path.startswith(p) else path


def model_info(ident: Identity, model: str, result: object = None) -> list[dict[str, Any]]:
    """The backend's ``model_info(model, relpath=DATA_PATH_PREFIX, result=result)``."""
    suffix = posixpath.splitext(model)[1]
    url = remove_path_prefix(model, ident.data_path_prefix)
    if ident.backend_type not in _TF_BACKENDS:
        return [{"format": suffix.lstrip("."), "url": url, "metrics": result}]
    fmt = suffix.lstrip(".").lower()
    results = [{"format": fmt, "url": url, "metrics": result}]
    if fmt == "pb":  # TFBackend also reports the checkpoint directory
        results.append({"format": "ckpt", "url": remove_path_prefix(posixpath.dirname(model), ident.data_path_prefix),
                        "metrics": result})
    return results


def default_model_name(pod: WorkerPod, ident: Identity) -> str:
    """``BackendBase.model_name``: ``MODEL_NAME``, else ``model_finetune_<framework><suffix>``."""
    if pod.env.get("MODEL_NAME"):
        return pod.env["MODEL_NAME"]
    framework, suffix = _BACKENDS.get(ident.backend_type, ("", ".pkl"))
    return f"model_finetune_{framework}{suffix}"


def sdk_time(at: float | None = None) -> str:
    """The SDK's timestamps: ``time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())``."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def reporter_owner_info(start: str, update: str, inferences: int, hard_examples: int) -> dict[str, Any]:
    """``LCReporter.run``'s ``ownerInfo``."""
    return {
        "startTime": start,
        "updateTime": update,
        "inferenceNumber": inferences,
        "hardExampleNumber": hard_examples,
        "uploadCloudRatio": hard_examples / inferences,
    }
