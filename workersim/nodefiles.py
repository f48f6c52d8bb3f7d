"""A node's host filesystem as the sandbox keeps it: host path ``/a/b`` lives at ``<rootfs>/a/b``, the directory the
node's ``sedna-lc`` runs with (``--rootfs``). A host path never escapes the rootfs (``..`` and symlinks included)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["NodeFiles"]


class NodeFiles:
    def __init__(self, rootfs: str | os.PathLike[str]) -> None:
        self.rootfs = Path(rootfs).resolve()

    def path(self, host_path: str) -> Path:
        """The local path of ``host_path``; ``ValueError`` when it would leave the rootfs."""
        local = (self.rootfs / host_path.lstrip("/")).resolve()
        if local != self.rootfs and self.rootfs not in local.parents:
            raise ValueError(f"host path {host_path!r} leaves the node's rootfs")
        return local

    def write(self, host_path: str, data: bytes) -> Path:
        """Write atomically (a reader sees the old file or the whole new one), creating directories."""
        target = self.path(host_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    def read(self, host_path: str, limit: int = 1024 * 1024) -> bytes | None:
        """The file's first ``limit`` bytes, or None when it is not a readable file."""
        try:
            with open(self.path(host_path), "rb") as src:
                return src.read(limit)
        except (OSError, ValueError):
            return None

    def is_file(self, host_path: str) -> bool:
        try:
            return self.path(host_path).is_file()
        except ValueError:
            return False
