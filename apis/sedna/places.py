"""The places of an IncrementalLearningJob or LifelongLearningJob (issue 38): where a path reported for the job (by a
worker, or by an LC in its ``Ready`` input) may point. Shared by the LC, which checks a host path on its rootfs with
symlinks resolved, and the GM, which sees no filesystem and checks it lexically.

* A job's places are its ``outputDir`` and the directory of each of its Models' URLs. A host-path place is
  normalised (``posixpath.normpath``, rooted at ``/``); an S3 place is a bucket and a key prefix (``s3://b/out/`` for
  ``outputDir: s3://b/out``; ``s3://b/models/`` for a Model at ``s3://b/models/m.pb``).
* A host path is inside a place when it lies strictly below it; so a file reported there is mounted (its directory)
  or copied inside the place, never the place's parent.
* An S3 URL is inside when it is in a place's bucket below its key prefix, and its key has no ``.`` or ``..``
  segment (an S3 key is not a path: a store may or may not fold them).
* Anything else is no place: a URL with another scheme, or none at all.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from .storageurl import LOCAL_SCHEME, InvalidStorageURL, parse_s3_url, url_scheme

__all__ = ["PATH_OUTSIDE_JOB", "DeclaredPlaces", "host_path"]

PATH_OUTSIDE_JOB = "PathOutsideJob"
"""The reason (a condition's and a Warning Event's) of a stage that failed on a path outside the job's places."""


def host_path(url: str) -> str:
    """The host path ``url`` names, normalised and rooted at ``/`` (as the LC reads it under its rootfs)."""
    return posixpath.normpath("/" + url.lstrip("/"))


@dataclass(frozen=True)
class DeclaredPlaces:
    """A job's places as its spec and Models declare them: ``host`` (normalised host directories), ``s3`` ((bucket,
    key prefix ending in ``/`` or ``""``) pairs), ``declared`` (every place as written in messages)."""

    host: tuple[str, ...]
    s3: tuple[tuple[str, str], ...]
    declared: tuple[str, ...]

    @classmethod
    def of(cls, output_dir: str, model_urls: Iterable[str]) -> DeclaredPlaces:
        """The places of a job with ``output_dir`` and Models at ``model_urls`` (their directories count). A place
        that is no storage URL holds nothing (the job's spec is reported bad elsewhere)."""
        host: list[str] = []
        s3: list[tuple[str, str]] = []
        declared: list[str] = []
        for url, is_dir in ((output_dir, True), *((u, False) for u in model_urls)):
            try:
                if url_scheme(url) == LOCAL_SCHEME:
                    place = host_path(url if is_dir else posixpath.dirname(url))
                    host.append(place)
                    declared.append(place)
                else:
                    location = parse_s3_url(url.rstrip("/") + "/x" if is_dir else url)
                    prefix = posixpath.dirname(location.key)
                    s3.append((location.bucket, prefix + "/" if prefix else ""))
                    declared.append(f"s3://{location.bucket}/{prefix}")
            except InvalidStorageURL:
                continue
        return cls(tuple(host), tuple(s3), tuple(declared))

    def describe(self) -> str:
        """The places for a message: ``/out, s3://b/models`` (``none`` when the job declares none)."""
        return ", ".join(dict.fromkeys(self.declared)) or "none"

    def problem(self, url: str, host_problem: Callable[[str], str] | None = None) -> str:
        """Why ``url`` is not inside the job's places (``""`` when it is inside); a host path is judged by
        ``host_problem`` (the LC's, on its rootfs), else lexically (``host_problem`` of this class)."""
        try:
            if url_scheme(url) == LOCAL_SCHEME:
                return (host_problem or self.host_problem)(url)
        except InvalidStorageURL as exc:
            return f"{url!r} is no storage URL ({exc.problem})"
        return self.s3_problem(url)

    def host_problem(self, url: str) -> str:
        """Why the host path ``url``, normalised, is not below one of the host places (``""`` when it is)."""
        path = PurePosixPath(host_path(url))
        if any(PurePosixPath(place) in path.parents for place in self.host):
            return ""
        shown = f" (normalised: {path})" if str(path) != url else ""
        if str(path) in self.host:
            return f"{url!r}{shown} is one of the job's places itself, not a path below it ({self.describe()})"
        return f"{url!r}{shown} is outside the job's places ({self.describe()})"

    def s3_problem(self, url: str) -> str:
        """Why the S3 URL ``url`` is not in one of the S3 places (``""`` when it is)."""
        try:
            location = parse_s3_url(url)
        except InvalidStorageURL as exc:
            return f"{url!r} is no storage URL ({exc.problem})"
        segments = location.key.split("/")
        if "." in segments or ".." in segments:
            return f"{url!r} has '.' or '..' in its key"
        if not any(location.bucket == bucket and location.key.startswith(prefix) for bucket, prefix in self.s3):
            return f"{url!r} is outside the job's places ({self.describe()})"
        return ""
