"""Where a path a worker reports may point (issue 38): a worker's report is relayed as it is, so a model URL in it
(``output.models[].url``) is untrusted. The LC uses one (copies it, or hands it to the next stage's worker) only when
it lies inside the job's own places:

* host paths: below the job's ``outputDir`` or a directory of one of its Models' URLs (IL: ``initialModel``,
  ``deploySpec.model``, ``evalSpec.initialEvalModel``), on the rootfs, after ``..`` and symlinks are resolved (a
  symlink inside a place that points out of it is outside), and never in the LC's own state: the directory of its
  database (``--db``) when that directory lies inside the rootfs, else the database's files themselves;
* S3 URLs: in the bucket of such a place and below its key prefix (``s3://b/out/`` for ``outputDir: s3://b/out``;
  ``s3://b/models/`` for a Model at ``s3://b/models/m.pb``); a key with ``.`` or ``..`` segments is refused, as an
  S3 key is not a path and a store may or may not fold them.

Otherwise ``PathOutsideJob`` (a ``StageFailed``): the stage is reported ``Failed`` with a ``message`` naming the path
and the rule and ``reason: PathOutsideJob`` (the GM's Warning Event), and nothing is copied.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localcontroller.storage import LOCAL_SCHEME, StorageError, parse_s3_url, url_scheme

from .errors import StageFailed

__all__ = ["PATH_OUTSIDE_JOB", "RULE", "JobPlaces", "PathOutsideJob"]

PATH_OUTSIDE_JOB = "PathOutsideJob"
RULE = ("a path a worker reports is used only inside the job's output directory and its Models' directories "
        "(symlinks resolved), never in the LC's state directory")
_DB_COMPANIONS = ("", "-wal", "-shm", "-journal")


class PathOutsideJob(StageFailed):
    """A worker reported a path outside the job's places: the stage fails and nothing is copied."""

    reason = PATH_OUTSIDE_JOB


@dataclass(frozen=True)
class JobPlaces:
    """The places of one job on this node. ``declared``: the places as the job names them (for messages)."""

    rootfs: Path
    local: tuple[Path, ...]
    s3: tuple[tuple[str, str], ...]  # (bucket, key prefix ending in "/" or "")
    state_dir: Path | None  # the LC's state directory when it lies inside the rootfs
    state_files: tuple[Path, ...]
    declared: tuple[str, ...]

    @classmethod
    def of(cls, rootfs: str, db_path: str, output_dir: str, model_urls: Iterable[str]) -> JobPlaces:
        """The places of a job with ``output_dir`` and Models at ``model_urls`` (their directories count)."""
        root = Path(os.path.realpath(rootfs))
        local: list[Path] = []
        s3: list[tuple[str, str]] = []
        declared: list[str] = []
        for url, is_dir in ((output_dir, True), *((u, False) for u in model_urls)):
            try:
                scheme = url_scheme(url)
                if scheme == LOCAL_SCHEME:
                    place = posixpath.normpath("/" + (url if is_dir else posixpath.dirname(url)).lstrip("/"))
                    local.append(Path(os.path.realpath(os.path.join(root, place.lstrip("/")))))
                    declared.append(place)
                else:
                    location = parse_s3_url(url.rstrip("/") + "/x" if is_dir else url)
                    prefix = posixpath.dirname(location.key)
                    s3.append((location.bucket, prefix + "/" if prefix else ""))
                    declared.append(f"s3://{location.bucket}/{prefix}")
            except StorageError:
                continue  # a place that is no URL holds nothing (the job's spec is reported bad elsewhere)
        db = Path(os.path.realpath(db_path)) if db_path else None
        state_dir = db.parent if db is not None and root in db.parent.parents else None
        state_files = tuple(Path(f"{db}{suffix}") for suffix in _DB_COMPANIONS) if db is not None else ()
        return cls(root, tuple(local), tuple(s3), state_dir, state_files, tuple(declared))

    def problem(self, url: str) -> str:
        """Why ``url`` is not one of the job's places (``""`` when it is)."""
        try:
            if url_scheme(url) == LOCAL_SCHEME:
                return self._local_problem(url)
            location = parse_s3_url(url)
        except StorageError as exc:
            return f"{url!r} is no storage URL ({exc.problem})"
        segments = location.key.split("/")
        if "." in segments or ".." in segments:
            return f"{url!r} has '.' or '..' in its key"
        if not any(location.bucket == bucket and location.key.startswith(prefix) for bucket, prefix in self.s3):
            return f"{url!r} is outside the job's places ({self._declared()})"
        return ""

    def _local_problem(self, url: str) -> str:
        real = Path(os.path.realpath(os.path.join(self.rootfs, url.lstrip("/"))))
        if real in self.state_files or (self.state_dir is not None and _within(real, self.state_dir)):
            return f"{url!r} is in the LC's own state ({self.state_dir or real})"
        if not any(_within(real, place) for place in self.local):
            shown = "/" + real.relative_to(self.rootfs).as_posix() if _within(real, self.rootfs) else "outside the rootfs"
            return f"{url!r} (resolved: {shown}) is outside the job's places ({self._declared()})"
        return ""

    def _declared(self) -> str:
        return ", ".join(self.declared) or "none"

    def confine(self, models: Sequence[Mapping[str, Any]], what: str) -> None:
        """Raise ``PathOutsideJob`` naming the first of ``models`` (described as ``what``) whose ``url`` is not in
        the job's places."""
        for model in models:
            problem = self.problem(str(model.get("url") or ""))
            if problem:
                raise PathOutsideJob(f"{what}: {problem}; {RULE}; nothing was copied")


def _within(path: Path, directory: Path) -> bool:
    return directory in path.parents
