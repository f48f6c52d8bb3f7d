"""The worker pod of a VideoAnalyticsJob as Sedna's GM builds it (``createJob``): Reid's (``reid/workers.py``) with
worker type ``videoanalytics``, env ``MODEL_NAME`` and the Model's URL mounted as ``MODEL_URL`` (downloaded by the
storage initializer for ``s3://``/``http(s)://``, with the Model's Secret when it names one; host paths under
``/home/data``). Its edge-mesh Service is ``<job>-videoanalytics`` (port 4000)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from globalmanager.runtime.storage import MountURL, WorkerMount
from globalmanager.runtime.worker import WorkerParam

from ..reid.workers import job_worker_param

__all__ = ["VA_PORT", "VA_WORKER", "worker_param"]

VA_WORKER = "videoanalytics"
VA_PORT = 4000


def worker_param(
    job: Mapping[str, Any], model: Mapping[str, Any], secret: Mapping[str, Any] | None, lc_server: str
) -> WorkerParam:
    param = job_worker_param(job, VA_WORKER, lc_server)
    param.env = {**param.env, "MODEL_NAME": str(((job.get("spec") or {}).get("model") or {}).get("name") or "")}
    url = str((model.get("spec") or {}).get("url") or "")
    if url:  # Go's addWorkerMount skips an empty URL
        param.mounts.append(WorkerMount(url=MountURL(url=url, secret=secret, download_by_initializer=True), env_name="MODEL_URL"))
    return param
