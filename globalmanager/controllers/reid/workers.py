"""The worker pod of a ReidJob as Sedna's GM builds it (``createJob``), the base of VideoAnalytics' (``video
analytics/workers.py``).

A pod from ``spec.template`` (``generateName: <job>-<worker type>-``, labels ``<kind>.sedna.io/{name,uid,
worker-type}``, the template's restart policy), env ``WORKER_NAME=<5 random>``, ``JOB_NAME``, ``NAMESPACE``,
``LC_SERVER`` and ``KAFKA_ENABLED=true`` with ``kafkaSupport``. The pod records a hash of what it was built from
(``sedna.io/spec-hash``): a spec change replaces a pod built from an older template.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta
from globalmanager.runtime.names import rand_string
from globalmanager.runtime.pods import pod_from_template
from globalmanager.runtime.revisions import stamp_spec_hash
from globalmanager.runtime.worker import WorkerParam

__all__ = ["REID_WORKER", "job_worker_param", "worker_pod"]

REID_WORKER = "reid"


def job_worker_param(job: Mapping[str, Any], worker_type: str, lc_server: str) -> WorkerParam:
    """The env every multi-edge-inference job worker gets (Reid's; VideoAnalytics adds its model)."""
    env = {"WORKER_NAME": rand_string(5), "JOB_NAME": meta.name(job), "NAMESPACE": meta.namespace(job),
           "LC_SERVER": lc_server}
    if (job.get("spec") or {}).get("kafkaSupport"):
        env["KAFKA_ENABLED"] = "true"  # Go's strconv.FormatBool
    return WorkerParam(worker_type, env=env)


def worker_pod(job: Mapping[str, Any], param: WorkerParam, source: Any) -> dict[str, Any]:
    """The job's pod from ``spec.template`` with ``param``, stamped with the hash of ``source``."""
    pod = pod_from_template(job, (job.get("spec") or {}).get("template"), param)
    stamp_spec_hash(pod, source)
    return pod
