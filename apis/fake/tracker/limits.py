"""The bounds the tracker puts on what it stores: every object it is given or a patch produces is checked (depth
and JSON values, ``apis.limits``; size) while it is copied, before anything else looks at it.

The size bound is kube-apiserver's request body limit (3 MiB), applied to the resulting object: a patch cannot grow
an object past what a client could have sent whole. (etcd's own 1.5 MiB limit on stored values is not modelled.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ...errors import ApiError, BadRequestError, InvalidError
from ...limits import DocumentLimitError, check_document

__all__ = ["MAX_OBJECT_BYTES", "bounded_copy"]

MAX_OBJECT_BYTES = 3 * 1024 * 1024


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
