"""Storage of a worker (Sedna's ``storage_initializer_injector.go``): how a dataset/model URL reaches the container.

* Host paths (no scheme) are mounted under ``/home/data`` (a file: its directory) with env ``DATA_PATH_PREFIX``.
* ``s3://``, ``http://``, ``https://`` URLs of mounts that ``download_by_initializer`` are fetched before the worker
  starts by the ``storage-initializer`` init container into an emptyDir at ``/downloads`` (args ``src dst ...``; an
  indirect (index-file) destination is prefixed with ``@``, announced by ``INDIRECT_URL_MARK``).
* S3 credentials (``secrets.build_s3_secret_envs``) go to the init container for downloaded URLs, to the workers for
  the others.
* Each mount's ``env_name`` gets the container path(s), ``;``-joined, or the URL itself when nothing is mounted.

``inject_storage(pod_spec, param)`` applies all of it to a pod spec in place (a pod's or a Deployment template's).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from .names import convert_k8s_valid_name
from .secrets import build_s3_secret_envs, merge_secret_envs

if TYPE_CHECKING:
    from .worker import WorkerParam

__all__ = [
    "DATA_PATH_PREFIX_ENV",
    "DOWNLOAD_PREFIX",
    "HOST_PATH_PREFIX",
    "INITIALIZER_IMAGE",
    "INITIALIZER_NAME",
    "INITIALIZER_VOLUME",
    "MountURL",
    "WorkerMount",
    "inject_env",
    "inject_storage",
    "inject_volumes",
    "prepare_storage",
]

INITIALIZER_NAME = "storage-initializer"
INITIALIZER_IMAGE = "kubeedge/sedna-storage-initializer:v0.3.0"
DOWNLOAD_PREFIX = "/downloads"
INITIALIZER_VOLUME = "sedna-storage-initializer"
DATA_PATH_PREFIX_ENV = "DATA_PATH_PREFIX"
HOST_PATH_PREFIX = "/home/data"
URLS_SEP = ";"
INDIRECT_URL_MARK = "@"
INDIRECT_URL_MARK_ENV = "INDIRECT_URL_MARK"
DEFAULT_VOLUME_NAME = "sedna-default-volume-name"
_DOWNLOAD_SCHEMES = ("s3", "http", "https")


def _join(*parts: str) -> str:
    """Go's ``filepath.Join``: non-empty parts joined by ``/`` and cleaned; ``""`` when all are empty."""
    kept = [p for p in parts if p]
    return posixpath.normpath("/".join(kept)) if kept else ""


def _dir(path: str) -> str:
    """The directory part of Go's ``filepath.Split`` (with its trailing ``/``)."""
    return path[: path.rfind("/") + 1]


@dataclass
class MountURL:
    """One URL of a mount; ``parse()`` fills the derived fields as Sedna's ``MountURL.Parse``."""

    url: str
    indirect: bool = False
    download_by_initializer: bool = False
    is_dir: bool = False
    enable_if_host_path: bool = False
    secret: Mapping[str, Any] | None = None
    # derived
    container_path: str = ""
    mount_path: str = ""
    host_path: str = ""
    download_src_url: str = ""
    download_dst_dir: str = ""
    disable: bool = False
    secret_envs: list[dict[str, str]] = field(default_factory=list)

    def parse(self) -> None:
        parts = urlsplit(self.url)
        scheme = parts.scheme.lower()
        host = parts.netloc.rpartition("@")[2]
        path = unquote(parts.path)
        if self.download_by_initializer and scheme in _DOWNLOAD_SCHEMES:
            self.mount_path = DOWNLOAD_PREFIX
            self.container_path = _join(self.mount_path, host + path)
            self.download_src_url = self.url
            self.download_dst_dir = _dir(self.container_path)
        if scheme:
            if self.enable_if_host_path:
                self.disable = True
        elif self.is_dir:
            self.host_path = self.url
            self.mount_path = _join(HOST_PATH_PREFIX, path)
            self.container_path = self.mount_path
        else:
            self.host_path = _dir(self.url)
            self.container_path = _join(HOST_PATH_PREFIX, path)
            self.mount_path = _dir(self.container_path)
            if self.indirect:
                self.download_src_url = self.container_path
                self.container_path = _join(DOWNLOAD_PREFIX, host + path)
                self.download_dst_dir = _dir(self.container_path)
        if self.secret is not None and (scheme == "s3" or self.indirect):
            self.secret_envs = build_s3_secret_envs(self.secret)


@dataclass
class WorkerMount:
    """A named mount of one URL or several (``url`` is appended to ``urls``), announced in env ``env_name``."""

    name: str = ""
    url: MountURL | None = None
    urls: list[MountURL] = field(default_factory=list)
    env_name: str = ""


