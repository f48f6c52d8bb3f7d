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
and the rule and ``reason: PathOutsideJob`` (the GM's Warning Event), and nothing is copied. The declared places and
the S3 rule are ``apis.sedna.places``'s, which the GM applies (lexically) to the paths of an LC's ``Ready`` input.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apis.sedna.places import PATH_OUTSIDE_JOB, DeclaredPlaces

from .errors import StageFailed

__all__ = ["PATH_OUTSIDE_JOB", "RULE", "JobPlaces", "PathOutsideJob"]

RULE = ("a path a worker reports is used only inside the job's output directory and its Models' directories "
        "(symlinks resolved), never in the LC's state directory")
_DB_COMPANIONS = ("", "-wal", "-shm", "-journal")


class PathOutsideJob(StageFailed):
    """A worker reported a path outside the job's places: the stage fails and nothing is copied."""

    reason = PATH_OUTSIDE_JOB


@dataclass(frozen=True)
class JobPlaces:
    """The places of one job on this node: ``places`` as declared (``apis.sedna.places``), ``local`` their host
    directories on the rootfs with symlinks resolved."""

    places: DeclaredPlaces
    rootfs: Path
    local: tuple[Path, ...]
    state_dir: Path | None  # the LC's state directory when it lies inside the rootfs
    state_files: tuple[Path, ...]

    @classmethod
    def of(cls, rootfs: str, db_path: str, output_dir: str, model_urls: Iterable[str]) -> JobPlaces:
        """The places of a job with ``output_dir`` and Models at ``model_urls`` (their directories count)."""
        root = Path(os.path.realpath(rootfs))
        places = DeclaredPlaces.of(output_dir, model_urls)
        local = tuple(Path(os.path.realpath(os.path.join(root, place.lstrip("/")))) for place in places.host)
        db = Path(os.path.realpath(db_path)) if db_path else None
        state_dir = db.parent if db is not None and root in db.parent.parents else None
        state_files = tuple(Path(f"{db}{suffix}") for suffix in _DB_COMPANIONS) if db is not None else ()
        return cls(places, root, local, state_dir, state_files)

    def problem(self, url: str) -> str:
        """Why ``url`` is not one of the job's places (``""`` when it is)."""
        return self.places.problem(url, self._local_problem)

    def _local_problem(self, url: str) -> str:
        real = Path(os.path.realpath(os.path.join(self.rootfs, url.lstrip("/"))))
        if real in self.state_files or (self.state_dir is not None and _within(real, self.state_dir)):
            return f"{url!r} is in the LC's own state ({self.state_dir or real})"
        if not any(_within(real, place) for place in self.local):
            shown = "/" + real.relative_to(self.rootfs).as_posix() if _within(real, self.rootfs) else "outside the rootfs"
            return f"{url!r} (resolved: {shown}) is outside the job's places ({self.places.describe()})"
        return ""

    def confine(self, models: Sequence[Mapping[str, Any]], what: str) -> None:
        """Raise ``PathOutsideJob`` naming the first of ``models`` (described as ``what``) whose ``url`` is not in
        the job's places."""
        for model in models:
            problem = self.problem(str(model.get("url") or ""))
            if problem:
                raise PathOutsideJob(f"{what}: {problem}; {RULE}; nothing was copied")


def _within(path: Path, directory: Path) -> bool:
    return directory in path.parents
