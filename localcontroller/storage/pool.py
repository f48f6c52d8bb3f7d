"""Storages for the objects the GM sends: one ``Storage`` per distinct ``sedna.io/credential`` value.

Objects that share a credential (a job, its dataset, its models) share one ``Storage`` and so one S3 client, and an
S3 → S3 copy between them stays server-side. ``copy_between`` copies between two storages with different
credentials. The credential text is only a dictionary key here: it is never logged or shown.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from apis.sedna.constants import CREDENTIAL_ANNOTATION

from .errors import StorageError
from .storage import Storage
from .urls import LOCAL_SCHEME, url_scheme

__all__ = ["StoragePool", "copy_between", "credential_of"]

"""The annotation the GM puts on an object it sends when the object names a Secret (``credentialName``)."""


def credential_of(obj: Mapping[str, Any] | None) -> str | None:
    """The ``sedna.io/credential`` annotation of ``obj`` (``None`` when absent or empty)."""
    annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
    value = annotations.get(CREDENTIAL_ANNOTATION)
    return value if isinstance(value, str) and value else None


class StoragePool:
    """``Storage`` objects under one rootfs, one per credential, the ``max_size`` most recently used kept.
    Thread-safe."""

    def __init__(self, rootfs: str, max_size: int = 32) -> None:
        self.rootfs = rootfs
        self.max_size = max_size
        self._lock = threading.Lock()
        self._storages: OrderedDict[str | None, Storage] = OrderedDict()

    def get(self, credential: str | None) -> Storage:
        """The storage for ``credential`` (a ``sedna.io/credential`` value, or ``None`` for host paths only);
        ``ValueError`` naming a missing or bad key of the credential (never a value)."""
        with self._lock:
            storage = self._storages.get(credential)
            if storage is not None:
                self._storages.move_to_end(credential)
                return storage
        storage = Storage(self.rootfs, credential)
        with self._lock:
            storage = self._storages.setdefault(credential, storage)
            self._storages.move_to_end(credential)
            while len(self._storages) > self.max_size:
                self._storages.popitem(last=False)
        return storage

    def for_object(self, obj: Mapping[str, Any] | None) -> Storage:
        """The storage for an object the GM sent, with its ``sedna.io/credential`` annotation; ``ValueError`` as
        ``get``."""
        return self.get(credential_of(obj))


def copy_between(src: Storage, src_url: str, dst: Storage, dst_url: str) -> None:
    """Copy ``src_url`` (reached through ``src``) to ``dst_url`` (through ``dst``): host paths, S3 with either
    storage's credential, server-side when both are the same storage. ``StorageError`` names what failed."""
    if src is dst:
        src.copy_file(src_url, dst_url)
        return
    src_local, dst_local = url_scheme(src_url) == LOCAL_SCHEME, url_scheme(dst_url) == LOCAL_SCHEME
    if dst_local:
        src.download(src_url, dst.local_path(dst_url))
    elif src_local:
        dst.upload(src.download(src_url), dst_url)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="sedna-lc-copy-"))
        try:
            staged = src.download(src_url, tmp / (PurePosixPath(src_url).name or "object"))
            dst.upload(staged, dst_url)
        except OSError as exc:
            raise StorageError(dst_url, f"copy from {src_url} failed: {exc.strerror or exc}") from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
