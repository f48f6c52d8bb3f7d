"""The protobuf form of ``/openapi/v2`` (gnostic ``openapi.v2.Document``, ``OpenAPIv2.proto``) that kubectl asks for
with ``Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf``, encoded from the Swagger 2.0 JSON
document. kubectl reads it for ``explain --output=plaintext-openapiv2``, and kubectl before 1.27 for ``explain``,
client-side validation and apply patches.

Encoded: the document's swagger, info, paths (operations with their parameters, consumes/produces, 200 response
schema and ``x-`` extensions) and definitions (every Swagger 2.0 schema keyword; ``x-`` keys as vendor extensions
whose values are YAML, as gnostic stores them). JSON-schema keywords Swagger 2.0 lacks (``oneOf``, ``anyOf``,
``not``) are left out, as kube-apiserver's own v2 document leaves them out.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

__all__ = ["OPENAPI_V2_PROTOBUF", "encode_document"]

# Clients ask with "...spec.v2@v1.0+protobuf"; servers answer with this form (Go's mime parser rejects the "@").
OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 values take ten bytes, as protobuf encodes them
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _message(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _string(field: int, value: object) -> bytes:
    return _message(field, str(value).encode()) if value not in (None, "") else b""


def _strings(field: int, values: Iterable[object] | None) -> bytes:
    return b"".join(_message(field, str(v).encode()) for v in values or ())


def _bool(field: int, value: object) -> bytes:
    return _varint(field << 3) + b"\x01" if value is True else b""


def _int(field: int, value: object) -> bytes:
    return _varint(field << 3) + _varint(int(value)) if isinstance(value, int) and not isinstance(value, bool) else b""


def _double(field: int, value: object) -> bytes:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return b""
    return _varint(field << 3 | 1) + struct.pack("<d", float(value))


def _any(field: int, value: Any) -> bytes:
    """gnostic ``Any``: the value as YAML (field 2)."""
    return _message(field, _string(2, yaml.safe_dump(value, default_flow_style=False)))


def _extensions(field: int, obj: Mapping[str, Any]) -> bytes:
    """``x-`` keys as NamedAny vendor extensions."""
    return b"".join(
        _message(field, _string(1, key) + _any(2, value)) for key, value in obj.items() if key.startswith("x-")
    )


def _schema(schema: Mapping[str, Any]) -> bytes:
    if not isinstance(schema, Mapping):
        return b""
    out = [
        _string(1, schema.get("$ref")),
        _string(2, schema.get("format")),
        _string(3, schema.get("title")),
        _string(4, schema.get("description")),
        _any(5, schema["default"]) if "default" in schema else b"",
        _double(6, schema.get("multipleOf")),
        _double(7, schema.get("maximum")),
        _bool(8, schema.get("exclusiveMaximum")),
        _double(9, schema.get("minimum")),
        _bool(10, schema.get("exclusiveMinimum")),
        _int(11, schema.get("maxLength")),
        _int(12, schema.get("minLength")),
        _string(13, schema.get("pattern")),
        _int(14, schema.get("maxItems")),
        _int(15, schema.get("minItems")),
        _bool(16, schema.get("uniqueItems")),
        _int(17, schema.get("maxProperties")),
        _int(18, schema.get("minProperties")),
        _strings(19, schema.get("required")),
        b"".join(_any(20, v) for v in schema.get("enum") or ()),
    ]
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        out.append(_message(21, _message(1, _schema(extra))))
    elif isinstance(extra, bool):
        out.append(_message(21, _varint(2 << 3) + (b"\x01" if extra else b"\x00")))
    kind = schema.get("type")
    if kind:
        out.append(_message(22, _strings(1, kind if isinstance(kind, list) else [kind])))
    items = schema.get("items")
    if isinstance(items, Mapping):
        out.append(_message(23, _message(1, _schema(items))))
    elif isinstance(items, list):
        out.append(_message(23, b"".join(_message(1, _schema(i)) for i in items)))
    out.extend(_message(24, _schema(s)) for s in schema.get("allOf") or ())
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and properties:
        named = b"".join(_message(1, _string(1, k) + _message(2, _schema(v))) for k, v in properties.items())
        out.append(_message(25, named))
    out.append(_bool(27, schema.get("readOnly")))
    if "example" in schema:
        out.append(_any(30, schema["example"]))
    out.append(_extensions(31, schema))
    return b"".join(out)


def _parameter(param: Mapping[str, Any]) -> bytes:
    """ParametersItem → Parameter → BodyParameter or NonBodyParameter (query or path)."""
    where = param.get("in")
    if where == "body":
        body = (_string(1, param.get("description")) + _string(2, param.get("name")) + _string(3, where)
                + _bool(4, param.get("required")) + _message(5, _schema(param.get("schema") or {})))
        return _message(1, _message(1, body))
    common = _bool(1, param.get("required")) + _string(2, where) + _string(3, param.get("description")) + _string(
        4, param.get("name"))
    if where == "path":
        sub = common + _string(5, param.get("type")) + _bool(19, param.get("uniqueItems"))
        non_body = _message(4, sub)
    else:
        sub = common + _string(6, param.get("type")) + _bool(20, param.get("uniqueItems"))
        non_body = _message(3, sub)
    return _message(1, _message(2, non_body))


def _operation(operation: Mapping[str, Any]) -> bytes:
    responses = b""
    for code, response in (operation.get("responses") or {}).items():
        value = _string(1, response.get("description"))
        if isinstance(response.get("schema"), Mapping):
            value += _message(2, _message(1, _schema(response["schema"])))
        responses += _message(1, _string(1, code) + _message(2, _message(1, value)))
    return b"".join([
        _strings(1, operation.get("tags")),
        _string(3, operation.get("description")),
        _string(5, operation.get("operationId")),
        _strings(6, operation.get("produces")),
        _strings(7, operation.get("consumes")),
        b"".join(_message(8, _parameter(p)) for p in operation.get("parameters") or ()),
        _message(9, responses) if responses else b"",
        _extensions(13, operation),
    ])


_METHOD_FIELDS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def encode_document(doc: Mapping[str, Any]) -> bytes:
    """The gnostic protobuf encoding of a Swagger 2.0 document (a dict)."""
    info = doc.get("info") or {}
    paths = b""
    for name, item in (doc.get("paths") or {}).items():
        value = b"".join(
            _message(_METHOD_FIELDS[method], _operation(op)) for method, op in item.items() if method in _METHOD_FIELDS
        )
        value += b"".join(_message(9, _parameter(p)) for p in item.get("parameters") or ())
        paths += _message(2, _string(1, name) + _message(2, value))
    definitions = b"".join(
        _message(1, _string(1, name) + _message(2, _schema(schema))) for name, schema in (doc.get("definitions") or {}).items()
    )
    return b"".join([
        _string(1, doc.get("swagger", "2.0")),
        _message(2, _string(1, info.get("title")) + _string(2, info.get("version"))),
        _message(8, paths),
        _message(9, definitions) if definitions else b"",
    ])
