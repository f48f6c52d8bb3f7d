"""S3 credentials from a Secret (Sedna's ``secret_injector.go``).

* ``build_s3_secret_envs(secret)``: env vars ``S3_ENDPOINT_URL`` (``https://`` + annotation ``s3-endpoint``, or
  ``http://`` when annotation ``s3-usehttps`` is ``"0"``), ``ACCESS_KEY_ID`` and ``SECRET_ACCESS_KEY`` (plain values
  from the Secret's data, as Sedna does for KubeEdge, which lacked ``secretKeyRef``). ``[]`` without an endpoint.
* ``merge_secret_envs(now, new, overwrite)``: Sedna's ``MergeSecretEnvs``.
* ``secret_data(secret)``: the Secret's data decoded; ``get_secret``: read one from the API server.
The ``sedna.io/credential`` annotation sent to LCs is ``credential.with_credential``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from apis import errors, meta
from apis.client import ClientsetBase
from apis.sedna.constants import ACCESS_KEY_ID, S3_ENDPOINT_KEY, S3_USE_HTTPS_KEY, SECRET_ACCESS_KEY

__all__ = [
    "S3_ENDPOINT_URL_ENV",
    "build_s3_secret_envs",
    "get_secret",
    "merge_secret_envs",
    "secret_data",
]

S3_ENDPOINT_URL_ENV = "S3_ENDPOINT_URL"

EnvVar = dict[str, str]


def secret_data(secret: Mapping[str, Any]) -> dict[str, str]:
    """The Secret's ``data`` decoded (base64 as the API serves it) plus ``stringData`` if present."""
    out: dict[str, str] = {}
    for key, value in (secret.get("data") or {}).items():
        try:
            out[key] = base64.b64decode(value or "", validate=True).decode("utf-8", errors="replace")
        except (binascii.Error, ValueError, TypeError):
            out[key] = ""
    for key, value in (secret.get("stringData") or {}).items():
        out[key] = str(value)
    return out


def build_s3_secret_envs(secret: Mapping[str, Any] | None) -> list[EnvVar]:
    if not secret:
        return []
    annotations = meta.annotations(secret)
    endpoint = annotations.get(S3_ENDPOINT_KEY, "")
    if not endpoint:
        return []  # Go: "empty endpoint in secret", the mount gets no credentials
    scheme = "http://" if annotations.get(S3_USE_HTTPS_KEY) == "0" else "https://"
    data = secret_data(secret)
    return [
        {"name": S3_ENDPOINT_URL_ENV, "value": scheme + endpoint},
        {"name": ACCESS_KEY_ID, "value": data.get(ACCESS_KEY_ID, "")},
        {"name": SECRET_ACCESS_KEY, "value": data.get(SECRET_ACCESS_KEY, "")},
    ]


def merge_secret_envs(now: list[EnvVar], new: list[EnvVar], overwrite: bool = False) -> list[EnvVar]:
    """``now`` plus the variables of ``new`` it lacks (replacing same-named ones only with ``overwrite``)."""
    out = list(now)
    index = {e["name"]: i for i, e in enumerate(out)}
    for env in new:
        i = index.get(env["name"])
        if i is None:
            index[env["name"]] = len(out)
            out.append(env)
        elif overwrite:
            out[i] = env
    return out


def get_secret(clientset: ClientsetBase, namespace: str, name: str) -> dict[str, Any] | None:
    """The Secret ``namespace/name`` read from the API server (secrets are not cached by the GM), or ``None``."""
    if not name:
        return None
    try:
        return clientset.core_v1().secrets(namespace).get(name)
    except errors.NotFoundError:
        return None
