"""Storage URLs as Sedna writes them (``apis.sedna.storageurl``), failing with the LC's ``StorageError``."""

from __future__ import annotations

from apis.sedna import storageurl
from apis.sedna.storageurl import LOCAL_SCHEME, S3_SCHEME, SCHEMES, InvalidStorageURL, S3Location

from .errors import StorageError

__all__ = ["LOCAL_SCHEME", "S3_SCHEME", "SCHEMES", "S3Location", "is_local_url", "parse_s3_url", "url_scheme"]


def url_scheme(url: str) -> str:
    """``""`` for a host path, ``"s3"`` for S3; ``StorageError`` for an empty URL or any other scheme."""
    try:
        return storageurl.url_scheme(url)
    except InvalidStorageURL as exc:
        raise StorageError(url, exc.problem) from None


def is_local_url(url: str) -> bool:
    """Whether ``url`` is a host path (Go ``IsLocalURL``); ``StorageError`` as ``url_scheme``."""
    return url_scheme(url) == LOCAL_SCHEME


def parse_s3_url(url: str) -> S3Location:
    """``s3://bucket/some/key`` → ``S3Location("bucket", "some/key")``; ``StorageError`` when it is no S3 URL or
    lacks the bucket or the key."""
    try:
        return storageurl.parse_s3_url(url)
    except InvalidStorageURL as exc:
        raise StorageError(url, exc.problem) from None
