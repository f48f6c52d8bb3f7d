"""S3 (any S3-compatible endpoint) through boto3, with the credential of a ``sedna.io/credential`` annotation.

Transfers stream in parts of ``part_size`` bytes through a bounded number of threads, so memory does not grow with
the object; a download lands under a temporary name and is renamed when complete. Every call has a connect timeout
(10 s) and a read timeout (100 s, Go Sedna's deadline) and is retried at most twice. Errors are ``StorageError``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import boto3
from boto3.exceptions import Boto3Error
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from apis.sedna.constants import ACCESS_KEY_ID, S3_ENDPOINT_KEY, S3_USE_HTTPS_KEY, SECRET_ACCESS_KEY

from .errors import StorageError
from .urls import S3Location

__all__ = [
    "DEFAULT_PART_SIZE",
    "ObjectStat",
    "S3Client",
    "S3Credential",
    "parse_credential",
]

DEFAULT_PART_SIZE = 8 * 1024 * 1024
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 100.0
_MISSING_CODES = frozenset({"404", "NoSuchKey", "NoSuchBucket", "NotFound"})
_CHANGED_CODES = frozenset({"412", "PreconditionFailed"})
_WHERE = "the sedna.io/credential annotation"


@dataclass(frozen=True)
class ObjectStat:
    """What ``HeadObject`` says of an object: its size and ETag (a new ETag for every new content)."""

    size: int
    etag: str


@dataclass(frozen=True)
class S3Credential:
    """Where and how to reach S3. The keys never show in ``repr``."""

    endpoint: str
    use_https: bool = True
    access_key_id: str = field(default="", repr=False)
    secret_access_key: str = field(default="", repr=False)

    @property
    def endpoint_url(self) -> str:
        return f"{'https' if self.use_https else 'http'}://{self.endpoint}"


def parse_credential(text: str) -> S3Credential:
    """The credential in a ``sedna.io/credential`` value: a JSON object of strings with ``s3-endpoint``
    (``host[:port]``), ``ACCESS_KEY_ID``, ``SECRET_ACCESS_KEY`` and optionally ``s3-usehttps`` (``"0"`` → HTTP;
    default ``"1"``). ``ValueError`` names a missing or bad key, never a value."""
    try:
        values = json.loads(text)
    except (TypeError, ValueError):
        values = None  # raised below, outside this handler, so that no error chains to the parser's (holding text)
    if not isinstance(values, dict):
        raise ValueError(f"{_WHERE} is not a JSON object")
    for key, value in values.items():
        if not isinstance(value, str):
            raise ValueError(f"{_WHERE}: {key!r} is not a string")
    for key in (S3_ENDPOINT_KEY, ACCESS_KEY_ID, SECRET_ACCESS_KEY):
        if not values.get(key):
            raise ValueError(f"{_WHERE} lacks {key!r}")
    endpoint = values[S3_ENDPOINT_KEY]
    if "://" in endpoint or "/" in endpoint:
        raise ValueError(f"{_WHERE}: {S3_ENDPOINT_KEY!r} must be host[:port], without a scheme or path "
                         f"({S3_USE_HTTPS_KEY!r} chooses http or https)")
    return S3Credential(endpoint=endpoint, use_https=values.get(S3_USE_HTTPS_KEY, "1") != "0",
                        access_key_id=values[ACCESS_KEY_ID], secret_access_key=values[SECRET_ACCESS_KEY])


def _is_missing(exc: Exception) -> bool:
    return isinstance(exc, ClientError) and str(exc.response.get("Error", {}).get("Code")) in _MISSING_CODES


def _storage_error(url: str, action: str, exc: Exception) -> StorageError:
    if _is_missing(exc):
        return StorageError(url, "does not exist", missing=True)
    if isinstance(exc, ClientError) and str(exc.response.get("Error", {}).get("Code")) in _CHANGED_CODES:
        return StorageError(url, f"{action} failed: the object was replaced meanwhile", changed=True)
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        return StorageError(url, f"{action} failed: {error.get('Code', '')} {error.get('Message', '')}".rstrip())
    return StorageError(url, f"{action} failed: {exc}")


_ERRORS = (BotoCoreError, ClientError, Boto3Error, OSError)


class S3Client:
    """Object transfers for one credential. Safe to share between threads."""

    def __init__(self, credential: S3Credential, part_size: int = DEFAULT_PART_SIZE) -> None:
        self.credential = credential
        config = Config(connect_timeout=CONNECT_TIMEOUT, read_timeout=READ_TIMEOUT,
                        retries={"max_attempts": 3, "mode": "standard"}, s3={"addressing_style": "path"},
                        signature_version="s3v4", request_checksum_calculation="when_required",
                        response_checksum_validation="when_required")
        self._client = boto3.session.Session().client(
            "s3", endpoint_url=credential.endpoint_url, region_name="us-east-1", config=config,
            aws_access_key_id=credential.access_key_id, aws_secret_access_key=credential.secret_access_key)
        self._transfer = TransferConfig(multipart_threshold=part_size, multipart_chunksize=part_size,
                                        max_concurrency=2, max_io_queue=8)

    def __repr__(self) -> str:
        return f"S3Client(endpoint={self.credential.endpoint_url!r})"

    def download(self, src: S3Location, dst: Path) -> None:
        """Stream the object to ``dst`` (its directory must exist); ``dst`` appears only once complete."""
        try:
            self._client.download_file(src.bucket, src.key, str(dst), Config=self._transfer)
        except _ERRORS as exc:
            raise _storage_error(str(src), "download", exc) from None

    def upload(self, src: Path, dst: S3Location) -> None:
        try:
            self._client.upload_file(str(src), dst.bucket, dst.key, Config=self._transfer)
        except _ERRORS as exc:
            raise _storage_error(str(dst), "upload", exc) from None

    def copy(self, src: S3Location, dst: S3Location) -> None:
        """Server-side ``CopyObject`` (no bytes pass through the LC)."""
        try:
            self._client.copy_object(Bucket=dst.bucket, Key=dst.key,
                                     CopySource={"Bucket": src.bucket, "Key": src.key})
        except _ERRORS as exc:
            missing_bucket = exc.response.get("Error", {}).get("BucketName") if isinstance(exc, ClientError) else None
            if _is_missing(exc) and missing_bucket == dst.bucket != src.bucket:
                raise StorageError(str(dst), f"bucket {dst.bucket!r} does not exist (copying from {src})") from None
            if _is_missing(exc):
                raise StorageError(str(src), f"does not exist (copying to {dst})") from None
            raise _storage_error(str(dst), f"copy from {src}", exc) from None

    def exists(self, location: S3Location) -> bool:
        try:
            self._client.head_object(Bucket=location.bucket, Key=location.key)
        except _ERRORS as exc:
            if _is_missing(exc):
                return False
            raise _storage_error(str(location), "stat", exc) from None
        return True

    def stat(self, location: S3Location) -> ObjectStat:
        """The object's size and ETag (``HeadObject``); ``StorageError`` with ``missing`` when it does not exist."""
        try:
            head = self._client.head_object(Bucket=location.bucket, Key=location.key)
        except _ERRORS as exc:
            raise _storage_error(str(location), "stat", exc) from None
        return ObjectStat(int(head.get("ContentLength") or 0), str(head.get("ETag") or ""))

    def iter_range(self, location: S3Location, start: int, end: int, etag: str,
                   chunk_size: int = 1024 * 1024) -> Iterator[bytes]:
        """Bytes ``[start, end)`` of the object, streamed, only while its ETag is ``etag`` (``StorageError`` with
        ``changed`` otherwise); the connection is released when the iterator ends or is closed."""
        if end <= start:
            return
        yield from self._stream(location, chunk_size, (f"bytes={start}-{end - 1}", etag))

    def iter_chunks(self, location: S3Location, chunk_size: int = 1024 * 1024) -> Iterator[bytes]:
        """The object's bytes, streamed; the connection is released when the iterator ends or is closed."""
        yield from self._stream(location, chunk_size)

    def _stream(self, location: S3Location, chunk_size: int,
                range_if_match: tuple[str, str] | None = None) -> Iterator[bytes]:
        """``range_if_match``: the ``Range`` and ``IfMatch`` of a read of part of one version of the object."""
        try:
            if range_if_match is None:
                response = self._client.get_object(Bucket=location.bucket, Key=location.key)
            else:
                byte_range, etag = range_if_match
                response = self._client.get_object(Bucket=location.bucket, Key=location.key, Range=byte_range,
                                                   IfMatch=etag)
            body = response["Body"]
        except _ERRORS as exc:
            raise _storage_error(str(location), "read", exc) from None
        try:
            yield from body.iter_chunks(chunk_size)
        except _ERRORS as exc:
            raise _storage_error(str(location), "read", exc) from None
        finally:
            body.close()
