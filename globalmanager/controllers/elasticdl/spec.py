"""ElasticAIJob spec parsing and validation (the ElasticDL operator design's CRD).

::

    spec:
      jobArgs: ["--model_zoo /model_zoo", "--minibatch_size 64", ...]   # each "--flag value"
      master: {image, priority, resource_request, resource_limit, volume, image_pull_policy}
      worker: {count, image, priority, resource_request, resource_limit, volume}
      ps:     {count, image, priority, resource_request, resource_limit, volume}

Replica fields are accepted in snake_case (as in the design) or camelCase (``resourceRequest``). Every problem raises
``SpecError`` whose ``field`` is the path of the offending field (``spec.worker.resource_request``).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from globalmanager.runtime.names import dns1123_label_error

__all__ = [
    "ElasticAIJobSpec",
    "JobArg",
    "ReplicaSpec",
    "SpecError",
    "VolumeSpec",
    "parse_job_args",
    "parse_priority",
    "parse_resources",
    "parse_spec",
    "parse_volumes",
    "RESERVED_FLAGS",
    "check_job_name",
]


class SpecError(ValueError):
    def __init__(self, field_path: str, message: str) -> None:
        self.field = field_path
        self.message = message
        super().__init__(f"{field_path}: {message}")


@dataclass(frozen=True)
class JobArg:
    flag: str  # without the leading "--"
    value: str


@dataclass(frozen=True)
class VolumeSpec:
    mount_path: str
    host_path: str = ""
    claim_name: str = ""
    type: str = ""
    sub_path: str = ""


@dataclass
class ReplicaSpec:
    image: str = ""
    count: int | None = None
    priority: str = ""
    resource_request: str = ""
    resource_limit: str = ""
    volume: str = ""
    image_pull_policy: str = ""
    requests: dict[str, str] = field(default_factory=dict)
    limits: dict[str, str] = field(default_factory=dict)
    volumes: list[VolumeSpec] = field(default_factory=list)


@dataclass
class ElasticAIJobSpec:
    job_args: list[JobArg]
    master: ReplicaSpec
    worker: ReplicaSpec | None = None
    ps: ReplicaSpec | None = None


# Flags the controller derives from the structured fields; a jobArgs element may not set them as well.
RESERVED_FLAGS = {
    "job_name": "metadata.name",
    "namespace": "metadata.namespace",
    "image_name": "spec.master.image",
    "master_resource_request": "spec.master.resource_request",
    "master_resource_limit": "spec.master.resource_limit",
    "master_pod_priority": "spec.master.priority",
    "num_workers": "spec.worker.count",
    "worker_image": "spec.worker.image",
    "worker_resource_request": "spec.worker.resource_request",
    "worker_resource_limit": "spec.worker.resource_limit",
    "worker_pod_priority": "spec.worker.priority",
    "num_ps_pods": "spec.ps.count",
    "ps_resource_request": "spec.ps.resource_request",
    "ps_resource_limit": "spec.ps.resource_limit",
    "ps_pod_priority": "spec.ps.priority",
    "volume": "spec.worker.volume / spec.master.volume",
}

_FLAG_RE = re.compile(r"^--([A-Za-z0-9][A-Za-z0-9_-]*)\s+(\S.*)$", re.DOTALL)
_CPU_RE = re.compile(r"^(?:[1-9][0-9]*m|[0-9]+(?:\.[0-9]+)?)$")
_MEM_RE = re.compile(r"^[0-9]+(?:\.[0-9]+)?(?:E|P|T|G|M|K|k|Ei|Pi|Ti|Gi|Mi|Ki|e[0-9]+)?$")
_INT_RE = re.compile(r"^[0-9]+$")
_GPU_VENDOR_RE = re.compile(r"^[a-zA-Z0-9-]{1,63}(?:\.[a-zA-Z0-9-]{1,63})*/[a-zA-Z0-9._-]*gpu[a-zA-Z0-9._-]*$")
_DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_VOLUME_KEYS = ("claim_name", "host_path", "type", "mount_path", "sub_path")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")


def parse_job_args(value: Any, path: str = "spec.jobArgs") -> list[JobArg]:
    """``["--flag value", ...]`` → ``JobArg`` list. A value wrapped in quotes is unquoted once."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise SpecError(path, f"must be a list of \"--flag value\" strings, got {type(value).__name__}")
    out: list[JobArg] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(item, str):
            raise SpecError(where, f"must be a string \"--flag value\", got {type(item).__name__}")
        m = _FLAG_RE.match(item.strip())
        if not m:
            raise SpecError(where, f"{item!r} is not of the form \"--flag value\"")
        flag, raw = m.group(1), m.group(2).strip()
        try:
            tokens = shlex.split(raw)
        except ValueError:
            raise SpecError(where, f"unbalanced quotes in {item!r}") from None
        val = tokens[0] if len(tokens) == 1 else raw
        if flag in seen:
            raise SpecError(where, f"--{flag} is already given by {path}[{seen[flag]}]")
        seen[flag] = i
        out.append(JobArg(flag, val))
    return out


