"""The storage credential an LC gets with an object (Go Sedna's ``InjectSecretAnnotations``), the one implementation.

``with_credential(obj, secret)`` returns a shallow copy of ``obj`` carrying the annotation ``sedna.io/credential``:
the JSON (as Go marshals it) of the Secret's annotations ``s3-endpoint`` and ``s3-usehttps`` and its decoded data
``ACCESS_KEY_ID`` and ``SECRET_ACCESS_KEY``. Go copies every annotation and data key of the Secret; only these four
are sent because they are all that Sedna's LC reads (``storage.SetCredential``; the SDK never sees the annotation),
and the others may be unrelated or sensitive (``kubectl.kubernetes.io/last-applied-configuration`` holds the whole
Secret). ``obj`` itself, typically a shared cache object, and the Secret are never changed (Go Sedna wrote into both).
Never log the result: it holds secrets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis.client import ClientsetBase
from apis.sedna.constants import (
    ACCESS_KEY_ID,
    CREDENTIAL_ANNOTATION,
    S3_ENDPOINT_KEY,
    S3_USE_HTTPS_KEY,
    SECRET_ACCESS_KEY,
)

from .secrets import secret_data
from .status import go_json

__all__ = [
    "CREDENTIAL_ANNOTATION_KEYS",
    "CREDENTIAL_DATA_KEYS",
    "credential_json",
    "edge_copy",
    "fetch_secret",
    "with_credential",
    "with_kind",
]

CREDENTIAL_ANNOTATION_KEYS = (S3_ENDPOINT_KEY, S3_USE_HTTPS_KEY)
CREDENTIAL_DATA_KEYS = (ACCESS_KEY_ID, SECRET_ACCESS_KEY)


def fetch_secret(clientset: ClientsetBase, namespace: str, name: str) -> dict[str, Any]:
    """The Secret ``namespace/name`` (raises ``apis.errors.NotFoundError`` when missing)."""
    return clientset.core_v1().secrets(namespace).get(name)


def credential_json(secret: Mapping[str, Any]) -> str:
    """The ``sedna.io/credential`` value for ``secret``: its credential annotations and decoded data keys that exist,
    keys sorted as Go marshals a map."""
    annotations = (secret.get("metadata") or {}).get("annotations") or {}
    values = {k: str(annotations[k]) for k in CREDENTIAL_ANNOTATION_KEYS if k in annotations}
    data = secret_data(secret)
    values.update({k: data[k] for k in CREDENTIAL_DATA_KEYS if k in data})
    return go_json(values)


def with_kind(obj: Mapping[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    """A shallow copy of ``obj`` with ``apiVersion`` and ``kind`` set (list items may lack them)."""
    copy = dict(obj)
    copy.setdefault("apiVersion", api_version)
    copy["kind"] = kind
    return copy


def with_credential(obj: Mapping[str, Any], secret: Mapping[str, Any] | None) -> dict[str, Any]:
    """A shallow copy of ``obj`` whose annotations carry ``sedna.io/credential`` from ``secret`` (metadata and
    annotations copied, the rest shared); without a secret just a shallow copy."""
    copy = dict(obj)
    if not secret:
        return copy
    md = dict(copy.get("metadata") or {})
    md["annotations"] = {**(md.get("annotations") or {}), CREDENTIAL_ANNOTATION: credential_json(secret)}
    copy["metadata"] = md
    return copy


def edge_copy(obj: Mapping[str, Any], clientset: ClientsetBase, api_version: str, kind: str) -> dict[str, Any]:
    """``obj`` as sent to an LC: ``apiVersion``/``kind`` set and, with ``spec.credentialName``, the credential of
    that Secret (Go's ``InjectSecretAnnotations``); raises the API error when the Secret cannot be read."""
    copy = with_kind(obj, api_version, kind)
    secret_name = (obj.get("spec") or {}).get("credentialName")
    if secret_name:
        md = obj.get("metadata") or {}
        copy = with_credential(copy, fetch_secret(clientset, md.get("namespace") or "", secret_name))
    return copy
