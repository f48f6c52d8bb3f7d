"""Sedna's LC storage: host paths under the rootfs and ``s3://bucket/key``, with the credential from the
``sedna.io/credential`` annotation (Go ``pkg/localcontroller/storage``).

    storage = Storage(rootfs="/rootfs", credential=annotations.get("sedna.io/credential"))
    storage.copy_file("s3://models/new/model.pb", "/models/deploy/model.pb")
    for line in storage.iter_lines(dataset_url): ...

Every failure is a ``StorageError`` naming the URL; credential values never appear in errors, logs or reprs.
"""

from .errors import StorageError
from .local import RootFS, copy_file_atomically
from .pool import StoragePool, copy_between, credential_of
from .s3 import DEFAULT_PART_SIZE, ObjectStat, S3Client, S3Credential, parse_credential
from .storage import MAX_LINE_BYTES, MAX_TEXT_BYTES, Storage
from .urls import LOCAL_SCHEME, S3_SCHEME, SCHEMES, S3Location, is_local_url, parse_s3_url, url_scheme

__all__ = [
    "DEFAULT_PART_SIZE",
    "LOCAL_SCHEME",
    "MAX_LINE_BYTES",
    "MAX_TEXT_BYTES",
    "S3_SCHEME",
    "SCHEMES",
    "ObjectStat",
    "RootFS",
    "S3Client",
    "S3Credential",
    "S3Location",
    "Storage",
    "StorageError",
    "StoragePool",
    "copy_between",
    "copy_file_atomically",
    "credential_of",
    "is_local_url",
    "parse_credential",
    "parse_s3_url",
    "url_scheme",
]
