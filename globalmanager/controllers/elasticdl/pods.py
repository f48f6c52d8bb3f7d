"""The ElasticDL master pod, as the ElasticDL client tool builds it, owned by its ElasticAIJob.

* name ``elasticdl-<job>-master``; labels ``app=elasticdl``, ``elasticdl-job-name``, ``elasticdl-replica-type=master``,
  ``elasticdl-replica-index=0``; ``restartPolicy: Never``; priorityClassName from ``spec.master.priority``;
* one container running ``/bin/bash -c "set -o pipefail; python -m elasticdl.python.master.main --flag 'value' ..."``
  split as the client splits it: ``command: ["/bin/bash"]``, ``args: ["-c", "<command line>"]``; the command line has
  ``jobArgs`` followed by the flags derived from the structured fields (``--num_workers``, ``--worker_image``,
  ``--worker_resource_request``, ``--num_ps_pods``...); every value is single-quoted for the shell;
* resources from ``spec.master.resource_request``/``resource_limit`` (limits default to the requests, as the client
  does); volumes and mounts from ``spec.master.volume`` (volumes named ``<pod>-volume-<i>`` in order of first
  appearance, listed claims first, then host paths, as the client's ``parse_volume_and_mount``); env ``MY_POD_IP`` from the downward API;
* annotation ``elasticdl.org/job-generation`` records the job generation the pod was built for, and the job's
  annotations prefixed ``sandbox.sedna.io/`` are copied onto the pod (they steer the sandbox's pod simulator, e.g.
  ``sandbox.sedna.io/run-seconds``; a real kubelet ignores them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.resources import ELASTIC_AI_JOBS, lookup
from globalmanager.runtime.pods import get_pod_from_template
from globalmanager.runtime.revisions import stamp_generation

from .spec import ElasticAIJobSpec, ReplicaSpec, VolumeSpec

__all__ = [
    "APP_LABEL",
    "APP_NAME",
    "GENERATION_ANNOTATION",
    "JOB_NAME_LABEL",
    "MASTER_ENTRYPOINT",
    "REPLICA_INDEX_LABEL",
    "REPLICA_TYPE_LABEL",
    "SANDBOX_ANNOTATION_PREFIX",
    "build_master_pod",
    "derived_flags",
    "master_command",
    "master_pod_name",
    "shell_quote",
]

APP_LABEL = "app"
APP_NAME = "elasticdl"
JOB_NAME_LABEL = "elasticdl-job-name"
REPLICA_TYPE_LABEL = "elasticdl-replica-type"
REPLICA_INDEX_LABEL = "elasticdl-replica-index"
GENERATION_ANNOTATION = "elasticdl.org/job-generation"
SANDBOX_ANNOTATION_PREFIX = "sandbox.sedna.io/"
MASTER_ENTRYPOINT = "set -o pipefail; python -m elasticdl.python.master.main"

JOB_GVK = lookup(ELASTIC_AI_JOBS).gvk


def master_pod_name(job_name: str) -> str:
    return f"elasticdl-{job_name}-master"


def shell_quote(value: str) -> str:
    """Always single-quote (as the ElasticDL client does), escaping embedded single quotes."""
    return "'" + value.replace("'", "'\"'\"'") + "'"


def derived_flags(job: Mapping[str, Any], spec: ElasticAIJobSpec) -> list[tuple[str, str]]:
    """The master flags the controller derives from metadata and the structured replica fields."""
    flags: list[tuple[str, str]] = [
        ("job_name", meta.name(job)),
        ("namespace", meta.namespace(job)),
        ("image_name", spec.master.image),
    ]
    m = spec.master
    flags += _replica_resource_flags("master", m)
    if spec.worker is not None:
        w = spec.worker
        if w.count is not None:
            flags.append(("num_workers", str(w.count)))
        flags.append(("worker_image", w.image or m.image))
        flags += _replica_resource_flags("worker", w)
    if spec.ps is not None:
        p = spec.ps
        if p.count is not None:
            flags.append(("num_ps_pods", str(p.count)))
        flags += _replica_resource_flags("ps", p)
    volume = (spec.worker.volume if spec.worker is not None else "") or m.volume
    if volume:
        flags.append(("volume", volume))
    return flags


def _replica_resource_flags(role: str, replica: ReplicaSpec) -> list[tuple[str, str]]:
    """``<role>_resource_request``, ``<role>_resource_limit`` (the request when unset) and ``<role>_pod_priority``,
    each only when it has a value."""
    candidates = (
        ("resource_request", replica.resource_request),
        ("resource_limit", replica.resource_limit or replica.resource_request),
        ("pod_priority", replica.priority),
    )
    return [(f"{role}_{flag}", value) for flag, value in candidates if value]


def master_command(job: Mapping[str, Any], spec: ElasticAIJobSpec) -> list[str]:
    """The master's full argv ``["/bin/bash", "-c", "set -o pipefail; python -m elasticdl.python.master.main
    --flag 'value' ..."]``; the pod carries ``argv[:1]`` as ``command`` and ``argv[1:]`` as ``args``."""
    parts = [MASTER_ENTRYPOINT]
    for arg in spec.job_args:
        parts.append(f"--{arg.flag} {shell_quote(arg.value)}")
    for flag, value in derived_flags(job, spec):
        parts.append(f"--{flag} {shell_quote(value)}")
    return ["/bin/bash", "-c", " ".join(parts)]


