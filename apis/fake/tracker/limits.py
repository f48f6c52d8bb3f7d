"""The bounds the tracker puts on what it stores: every object it is given or a patch produces is checked (depth
and JSON values, ``apis.limits``; size) while it is copied, before anything else looks at it.

The size bound is kube-apiserver's request body limit (3 MiB), applied to the resulting object: a patch cannot grow
an object past what a client could have sent whole.

The cluster limits are what a real cluster adds, enforced by a tracker made with ``cluster_limits=True`` (the
sandbox API server's; a ``FakeClientset(cluster_limits=True)``'s; client-go's fake has none):

* etcd refuses a value larger than its ``--max-request-bytes`` (1.5 MiB by default) with ``etcdserver: request is
  too large``, which kube-apiserver passes on as a 500 whose reason is empty (``storage/etcd3/store.go`` returns the
  etcd error as it is; ``endpoints/handlers/responsewriters/status.go``'s ``ErrorToAPIStatus`` makes an error that is
  no ``APIStatus`` a 500 with ``StatusReasonUnknown`` and the error's text). ``check_storable`` measures the object as
  JSON, as a custom resource is stored (a built-in kind is stored as protobuf, a little smaller);
* ConfigMap and Secret validation (``pkg/apis/core/validation/validation.go``: ``ValidateConfigMap``,
  ``ValidateSecret``) refuses data over ``core.MaxSecretSize`` (1 MiB) in all: a 422 with one ``FieldValueTooLong``
  cause on ``[]`` (ConfigMap: ``data`` and ``binaryData``, decoded) or ``data`` (Secret, decoded; ``stringData`` is
  merged into it before validation), worded as ``field.TooLong`` (apimachinery 1.32+; 1.30-1.31 said ``must have at
  most 1048576 bytes``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ... import resources as res
from ...errors import ApiError, BadRequestError, InternalError, InvalidError
from ...limits import DocumentLimitError, check_document
from ...resources import ResourceInfo
from .validation import Cause, too_long

__all__ = ["MAX_DATA_BYTES", "MAX_OBJECT_BYTES", "MAX_STORED_BYTES", "ETCD_TOO_LARGE", "check_storable",
           "data_size_causes", "bounded_copy"]

MAX_OBJECT_BYTES = 3 * 1024 * 1024
MAX_STORED_BYTES = 3 * 1024 * 1024 // 2  # etcd's --max-request-bytes default
MAX_DATA_BYTES = 1024 * 1024  # core.MaxSecretSize: a ConfigMap's or Secret's data
ETCD_TOO_LARGE = "etcdserver: request is too large"


def bounded_copy(obj: Mapping[str, Any], patched: bool = False) -> dict[str, Any]:
    """A deep copy of ``obj`` once it is within bounds. A value out of bounds is a 400 (422 for the result of a
    patch, as a patch that does not apply); an object larger than ``MAX_OBJECT_BYTES`` as JSON is a 413."""
    try:
        check_document(obj)
    except DocumentLimitError as exc:
        if patched:
            message = f"the patched object is invalid: {exc}"
            raise InvalidError(
                422, "Invalid", message, details={"causes": [{"type": "UnexpectedServerResponse", "message": message}]}
            ) from None
        raise BadRequestError(f"the object is invalid: {exc}") from None
    data = orjson.dumps(obj)
    if len(data) > MAX_OBJECT_BYTES:
        what = "the patched object" if patched else "the object"
        raise ApiError(
            413,
            "RequestEntityTooLarge",
            f"Request entity too large: {what} is {len(data)} bytes as JSON, limit is {MAX_OBJECT_BYTES}",
        )
    copied: dict[str, Any] = orjson.loads(data)  # the JSON of a mapping reads back as a dict
    return copied


def check_storable(obj: Mapping[str, Any]) -> None:
    """500 ``etcdserver: request is too large`` (reason empty) when etcd would refuse to store ``obj``."""
    if len(orjson.dumps(obj)) > MAX_STORED_BYTES:
        raise InternalError(500, "", ETCD_TOO_LARGE)


def _decoded_size(value: object) -> int:
    """The length of a base64 ``[]byte`` value once decoded (it decoded already: ``decoding``)."""
    text = value if isinstance(value, str) else ""
    return len(text) * 3 // 4 - (len(text) - len(text.rstrip("=")))


def _text_size(value: object) -> int:
    return len(value.encode()) if isinstance(value, str) else 0


def data_size_causes(info: ResourceInfo, obj: Mapping[str, Any]) -> list[Cause]:
    """The ``FieldValueTooLong`` cause of a ConfigMap or Secret whose data is larger than ``MAX_DATA_BYTES``."""
    if info.gvr == res.CONFIGMAPS:
        size = sum(_text_size(v) for v in (obj.get("data") or {}).values())
        size += sum(_decoded_size(v) for v in (obj.get("binaryData") or {}).values())
        field = "[]"  # field.NewPath(""): the whole object
    elif info.gvr == res.SECRETS:
        size = sum(_decoded_size(v) for v in (obj.get("data") or {}).values())
        size += sum(_text_size(v) for v in (obj.get("stringData") or {}).values())
        field = "data"
    else:
        return []
    return [too_long(field, MAX_DATA_BYTES)] if size > MAX_DATA_BYTES else []
