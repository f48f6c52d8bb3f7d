"""Host paths seen from the LC: the host's ``/`` is mounted at the rootfs, and nothing outside it is reachable."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from .errors import StorageError

__all__ = ["RootFS", "copy_file_atomically"]


class RootFS:
    """Maps a host path (a local storage URL) ``/a/b.txt`` to ``<root>/a/b.txt``. A URL whose path, after
    ``..`` and symlinks are resolved, lies outside the root is refused."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.realpath(root))

    def resolve(self, url: str) -> Path:
        """The real path of the host path ``url`` (which need not exist yet); ``StorageError`` if it escapes."""
        if not url:
            raise StorageError(url, "empty URL")
        real = Path(os.path.realpath(os.path.join(self.root, url.lstrip("/"))))
        if real != self.root and self.root not in real.parents:
            raise StorageError(url, f"resolves outside the rootfs {self.root}")
        return real

    def to_url(self, path: str | os.PathLike[str]) -> str:
        """The host path of ``path`` under the root (what a worker on the host sees), the inverse of ``resolve``."""
        relative = Path(os.path.realpath(path)).relative_to(self.root)
        return "/" + relative.as_posix() if relative.parts else "/"


def copy_file_atomically(src: Path, dst: Path) -> None:
    """Copy ``src`` to ``dst`` (parents created, mode copied) in chunks through a temporary file beside ``dst``,
    so a reader of ``dst`` sees the old file or the whole new one, never a part."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", dir=dst.parent)
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        shutil.copymode(src, tmp)
        os.replace(tmp, dst)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