def _check_quantity(kind: str, value: str, where: str) -> None:
    if kind == "cpu":
        ok = bool(_CPU_RE.match(value))
    elif kind in ("memory", "ephemeral-storage"):
        ok = bool(_MEM_RE.match(value))
    else:  # gpus
        ok = bool(_INT_RE.match(value))
    if not ok:
        raise SpecError(where, f"invalid {kind} quantity {value!r}")


def parse_resources(text: Any, where: str) -> dict[str, str]:
    """``"cpu=1,memory=1024Mi,gpu=1"`` → ``{"cpu": "1", "memory": "1024Mi", "nvidia.com/gpu": "1"}``.

    Names: cpu, memory, disk / ephemeral-storage, gpu (→ ``nvidia.com/gpu``) or a vendor GPU (``amd.com/gpu``,
    ``nvidia.com/<model>``). Quantities are checked (cpu ``250m``/``0.5``, memory ``1024Mi``, gpus whole numbers).
    """
    if text is None or text == "":
        return {}
    if not isinstance(text, str):
        raise SpecError(where, f"must be a string like \"cpu=1,memory=1024Mi\", got {type(text).__name__}")
    out: dict[str, str] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if part.count("=") != 1:
            raise SpecError(where, f"{part!r} is not of the form name=quantity")
        name, value = (s.strip() for s in part.split("="))
        if name == "disk":
            name = "ephemeral-storage"
        if name in ("cpu", "memory", "ephemeral-storage"):
            _check_quantity(name, value, where)
        elif name == "gpu":
            name = "nvidia.com/gpu"
            _check_quantity("gpu", value, where)
        elif name.startswith("nvidia.com/") or _GPU_VENDOR_RE.match(name):
            _check_quantity("gpu", value, where)
        else:
            raise SpecError(
                where, f"unknown resource {name!r}: allowed cpu, memory, disk, ephemeral-storage, gpu, <vendor>/gpu"
            )
        if name in out:
            raise SpecError(where, f"resource {name!r} given twice")
        out[name] = value
    return out


def parse_volumes(text: Any, where: str) -> list[VolumeSpec]:
    """``"host_path=/data,mount_path=/data;claim_name=c1,mount_path=/d2"`` → volume specs."""
    if text is None or text == "":
        return []
    if not isinstance(text, str):
        raise SpecError(where, f"must be a string like \"host_path=/data,mount_path=/data\", got {type(text).__name__}")
    volumes: list[VolumeSpec] = []
    for chunk in text.split(";"):
        chunk = chunk.strip()
        if not chunk:
            continue
        kv: dict[str, str] = {}
        for part in chunk.split(","):
            part = part.strip()
            if part.count("=") != 1:
                raise SpecError(where, f"{part!r} is not of the form key=value")
            k, v = (s.strip() for s in part.split("="))
            if k not in _VOLUME_KEYS:
                raise SpecError(where, f"unknown volume key {k!r}: allowed {', '.join(_VOLUME_KEYS)}")
            if k in kv:
                raise SpecError(where, f"volume key {k!r} given twice in {chunk!r}")
            if not v:
                raise SpecError(where, f"volume key {k!r} has an empty value")
            kv[k] = v
        if "mount_path" not in kv or not kv["mount_path"].startswith("/"):
            raise SpecError(where, f"{chunk!r} needs an absolute mount_path")
        if ("host_path" in kv) == ("claim_name" in kv):
            raise SpecError(where, f"{chunk!r} needs exactly one of host_path or claim_name")
        volumes.append(VolumeSpec(**kv))
    return volumes


def parse_priority(text: Any, where: str, allow_fraction: bool) -> str:
    """A PriorityClass name; for workers/ps also ``name=fraction`` (ElasticDL: share of pods at that priority)."""
    if text is None or text == "":
        return ""
    if not isinstance(text, str):
        raise SpecError(where, f"must be a string, got {type(text).__name__}")
    name, sep, fraction = text.partition("=")
    if sep:
        if not allow_fraction:
            raise SpecError(where, f"{text!r}: the master takes a PriorityClass name only")
        try:
            f = float(fraction)
        except ValueError:
            raise SpecError(where, f"{text!r}: fraction {fraction!r} is not a number") from None
        if not 0 < f <= 1:
            raise SpecError(where, f"{text!r}: fraction must be in (0, 1]")
    if not _DNS_SUBDOMAIN_RE.match(name) or len(name) > 253:
        raise SpecError(where, f"{name!r} is not a valid PriorityClass name")
    return text


