"""A node's host filesystem as the sandbox keeps it: host path ``/a/b`` lives at ``<rootfs>/a/b``, the directory the
node's ``sedna-lc`` runs with (``--rootfs``). A host path never escapes the rootfs (``..`` and symlinks included).
A worker reads and writes through its pod's mounts (``mounts.PodMounts``), opened at these paths."""

from __future__ import annotations

import os
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
