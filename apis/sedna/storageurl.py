"""Storage URLs as Sedna writes them: a host path (no scheme) or ``s3://bucket/key``; nothing else. Shared by the GM
and the LC (``localcontroller.storage`` raises its ``StorageError`` for ``InvalidStorageURL``)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

__all__ = ["LOCAL_SCHEME", "S3_SCHEME", "SCHEMES", "InvalidStorageURL", "S3Location", "parse_s3_url", "url_scheme"]

LOCAL_SCHEME = ""
S3_SCHEME = "s3"
SCHEMES = (LOCAL_SCHEME, S3_SCHEME)


class InvalidStorageURL(ValueError):
    """``url`` is no storage URL; ``problem`` says why."""

    def __init__(self, url: str, problem: str) -> None:
        super().__init__(f"{url or '<empty URL>'}: {problem}")
        self.url = url
        self.problem = problem


def url_scheme(url: str) -> str:
    """``""`` for a host path, ``"s3"`` for S3; ``InvalidStorageURL`` for an empty URL or any other scheme."""
    if not url:
        raise InvalidStorageURL(url, "empty URL")
    try:
        scheme = urlsplit(url).scheme
    except ValueError as exc:
        raise InvalidStorageURL(url, f"not a URL: {exc}") from None
    if scheme not in SCHEMES:
        raise InvalidStorageURL(url, f"unsupported scheme {scheme!r} (want a host path or s3://bucket/key)")
    return scheme


@dataclass(frozen=True)
class S3Location:
    bucket: str
    key: str

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.key}"


def parse_s3_url(url: str) -> S3Location:
    """``s3://bucket/some/key`` → ``S3Location("bucket", "some/key")`` (the path percent-decoded, as Go's
    ``url.Parse`` does); ``InvalidStorageURL`` when it is no S3 URL or lacks the bucket or the key."""
    if url_scheme(url) != S3_SCHEME:
        raise InvalidStorageURL(url, "not an s3:// URL")
    parts = urlsplit(url)
    key = unquote(parts.path).removeprefix("/")
    if not parts.netloc:
        raise InvalidStorageURL(url, "no bucket in the S3 URL")
    if not key:
        raise InvalidStorageURL(url, "no object key in the S3 URL")
    return S3Location(parts.netloc, key)
