"""What the SDK's ``FileOps.upload`` does with an ``s3://bucket/key`` output: put it on the S3-compatible endpoint of
the worker's environment (``S3_ENDPOINT_URL``, ``ACCESS_KEY_ID``, ``SECRET_ACCESS_KEY``, which the GM sets from the
job's Secret on every worker with an S3 mount; without keys, anonymously). Other schemes are not simulated.

``upload`` raises ``UploadError`` naming the URL and the reason, never a key.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import boto3
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

__all__ = ["UploadError", "upload"]

_CONFIG = Config(s3={"addressing_style": "path"}, connect_timeout=5, read_timeout=30,
                 retries={"max_attempts": 2, "mode": "standard"})


class UploadError(Exception):
    pass


def upload(env: Mapping[str, str], url: str, data: bytes) -> None:
    """Put ``data`` at ``url`` (``s3://bucket/key``) with the credentials of the worker's ``env``."""
    # split as the SDK's FileOps does (no percent-decoding: the key is used as written)
    bucket, _, key = url.removeprefix("s3://").partition("/")
    if not url.startswith("s3://") or not bucket or not key:
        raise UploadError(f"{url}: not an s3://bucket/key URL")
    endpoint = env.get("S3_ENDPOINT_URL", "")
    if not endpoint.startswith(("http://", "https://")):
        raise UploadError(f"{url}: the worker has no S3_ENDPOINT_URL (its job names no Secret with an s3-endpoint)")
    client = _client(endpoint, env.get("ACCESS_KEY_ID", ""), env.get("SECRET_ACCESS_KEY", ""))
    try:
        client.put_object(Bucket=bucket, Key=key, Body=data)
    except (BotoCoreError, ClientError) as exc:
        raise UploadError(f"{url}: {type(exc).__name__}: {exc}") from None


@lru_cache(maxsize=8)
def _client(endpoint: str, key_id: str, secret: str) -> Any:
    """One S3 client per endpoint and credentials (building one loads botocore's service model; clients are
    thread-safe). Without keys it goes anonymous, as the SDK's does: never the simulator host's own credentials."""
    config = _CONFIG if key_id and secret else _CONFIG.merge(Config(signature_version=UNSIGNED))
    return boto3.session.Session().client(
        "s3", endpoint_url=endpoint, region_name="us-east-1", config=config,
        aws_access_key_id=key_id or None, aws_secret_access_key=secret or None)
