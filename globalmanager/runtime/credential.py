"""The storage credential an LC gets with an object (Go Sedna's ``InjectSecretAnnotations``).

``with_credential(obj, secret)`` returns a shallow copy of ``obj`` carrying the annotation ``sedna.io/credential``:
the JSON of the Secret's annotations ``s3-endpoint`` and ``s3-usehttps`` and its decoded data ``ACCESS_KEY_ID`` and
``SECRET_ACCESS_KEY`` (the keys the LC's storage reads). ``obj`` itself, typically a shared cache object, is never
changed (Go Sedna wrote into the informer's object). Never log the result: it holds secrets.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

import orjson

from apis.client import ClientsetBase

__all__ = [
    "CREDENTIAL_ANNOTATION",
    "CREDENTIAL_ANNOTATION_KEYS",
    "CREDENTIAL_DATA_KEYS",
    "credential_json",
    "edge_copy",
    "fetch_secret",
    "with_credential",
    "with_kind",
]

CREDENTIAL_ANNOTATION = "sedna.io/credential"
CREDENTIAL_ANNOTATION_KEYS = ("s3-endpoint", "s3-usehttps")
CREDENTIAL_DATA_KEYS = ("ACCESS_KEY_ID", "SECRET_ACCESS_KEY")


def fetch_secret(clientset: ClientsetBase, namespace: str, name: str) -> dict[str, Any]:
    """The Secret ``namespace/name`` (raises ``apis.errors.NotFoundError`` when missing)."""
    return clientset.core_v1().secrets(namespace).get(name)


def credential_json(secret: Mapping[str, Any]) -> str:
    """The ``sedna.io/credential`` value for ``secret``; data values that are not base64 are left out."""
    md = secret.get("metadata") or {}
    annotations = md.get("annotations") or {}
    values = {k: annotations[k] for k in CREDENTIAL_ANNOTATION_KEYS if k in annotations}
    data = secret.get("data") or {}
    for key in CREDENTIAL_DATA_KEYS:
        raw = data.get(key)
        if raw is None:
            continue
        try:
            values[key] = base64.b64decode(raw, validate=True).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            continue
    return orjson.dumps(values).decode()


def with_kind(obj: Mapping[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    """A shallow copy of ``obj`` with ``apiVersion`` and ``kind`` set (list items may lack them)."""
    copy = dict(obj)
    copy.setdefault("apiVersion", api_version)
    copy["kind"] = kind
    return copy


def with_credential(obj: Mapping[str, Any], secret: Mapping[str, Any]) -> dict[str, Any]:
    """A shallow copy of ``obj`` whose annotations carry ``sedna.io/credential`` from ``secret``."""
    copy = dict(obj)
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
