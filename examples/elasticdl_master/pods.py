"""Worker pods as ElasticDL's master creates them.

* name ``elasticdl-<job>-worker-<id>`` (``get_worker_pod_name`` of ElasticDL 0.2, the released master; its
  unreleased main branch dropped the ``elasticdl-`` prefix in 2021); ids count up, a relaunched worker gets a new
  id; labels ``app=elasticdl``, ``elasticdl-job-name=<job>``, ``elasticdl-replica-type=worker``,
  ``elasticdl-replica-index=<id>`` (what the ElasticAIJob operator counts into ``replicaStatuses.worker``);
* an ownerReference to the master pod ``elasticdl-<job>-master`` (``blockOwnerDeletion``, not a controller
  reference, as ElasticDL sets it), so the workers go with the master;
* one container ``/bin/bash -c "set -o pipefail; <job_command or the ElasticDL worker command>"`` with the env
  ``MASTER_ADDR`` (``ip:port`` of the master's worker API), ``WORKER_ID``, ``WORKER_NUM``, ``MY_POD_IP`` and the
  ``--envs`` pairs; resources, priority class, volumes, image pull and restart policies from the master's flags;
  ``terminationGracePeriodSeconds: 1``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from apis import meta

__all__ = [
    "APP_LABEL", "JOB_NAME_LABEL", "REPLICA_INDEX_LABEL", "REPLICA_TYPE_LABEL",
    "WorkerPodTemplate", "build_worker_pod", "master_pod_name", "parse_envs", "parse_resources",
    "parse_volumes", "slot_priority", "worker_pod_name", "worker_selector",
]

APP_LABEL = "app"
APP_NAME = "elasticdl"
JOB_NAME_LABEL = "elasticdl-job-name"
REPLICA_TYPE_LABEL = "elasticdl-replica-type"
REPLICA_INDEX_LABEL = "elasticdl-replica-index"
WORKER_ENTRYPOINT = "python -m elasticdl.python.worker.main"

_RESOURCE_NAMES = {"cpu": "cpu", "memory": "memory", "disk": "ephemeral-storage",
                   "ephemeral-storage": "ephemeral-storage", "gpu": "nvidia.com/gpu"}


def master_pod_name(job_name: str) -> str:
    return f"elasticdl-{job_name}-master"


def worker_pod_name(job_name: str, worker_id: int) -> str:
    return f"elasticdl-{job_name}-worker-{worker_id}"


def worker_selector(job_name: str) -> str:
    """The label selector of the job's worker pods."""
    return f"{JOB_NAME_LABEL}={job_name},{REPLICA_TYPE_LABEL}=worker"


def parse_resources(text: str) -> dict[str, str]:
    """ElasticDL's ``cpu=1,memory=4096Mi,disk=1Gi,gpu=1`` → a resource list; ``ValueError`` names the bad part."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        resource = _RESOURCE_NAMES.get(key.strip()) or (key.strip() if "/" in key else None)
        if not sep or not value.strip() or resource is None:
            raise ValueError(f"{part!r} is not cpu=, memory=, disk=, gpu= or <vendor>/<resource>=")
        out[resource] = value.strip()
    return out


def parse_volumes(text: str, pod_name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """ElasticDL's ``host_path=/d,mount_path=/d;claim_name=c,mount_path=/e`` → (volumes, mounts)."""
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    for i, chunk in enumerate(filter(None, (c.strip() for c in text.split(";")))):
        kv = dict(p.strip().partition("=")[::2] for p in chunk.split(","))
        name = f"{pod_name}-volume-{i}"
        if "mount_path" not in kv or ("host_path" in kv) == ("claim_name" in kv):
            raise ValueError(f"{chunk!r} needs mount_path and one of host_path, claim_name")
        if "claim_name" in kv:
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": kv["claim_name"], "readOnly": False}})
        else:
            host = {"path": kv["host_path"], **({"type": kv["type"]} if kv.get("type") else {})}
            volumes.append({"name": name, "hostPath": host})
        mounts.append({"name": name, "mountPath": kv["mount_path"], **({"subPath": kv["sub_path"]} if "sub_path" in kv else {})})
    return volumes, mounts