def _get(d: Mapping[str, Any], snake: str) -> Any:
    if snake in d:
        return d[snake]
    parts = snake.split("_")
    camel = parts[0] + "".join(p.title() for p in parts[1:])
    return d.get(camel)


def _parse_replica(raw: Any, role: str, needs_image: bool) -> ReplicaSpec:
    path = f"spec.{role}"
    if not isinstance(raw, Mapping):
        raise SpecError(path, f"must be an object, got {type(raw).__name__}")
    image = _get(raw, "image") or ""
    if not isinstance(image, str):
        raise SpecError(f"{path}.image", "must be a string")
    if needs_image and not image:
        raise SpecError(f"{path}.image", "is required")
    count = _get(raw, "count")
    if count is not None:
        if isinstance(count, bool) or not isinstance(count, int):
            raise SpecError(f"{path}.count", f"must be an integer, got {count!r}")
        if count < 0:
            raise SpecError(f"{path}.count", f"must not be negative, got {count}")
    pull = _get(raw, "image_pull_policy") or ""
    if pull and pull not in _PULL_POLICIES:
        raise SpecError(f"{path}.image_pull_policy", f"must be one of {', '.join(_PULL_POLICIES)}, got {pull!r}")
    spec = ReplicaSpec(
        image=image,
        count=count,
        priority=parse_priority(_get(raw, "priority"), f"{path}.priority", allow_fraction=role != "master"),
        resource_request=_get(raw, "resource_request") or "",
        resource_limit=_get(raw, "resource_limit") or "",
        volume=_get(raw, "volume") or "",
        image_pull_policy=pull,
    )
    spec.requests = parse_resources(spec.resource_request, f"{path}.resource_request")
    spec.limits = parse_resources(spec.resource_limit, f"{path}.resource_limit")
    spec.volumes = parse_volumes(spec.volume, f"{path}.volume")
    return spec


def check_job_name(name: str, volumes: int = 0) -> None:
    """The job's name must make valid names: the client tool names the master's container (a DNS-1123 label) and its
    volumes after the pod ``elasticdl-<name>-master``, and every pod of the job carries the name as the label
    ``elasticdl-job-name`` (≤ 63 characters), which a longer name would make the API server reject on every sync."""
    longest = f"elasticdl-{name}-master" + (f"-volume-{volumes - 1}" if volumes else "")
    problem = dns1123_label_error(longest)
    if problem:
        raise SpecError(
            "metadata.name",
            f"cannot name the job's pods, containers and labels: {problem} "
            f"(the master is named elasticdl-<name>-master, its volumes <master>-volume-<i>)",
        )


def parse_spec(job: Mapping[str, Any]) -> ElasticAIJobSpec:
    """Parse and validate ``job["spec"]`` and the names derived from ``metadata.name``; raises ``SpecError`` naming
    the field."""
    spec = job.get("spec")
    if not isinstance(spec, Mapping):
        raise SpecError("spec", "is required")
    if spec.get("master") is None:
        raise SpecError("spec.master", "is required")
    master = _parse_replica(spec["master"], "master", needs_image=True)
    worker = _parse_replica(spec["worker"], "worker", needs_image=False) if spec.get("worker") is not None else None
    ps = _parse_replica(spec["ps"], "ps", needs_image=False) if spec.get("ps") is not None else None
    job_args = parse_job_args(spec.get("jobArgs", spec.get("job_args")))
    derived = {"job_name", "namespace", "image_name"}
    if master.volume or (worker is not None and worker.volume):
        derived.add("volume")
    derived |= {k for k in RESERVED_FLAGS if k.startswith("master_")}
    if worker is not None:
        derived |= {k for k in RESERVED_FLAGS if k.startswith("worker_")} | {"num_workers"}
    if ps is not None:
        derived |= {k for k in RESERVED_FLAGS if k.startswith("ps_")} | {"num_ps_pods"}
    for i, arg in enumerate(job_args):
        if arg.flag in derived:
            raise SpecError(f"spec.jobArgs[{i}]", f"--{arg.flag} is set by the controller from {RESERVED_FLAGS[arg.flag]}")
    check_job_name(str((job.get("metadata") or {}).get("name") or ""), len({(v.claim_name, v.host_path) for v in master.volumes}))
    return ElasticAIJobSpec(job_args=job_args, master=master, worker=worker, ps=ps)
