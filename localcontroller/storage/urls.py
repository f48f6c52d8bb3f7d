"""Storage URLs as Sedna writes them: a host path (no scheme) or ``s3://bucket/key``; nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from .errors import StorageError

__all__ = ["LOCAL_SCHEME", "S3_SCHEME", "SCHEMES", "S3Location", "is_local_url", "parse_s3_url", "url_scheme"]

LOCAL_SCHEME = ""
S3_SCHEME = "s3"
SCHEMES = (LOCAL_SCHEME, S3_SCHEME)


def url_scheme(url: str) -> str:
    """``""`` for a host path, ``"s3"`` for S3; ``StorageError`` for an empty URL or any other scheme."""
    if not url:
        raise StorageError(url, "empty URL")
    try:
        scheme = urlsplit(url).scheme
    except ValueError as exc:
        raise StorageError(url, f"not a URL: {exc}") from None
    if scheme not in SCHEMES:
        raise StorageError(url, f"unsupported scheme {scheme!r} (want a host path or s3://bucket/key)")
    return scheme


def is_local_url(url: str) -> bool:
    """Whether ``url`` is a host path (Go ``IsLocalURL``); ``StorageError`` as ``url_scheme``."""
    return url_scheme(url) == LOCAL_SCHEME


@dataclass(frozen=True)
class S3Location:
    bucket: str
    key: str

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.key}"


def parse_s3_url(url: str) -> S3Location:
    """``s3://bucket/some/key`` → ``S3Location("bucket", "some/key")`` (the path percent-decoded, as Go's
    ``url.Parse`` does); ``StorageError`` when it is no S3 URL or lacks the bucket or the key."""
    if url_scheme(url) != S3_SCHEME:
        raise StorageError(url, "not an s3:// URL")
    parts = urlsplit(url)
    key = unquote(parts.path).removeprefix("/")
    if not parts.netloc:
        raise StorageError(url, "no bucket in the S3 URL")
    if not key:
        raise StorageError(url, "no object key in the S3 URL")
    return S3Location(parts.netloc, key)