def parse_envs(text: str) -> dict[str, str]:
    """ElasticDL's ``k1=v1,k2=v2`` where a value may hold commas (a pair ends at the last comma before ``=``)."""
    fields = text.split("=") if text else []
    envs: dict[str, str] = {}
    key = fields[0] if fields else ""
    for i, chunk in enumerate(fields[1:], 1):
        if i == len(fields) - 1:
            envs[key] = chunk
        else:
            cut = chunk.rfind(",")
            envs[key], key = chunk[:cut], chunk[cut + 1:]
    return envs


def slot_priority(value: str, slot: int, num_workers: int) -> str:
    """The priority class of the worker in ``slot``: a class name for every worker, or ElasticDL's fraction
    (``0.5``: half of the workers ``high``, the rest ``low``; ``name=0.5``, as the operator writes it: half ``name``,
    the rest none). ``ValueError`` for a fraction that is not a number."""
    name, sep, fraction = value.partition("=")
    if sep:
        share, other = float(fraction), ""
    else:
        try:
            share, name, other = float(value), "high", "low"
        except ValueError:
            return value
    n = max(num_workers, slot + 1)
    # ElasticDL's order: the high-priority slots are taken alternately from both ends of the index range
    order = [i // 2 if i % 2 == 0 else n - 1 - i // 2 for i in range(n)]
    return name if slot in order[: math.ceil(n * share)] else other


@dataclass
class WorkerPodTemplate:
    """What every worker pod of a job shares; ``build_worker_pod`` adds the per-worker parts."""

    job_name: str
    namespace: str
    image: str
    command_line: str  # the shell command the container runs
    master_addr: str = ""  # ip:port of the worker API, set once it listens
    env: dict[str, str] = field(default_factory=dict)
    requests: dict[str, str] = field(default_factory=dict)
    limits: dict[str, str] = field(default_factory=dict)
    volume: str = ""
    priority: str = ""
    image_pull_policy: str = "Always"
    restart_policy: str = "Never"


def elasticdl_worker_command(master_flags: list[str]) -> str:
    """ElasticDL's worker command line: the worker entrypoint with the master's flags, every value single-quoted
    (``wrap_python_args_with_string``)."""
    quoted = (f if f.startswith("--") else "'" + f.replace("'", "'\"'\"'") + "'" for f in master_flags)
    return " ".join([WORKER_ENTRYPOINT, "--job_type", "'training_only'", *quoted])


def build_worker_pod(template: WorkerPodTemplate, worker_id: int, slot: int, num_workers: int,
                     owner: Mapping[str, Any] | None) -> dict[str, Any]:
    name = worker_pod_name(template.job_name, worker_id)
    env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in template.env.items()]
    env += [{"name": "MASTER_ADDR", "value": template.master_addr},
            {"name": "WORKER_ID", "value": str(worker_id)},
            {"name": "WORKER_NUM", "value": str(num_workers)},
            {"name": "MY_POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]
    container: dict[str, Any] = {
        "name": name, "image": template.image, "command": ["/bin/bash"],
        "args": ["-c", f"set -o pipefail; {template.command_line}"], "env": env,
        "imagePullPolicy": template.image_pull_policy,
    }
    limits = template.limits or template.requests
    if template.requests or limits:
        container["resources"] = {k: v for k, v in (("requests", template.requests), ("limits", limits)) if v}
    spec: dict[str, Any] = {"containers": [container], "restartPolicy": template.restart_policy,
                            "terminationGracePeriodSeconds": 1}
    volumes, mounts = parse_volumes(template.volume, name)
    if volumes:
        spec["volumes"], container["volumeMounts"] = volumes, mounts
    priority = slot_priority(template.priority, slot, num_workers) if template.priority else ""
    if priority:
        spec["priorityClassName"] = priority
    metadata: dict[str, Any] = {
        "name": name, "namespace": template.namespace,
        "labels": {APP_LABEL: APP_NAME, JOB_NAME_LABEL: template.job_name, REPLICA_TYPE_LABEL: "worker",
                   REPLICA_INDEX_LABEL: str(worker_id)},
    }
    if owner is not None:
        metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": meta.name(owner),
                                        "uid": meta.uid(owner), "blockOwnerDeletion": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