def _volumes(pod_name: str, specs: list[VolumeSpec]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Volumes (one per distinct host path / claim, named ``<pod>-volume-<i>``) and the container's mounts."""
    claims: list[dict[str, Any]] = []
    host_paths: list[dict[str, Any]] = []
    by_source: dict[tuple[str, str], str] = {}
    mounts: list[dict[str, Any]] = []
    for v in specs:
        source = ("pvc", v.claim_name) if v.claim_name else ("host", v.host_path)
        name = by_source.get(source)
        if name is None:
            name = f"{pod_name}-volume-{len(by_source)}"
            by_source[source] = name
            if v.claim_name:
                claims.append({"name": name, "persistentVolumeClaim": {"claimName": v.claim_name, "readOnly": False}})
            else:
                host_path: dict[str, Any] = {"path": v.host_path}
                if v.type:
                    host_path["type"] = v.type
                host_paths.append({"name": name, "hostPath": host_path})
        mount: dict[str, Any] = {"name": name, "mountPath": v.mount_path}
        if v.sub_path:
            mount["subPath"] = v.sub_path
        mounts.append(mount)
    return claims + host_paths, mounts


def build_master_pod(job: Mapping[str, Any], spec: ElasticAIJobSpec) -> dict[str, Any]:
    """The master pod for ``job`` (parsed ``spec``), with a controller ownerReference to the job."""
    job_name = meta.name(job)
    name = master_pod_name(job_name)
    m = spec.master
    argv = master_command(job, spec)
    container: dict[str, Any] = {
        "name": name,
        "image": m.image,
        "command": argv[:1],
        "args": argv[1:],
        "env": [{"name": "MY_POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
    }
    limits = m.limits or m.requests
    if m.requests or limits:
        container["resources"] = {k: v for k, v in (("requests", m.requests), ("limits", limits)) if v}
    if m.image_pull_policy:
        container["imagePullPolicy"] = m.image_pull_policy
    volumes, mounts = _volumes(name, m.volumes)
    if mounts:
        container["volumeMounts"] = mounts
    pod_spec: dict[str, Any] = {"restartPolicy": "Never", "containers": [container]}
    if volumes:
        pod_spec["volumes"] = volumes
    if m.priority:
        pod_spec["priorityClassName"] = m.priority
    annotations = {k: v for k, v in meta.annotations(job).items() if k.startswith(SANDBOX_ANNOTATION_PREFIX)}
    template = {
        "metadata": {
            "labels": {
                APP_LABEL: APP_NAME,
                JOB_NAME_LABEL: job_name,
                REPLICA_TYPE_LABEL: "master",
                REPLICA_INDEX_LABEL: "0",
            },
            "annotations": annotations,
        },
        "spec": pod_spec,
    }
    pod = get_pod_from_template(template, {**job, "apiVersion": JOB_GVK.api_version, "kind": JOB_GVK.kind})
    stamp_generation(pod, job, GENERATION_ANNOTATION)
    md = pod["metadata"]
    del md["generateName"]  # the client tool names the master
    md["name"] = name
    md["namespace"] = meta.namespace(job)
    return pod
