"""Whether an object decodes into its Go type, checked as kube-apiserver's JSON decoding does before anything is
stored: every field of a built-in kind against its schema (``apis.fake.schemas``), and a custom resource's
``metadata`` against ObjectMeta (as apiextensions-apiserver's ``GetObjectMeta`` unmarshals it alone).

The first problem in document order raises ``DecodeError`` worded as Go's ``encoding/json`` (which
``sigs.k8s.io/json`` forks) words it: ``json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name
of type string``. Nulls decode to zero values; unknown fields are ignored (Go drops them). Special values decode as
their Go types do: int-or-string, ``resource.Quantity`` (numbers or quantity strings), ``metav1.Time`` (RFC 3339)
and ``[]byte`` (base64). Go's integer types are not distinguished: integers are reported as ``int64``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from typing import Any

from ... import meta
from ...openapi import data_type
from .. import schemas

__all__ = ["DecodeError", "check_kind", "check_object_meta"]

_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
_QUANTITY_SUFFIXES = frozenset({"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"})
_QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_BASE64 = frozenset(string.ascii_letters + string.digits + "+/")
_RFC3339_LAYOUT = "2006-01-02T15:04:05Z07:00"
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


class DecodeError(Exception):
    """The decoding error message (``json: cannot unmarshal …``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


_GO_JSON_KINDS = {"boolean": "bool", "integer": "number"}  # the other OpenAPI type names are Go's too


def _json_kind(value: object) -> str:
    """A JSON value's kind as Go's decoder names it in errors: bool, number, string, array, object."""
    kind = data_type(value)
    return _GO_JSON_KINDS.get(kind, kind)


def _struct_name(go_type: str) -> str:
    return go_type.rpartition(".")[2]


def _go_type(schema: Mapping[str, Any]) -> str:
    name, definition = schemas.resolve(schema)
    if name is not None:
        return schemas.go_type_name(name)
    if definition.get("x-kubernetes-int-or-string"):
        return "intstr.IntOrString"
    if definition.get("format") == schemas.QUANTITY_FORMAT:
        return "resource.Quantity"
    kind = definition.get("type")
    if kind == "array":
        return "[]" + _go_type(definition.get("items") or {})
    if kind == "object" and "additionalProperties" in definition:
        return "map[string]" + _go_type(definition["additionalProperties"])
    if kind == "string":
        return {"byte": "[]uint8", "date-time": "v1.Time"}.get(definition.get("format", ""), "string")
    return {"integer": "int64", "number": "float64", "boolean": "bool"}.get(kind or "", "interface {}")


class _Decoder:
    """One decoding pass: ``struct`` and ``path`` are Go's error context (innermost struct, JSON field stack),
    ``at`` the field's path with list indices; unknown fields are collected in ``unknown`` (and dropped when
    ``drop``)."""

    def __init__(self, drop: bool) -> None:
        self.drop = drop
        self.unknown: list[str] = []

    def type_error(self, what: str, go_type: str, struct: str, path: list[str]) -> DecodeError:
        if struct and path:
            return DecodeError(f"json: cannot unmarshal {what} into Go struct field {struct}.{'.'.join(path)} of type {go_type}")
        return DecodeError(f"json: cannot unmarshal {what} into Go value of type {go_type}")

    def value(self, value: Any, schema: Mapping[str, Any], struct: str, path: list[str], at: str) -> None:
        if value is None:
            return  # null decodes to the zero value
        name, definition = schemas.resolve(schema)
        if name is not None:
            self.struct(value, name, definition, struct, path, at)
        elif definition.get("x-kubernetes-int-or-string"):
            if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
                return
            what = f"number {value!r}" if isinstance(value, float) else _json_kind(value)
            raise self.type_error(what, "int32", struct, path)
        elif definition.get("format") == schemas.QUANTITY_FORMAT:
            _check_quantity(value)
        else:
            self.typed(value, definition, struct, path, at)

    def struct(
        self, value: Any, name: str, definition: Mapping[str, Any], struct: str, path: list[str], at: str
    ) -> None:
        go_type = schemas.go_type_name(name)
        if not isinstance(value, Mapping):
            raise self.type_error(_json_kind(value), go_type, struct, path)
        properties: Mapping[str, Any] = definition.get("properties") or {}
        inner = _struct_name(go_type)
        unknown = []
        for key, item in value.items():
            prop = properties.get(key)
            field = f"{at}.{key}" if at else key
            if prop is None:
                unknown.append(key)
                self.unknown.append(field)
            else:
                self.value(item, prop, inner, [*path, key], field)
        if self.drop and unknown and isinstance(value, dict):
            for key in unknown:
                del value[key]

    def typed(self, value: Any, definition: Mapping[str, Any], struct: str, path: list[str], at: str) -> None:
        kind = definition.get("type")
        if kind == "array":
            if not isinstance(value, list):
                raise self.type_error(_json_kind(value), _go_type(definition), struct, path)
            items = definition.get("items") or {}
            for i, item in enumerate(value):
                self.value(item, items, struct, path, f"{at}[{i}]")
        elif kind == "object" and "additionalProperties" in definition:
            if not isinstance(value, Mapping):
                raise self.type_error(_json_kind(value), _go_type(definition), struct, path)
            if _plain_string(definition["additionalProperties"]) and all(type(v) is str for v in value.values()):
                return  # map[string]string (labels, annotations, a ConfigMap's data): nothing to walk into
            for key, item in value.items():
                self.value(item, definition["additionalProperties"], struct, path, f"{at}.{key}")
        elif kind == "string":
            fmt = definition.get("format")
            if not isinstance(value, str):
                raise self.type_error(_json_kind(value), "[]uint8" if fmt == "byte" else "string", struct, path)
            if fmt == "date-time":
                _check_time(value)
            elif fmt == "byte":
                _check_base64(value)
        elif kind == "integer":
            if isinstance(value, float):
                raise self.type_error(f"number {value!r}", "int64", struct, path)
            if isinstance(value, bool) or not isinstance(value, int):
                raise self.type_error(_json_kind(value), "int64", struct, path)
        elif kind == "number":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.type_error(_json_kind(value), "float64", struct, path)
        elif kind == "boolean":
            if not isinstance(value, bool):
                raise self.type_error(_json_kind(value), "bool", struct, path)


def _plain_string(schema: Mapping[str, Any]) -> bool:
    """A schema every str value satisfies: ``type: string`` without a format, a reference or int-or-string."""
    return (schema.get("type") == "string" and not schema.get("format") and "$ref" not in schema
            and "allOf" not in schema and not schema.get("x-kubernetes-int-or-string"))


def _check_quantity(value: object) -> None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return
    if not isinstance(value, str):
        raise DecodeError(_QUANTITY_FORMAT)
    m = _QUANTITY.match(value.strip())
    if not m:
        raise DecodeError(_QUANTITY_FORMAT)
    suffix = m.group(2)
    if suffix not in _QUANTITY_SUFFIXES and not re.fullmatch(r"[eE][-+]?[0-9]+", suffix):
        raise DecodeError("unable to parse quantity's suffix")


def _check_time(value: str) -> None:
    try:
        if not _RFC3339.match(value):
            raise ValueError(value)
        meta.parse_time(value)
    except ValueError:
        raise DecodeError(f'parsing time "{value}" as "{_RFC3339_LAYOUT}": cannot parse "{value}" as "2006"') from None


def _check_base64(value: str) -> None:
    body = value.rstrip("=")
    for i, ch in enumerate(body):
        if ch not in _BASE64:
            raise DecodeError(f"illegal base64 data at input byte {i}")
    padding = len(value) - len(body)
    if padding > 2 or len(value) % 4 or len(body) % 4 == 1:
        raise DecodeError(f"illegal base64 data at input byte {len(body) if len(body) % 4 == 1 else len(value)}")


def check_kind(definition_name: str, obj: object, drop_unknown: bool = False) -> list[str]:
    """``obj`` decodes into the built-in kind's Go type (``DecodeError`` otherwise); the paths of the fields Go
    would drop as unknown, which ``drop_unknown`` removes from ``obj``."""
    _, definition = schemas.resolve({"$ref": schemas.REF_PREFIX + definition_name})
    decoder = _Decoder(drop_unknown)
    decoder.struct(obj, definition_name, definition, "", [], "")
    return decoder.unknown


def check_object_meta(metadata: object) -> None:
    """A custom resource's ``metadata`` decodes into ObjectMeta (errors name paths inside it, as Go reports them
    when unmarshalling it alone); ``DecodeError`` otherwise."""
    if metadata is None:
        return
    _, definition = schemas.resolve({"$ref": schemas.REF_PREFIX + "V1ObjectMeta"})
    _Decoder(False).struct(metadata, "V1ObjectMeta", definition, "", [], "")
