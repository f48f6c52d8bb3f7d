"""What a worker pod's container sees of its hostPath volumes: each host directory opened once, when the pod starts
(``os.open(dir, O_RDONLY | O_DIRECTORY)``), and every later read and write done through that handle. A directory
that the node replaces afterwards (removed and created again at the same path) is invisible to the pod, as it is to
a real container whose hostPath mount is bound to the directory it found at start; a missing directory is created
first (``DirectoryOrCreate``, as the kubelet does for the GM's hot-update volume).

Paths below a mount never leave it: ``..``, absolute parts and symbolic links are refused (``O_NOFOLLOW``).
"""

from __future__ import annotations

import os
import posixpath
import stat
import threading
from dataclasses import dataclass

from .nodefiles import NodeFiles
from .workerpod import WorkerPod

__all__ = ["PodMounts"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class _Mount:
    path: str  # in the container
    host: str  # on the node
    fd: int


class PodMounts:
    """The pod's hostPath mounts on its node's ``files``; ``close()`` releases the handles (idempotent)."""

    def __init__(self, pod: WorkerPod, files: NodeFiles | None) -> None:
        self._lock = threading.Lock()
        self._mounts: list[_Mount] = []
        self._files = files
        self.problems: list[str] = []  # mounts that could not be opened (the worker then sees nothing there)
        if files is None:
            return
        for mount_path, host in pod.host_mounts:  # longest mount path first
            try:
                local = files.path(host)
                local.mkdir(parents=True, exist_ok=True)
                self._mounts.append(_Mount(mount_path, host, os.open(local, _DIR_FLAGS)))
            except (OSError, ValueError) as exc:
                self.problems.append(f"{host} at {mount_path}: {exc}")

    def close(self) -> None:
        with self._lock:
            mounts, self._mounts = self._mounts, []
        for mount in mounts:
            os.close(mount.fd)

    def local_paths(self) -> list[tuple[str, str]]:
        """``(mount path, /proc/<this pid>/fd/<handle>)`` of each mount: a path another process of this machine
        opens through the handle (the directory found at start), as long as this one keeps it open."""
        with self._lock:
            return [(m.path, f"/proc/{os.getpid()}/fd/{m.fd}") for m in self._mounts]

    def mounted(self, container_path: str) -> bool:
        return self._find(container_path) is not None

    def read(self, container_path: str, limit: int = 1024 * 1024) -> bytes | None:
        """The first ``limit`` bytes of the file as the container sees it, or None (absent, not a file, unmounted)."""
        found = self._find(container_path)
        if found is None:
            return None
        fd, parts = found
        try:
            with _DirHandle(fd, parts[:-1], create=False) as parent:
                file_fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent.fd)
            with os.fdopen(file_fd, "rb") as src:
                return src.read(limit) if stat.S_ISREG(os.fstat(file_fd).st_mode) else None
        except (OSError, ValueError):
            return None

    def is_file(self, container_path: str) -> bool:
        found = self._find(container_path)
        if found is None:
            return False
        fd, parts = found
        try:
            with _DirHandle(fd, parts[:-1], create=False) as parent:
                st = os.stat(parts[-1], dir_fd=parent.fd, follow_symlinks=False)
        except (OSError, ValueError):
            return False
        return stat.S_ISREG(st.st_mode)

    def hidden_on_node(self, container_path: str) -> bool:
        """Whether the node has a file at ``container_path``'s host path that the pod does not see there (the
        directory holding it was replaced after the pod started)."""
        found = self._mount_of(container_path)
        if found is None or self._files is None or self.is_file(container_path):
            return False
        mount, parts = found
        try:
            return stat.S_ISREG(os.lstat(self._files.path(posixpath.join(mount.host, *parts))).st_mode)
        except (OSError, ValueError):
            return False

    def write(self, container_path: str, data: bytes) -> None:
        """Write atomically (a reader sees the old file or the whole new one), creating directories; ``OSError``
        when it cannot, ``ValueError`` when the path is on no mount or leaves it."""
        found = self._find(container_path)
        if found is None:
            raise ValueError(f"{container_path} is on no hostPath volume of the pod")
        fd, parts = found
        with _DirHandle(fd, parts[:-1], create=True) as parent:
            tmp = f".{parts[-1]}.{os.getpid()}.{threading.get_ident()}.partial"
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                          dir_fd=parent.fd)
            try:
                with os.fdopen(out, "wb") as dst:
                    dst.write(data)
                os.replace(tmp, parts[-1], src_dir_fd=parent.fd, dst_dir_fd=parent.fd)
            except BaseException:
                try:
                    os.unlink(tmp, dir_fd=parent.fd)
                except OSError:
                    pass
                raise

    # -- paths ----------------------------------------------------------------------------------------------------
    def _find(self, container_path: str) -> tuple[int, list[str]] | None:
        """The handle of the mount holding ``container_path`` and the parts below it (at least one)."""
        found = self._mount_of(container_path)
        return None if found is None else (found[0].fd, found[1])

    def _mount_of(self, container_path: str) -> tuple[_Mount, list[str]] | None:
        if not container_path.startswith("/"):
            return None
        path = posixpath.normpath(container_path)
        with self._lock:
            for mount in self._mounts:
                if path.startswith(mount.path.rstrip("/") + "/"):
                    rest = path[len(mount.path.rstrip("/")) + 1:]
                    parts = rest.split("/")
                    if any(p in ("", ".", "..") for p in parts):
                        return None
                    return mount, parts
        return None


class _DirHandle:
    """The directory ``parts`` below the handle ``fd``, opened step by step (created with ``create``)."""

    def __init__(self, fd: int, parts: list[str], create: bool) -> None:
        self._base = fd
        self._parts = parts
        self._create = create
        self._opened: list[int] = []
        self.fd = fd

    def __enter__(self) -> _DirHandle:
        try:
            for part in self._parts:
                if self._create:
                    try:
                        os.mkdir(part, 0o755, dir_fd=self.fd)
                    except FileExistsError:
                        pass
                self.fd = os.open(part, _DIR_FLAGS, dir_fd=self.fd)
                self._opened.append(self.fd)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self._opened:
            os.close(fd)
        self._opened = []