def prepare_storage(param: WorkerParam) -> None:
    """Parse every mount, drop disabled URLs and mounts left empty, and set each mount's env var."""
    mounts: list[WorkerMount] = []
    for mount in param.mounts:
        urls = list(mount.urls) + ([mount.url] if mount.url is not None else [])
        kept: list[MountURL] = []
        env_paths: list[str] = []
        for m in urls:
            m.parse()
            if m.disable:
                continue
            kept.append(m)
            env_paths.append(m.container_path or m.url)
        if kept:
            mounts.append(WorkerMount(name=mount.name, urls=kept, env_name=mount.env_name))
        if mount.env_name:
            param.env[mount.env_name] = URLS_SEP.join(env_paths)
    param.mounts = mounts


def inject_env(containers: list[dict[str, Any]], env: Mapping[str, str] | list[dict[str, Any]]) -> None:
    """Add ``env`` (a name → value map or a list of EnvVars) to every container, replacing same-named variables
    (Go appends; the last of two same-named variables wins in Kubernetes, so the effect is the same)."""
    items = [{"name": k, "value": str(v)} for k, v in env.items()] if isinstance(env, Mapping) else list(env)
    if not items:
        return
    names = {e["name"] for e in items}
    for container in containers:
        current = [e for e in container.get("env") or [] if e.get("name") not in names]
        current.extend(dict(e) for e in items)
        container["env"] = current


def inject_volumes(pod_spec: dict[str, Any], volumes: list[dict[str, Any]], mounts: list[dict[str, Any]]) -> None:
    """Append ``volumes`` to the pod and ``mounts`` to every container."""
    if volumes:
        pod_spec["volumes"] = list(pod_spec.get("volumes") or []) + volumes
    if mounts:
        for container in pod_spec.get("containers") or []:
            container["volumeMounts"] = list(container.get("volumeMounts") or []) + [dict(m) for m in mounts]


def _host_path_volumes(param: WorkerParam) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    init_mounts: list[dict[str, Any]] = []
    seen: set[str] = set()
    for mount in param.mounts:
        for m in mount.urls:
            if not m.host_path:
                continue
            name = convert_k8s_valid_name(m.host_path) or DEFAULT_VOLUME_NAME
            if name not in seen:
                seen.add(name)
                volumes.append({"name": name, "hostPath": {"path": m.host_path, "type": "Directory"}})
            (init_mounts if m.indirect else mounts).append({"name": name, "mountPath": m.mount_path})
    return volumes, mounts, init_mounts


def _initializer(param: WorkerParam) -> dict[str, Any] | None:
    pairs: list[str] = []
    secret_envs: list[dict[str, str]] = []
    for mount in param.mounts:
        for m in mount.urls:
            if m.disable or not (m.download_src_url and m.download_dst_dir):
                continue
            pairs += [m.download_src_url, (INDIRECT_URL_MARK if m.indirect else "") + m.download_dst_dir]
            secret_envs = merge_secret_envs(secret_envs, m.secret_envs)
    if not pairs:
        return None
    return {
        "name": INITIALIZER_NAME,
        "image": INITIALIZER_IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "args": pairs,
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
        "volumeMounts": [{"name": INITIALIZER_VOLUME, "mountPath": DOWNLOAD_PREFIX}],
        "env": [*secret_envs, {"name": INDIRECT_URL_MARK_ENV, "value": INDIRECT_URL_MARK}],
    }


def inject_storage(pod_spec: dict[str, Any], param: WorkerParam) -> None:
    """Sedna's ``InjectStorageInitializer``: prepare the mounts, then add the init container (first, since host-path
    mounts of indirect URLs go to it), the host-path volumes and the workers' secret env vars."""
    prepare_storage(param)
    containers = pod_spec.setdefault("containers", [])
    init = _initializer(param)
    if init is not None:
        pod_spec["initContainers"] = list(pod_spec.get("initContainers") or []) + [init]
        inject_volumes(
            pod_spec,
            [{"name": INITIALIZER_VOLUME, "emptyDir": {}}],
            [{"name": INITIALIZER_VOLUME, "mountPath": DOWNLOAD_PREFIX, "readOnly": True}],
        )
    volumes, mounts, init_mounts = _host_path_volumes(param)
    inject_volumes(pod_spec, volumes, mounts)
    if mounts:
        inject_env(containers, {DATA_PATH_PREFIX_ENV: HOST_PATH_PREFIX})
    if init_mounts and pod_spec.get("initContainers"):
        last = pod_spec["initContainers"][-1]
        last["volumeMounts"] = list(last.get("volumeMounts") or []) + init_mounts
    secret_envs: list[dict[str, str]] = []
    for mount in param.mounts:
        for m in mount.urls:
            if not m.disable and not m.download_by_initializer and m.secret_envs:
                secret_envs = merge_secret_envs(secret_envs, m.secret_envs)
    inject_env(containers, secret_envs)
