"""OpenAPI v3 structural-schema handling for custom resources, the way kube-apiserver does it.

A write to a custom resource goes through three steps, in this order:

1. ``prune(schema, obj)`` drops fields the schema does not know (unless preserved), in place;
2. ``apply_defaults(schema, obj)`` drops non-nullable ``null`` fields that have no default and fills in
   ``default`` values, in place, recursively;
3. ``validate(schema, obj)`` returns one cause per problem, ``{"type", "message", "field"}``, worded like the
   API server (``Required value``, ``Unsupported value: "~": supported values: ">=", ">"``, ``Invalid value:
   "string": spec.x in body must be of type integer: "string"`` …). An empty list means valid.

``schema`` is the ``openAPIV3Schema`` of one CRD version (a plain dict). Neither function modifies it.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from . import meta

__all__ = [
    "prune",
    "apply_defaults",
    "validate",
    "cause",
    "data_type",
    "REQUIRED",
    "INVALID",
    "NOT_SUPPORTED",
    "TYPE_INVALID",
    "TOO_LONG",
    "TOO_MANY",
]

REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
TYPE_INVALID = "FieldValueTypeInvalid"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"

PRESERVE = "x-kubernetes-preserve-unknown-fields"
EMBEDDED = "x-kubernetes-embedded-resource"
INT_OR_STRING = "x-kubernetes-int-or-string"
_RESOURCE_FIELDS = ("apiVersion", "kind", "metadata")


# --------------------------------------------------------------------------------------------- pruning


def prune(schema: Mapping[str, Any], obj: Any, *, pruned: list[str] | None = None) -> None:
    """Drop, in place, every field ``schema`` does not specify.

    Kept: fields under ``x-kubernetes-preserve-unknown-fields: true``, values allowed by ``additionalProperties``
    (``true`` or a schema, recursed into), and ``apiVersion``/``kind``/``metadata`` at the root and in embedded
    resources. When ``pruned`` is given, the path of each dropped field is appended to it (the API server turns
    these into ``unknown field`` warnings).
    """
    _prune(schema, obj, "", True, pruned)


def _prune(schema: Mapping[str, Any] | None, obj: Any, path: str, is_resource: bool, pruned: list[str] | None) -> None:
    if schema is None:
        return
    if isinstance(obj, dict):
        props: Mapping[str, Any] = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        preserve = bool(schema.get(PRESERVE))
        keep_resource_fields = is_resource or bool(schema.get(EMBEDDED))
        for key in list(obj):
            if keep_resource_fields and key in _RESOURCE_FIELDS:
                continue  # ObjectMeta is handled by the API machinery, not by the schema
            child = _join(path, key)
            if key in props:
                _prune(props[key], obj[key], child, False, pruned)
            elif isinstance(additional, Mapping):
                _prune(additional, obj[key], _index(path, key), False, pruned)
            elif additional is True or preserve:
                continue
            else:
                del obj[key]
                if pruned is not None:
                    pruned.append(child)
    elif isinstance(obj, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for i, item in enumerate(obj):
                _prune(items, item, f"{path}[{i}]", False, pruned)


# ------------------------------------------------------------------------------------------- defaulting


def apply_defaults(schema: Mapping[str, Any], obj: Any) -> None:
    """Apply ``default`` values in place, recursively (defaults are deep-copied, then defaulted themselves).

    As in kube-apiserver, a ``null`` field that is not ``nullable`` is removed when it has no default and
    replaced by the default when it has one; a ``null`` in a ``nullable`` field is kept.
    """
    if isinstance(obj, dict):
        props: Mapping[str, Any] = schema.get("properties") or {}
        for key, prop in props.items():
            has_default = "default" in prop
            if key not in obj:
                if has_default:
                    obj[key] = meta.deep_copy(prop["default"])
            elif obj[key] is None and not prop.get("nullable"):
                if has_default:
                    obj[key] = meta.deep_copy(prop["default"])
                else:
                    del obj[key]
        additional = schema.get("additionalProperties")
        for key, value in obj.items():
            if key in props:
                apply_defaults(props[key], value)
            elif isinstance(additional, Mapping):
                apply_defaults(additional, value)
    elif isinstance(obj, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for item in obj:
                apply_defaults(items, item)


# ------------------------------------------------------------------------------------------- validation


def cause(kind: str, field: str, message: str) -> dict[str, str]:
    """One validation cause as ``apis.errors.new_invalid`` expects it."""
    return {"type": kind, "message": message, "field": field}


def data_type(value: Any) -> str:
    """The OpenAPI name of a JSON value's type (``null`` for ``None``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def validate(schema: Mapping[str, Any], obj: Any, path: str = "") -> list[dict[str, str]]:
    """Every way ``obj`` (at field path ``path``) violates ``schema``; empty when it conforms."""
    causes: list[dict[str, str]] = []
    _validate(schema, obj, path, causes)
    return causes


def _validate(schema: Mapping[str, Any], value: Any, path: str, out: list[dict[str, str]]) -> None:
    if value is None:
        if schema.get("nullable") or (not schema.get("type") and schema.get(PRESERVE)):
            return
        if schema.get("type") or schema.get(INT_OR_STRING):
            out.append(_type_invalid(schema, value, path))
            return
    if not _type_ok(schema, value):
        out.append(_type_invalid(schema, value, path))
        return
    if "enum" in schema and not any(_json_equal(value, allowed) for allowed in schema["enum"]):
        supported = ", ".join(_quote(a if isinstance(a, str) else _json(a)) for a in schema["enum"])
        out.append(cause(NOT_SUPPORTED, path, f"{_unsupported(value)}: supported values: {supported}"))
    if isinstance(value, str):
        _validate_string(schema, value, path, out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _validate_number(schema, value, path, out)
    elif isinstance(value, list):
        _validate_array(schema, value, path, out)
    elif isinstance(value, Mapping):
        _validate_object(schema, value, path, out)
    _validate_combinators(schema, value, path, out)


def _type_ok(schema: Mapping[str, Any], value: Any) -> bool:
    if schema.get(INT_OR_STRING):
        return isinstance(value, str) or _is_integer(value)
    expected = schema.get("type")
    if not expected:
        return True
    if expected == "integer":
        return _is_integer(value)
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return data_type(value) == expected


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _type_invalid(schema: Mapping[str, Any], value: Any, path: str) -> dict[str, str]:
    expected = "integer,string" if schema.get(INT_OR_STRING) else schema.get("type", "")
    actual = data_type(value)
    return cause(TYPE_INVALID, path, f"Invalid value: {_quote(actual)}: {_name(path)} in body must be of type {expected}: {_quote(actual)}")


def _validate_string(schema: Mapping[str, Any], value: str, path: str, out: list[dict[str, str]]) -> None:
    max_length = schema.get("maxLength")
    if max_length is not None and len(value) > max_length:
        out.append(cause(TOO_LONG, path, f"Too long: may not be longer than {max_length}"))
    min_length = schema.get("minLength")
    if min_length is not None and len(value) < min_length:
        out.append(_invalid(path, value, f"should be at least {min_length} chars long"))
    pattern = schema.get("pattern")
    if pattern is not None and not _compiled(pattern).search(value):
        out.append(_invalid(path, value, f"should match '{pattern}'"))
    if schema.get("format") == "date-time" and not _DATE_TIME.match(value):
        out.append(cause(TYPE_INVALID, path, f"Invalid value: {_quote(value)}: {_name(path)} in body must be of type date-time: {_quote(value)}"))


def _validate_number(schema: Mapping[str, Any], value: float, path: str, out: list[dict[str, str]]) -> None:
    minimum = schema.get("minimum")
    if minimum is not None:
        if schema.get("exclusiveMinimum") and value <= minimum:
            out.append(_invalid(path, value, f"should be greater than {_num(minimum)}"))
        elif value < minimum:
            out.append(_invalid(path, value, f"should be greater than or equal to {_num(minimum)}"))
    maximum = schema.get("maximum")
    if maximum is not None:
        if schema.get("exclusiveMaximum") and value >= maximum:
            out.append(_invalid(path, value, f"should be less than {_num(maximum)}"))
        elif value > maximum:
            out.append(_invalid(path, value, f"should be less than or equal to {_num(maximum)}"))
    multiple = schema.get("multipleOf")
    if multiple and not math.isclose(value / multiple, round(value / multiple)):
        out.append(_invalid(path, value, f"should be a multiple of {_num(multiple)}"))


def _validate_array(schema: Mapping[str, Any], value: list[Any], path: str, out: list[dict[str, str]]) -> None:
    max_items = schema.get("maxItems")
    if max_items is not None and len(value) > max_items:
        out.append(cause(TOO_MANY, path, f"Too many: {len(value)}: must have at most {max_items} items"))
    min_items = schema.get("minItems")
    if min_items is not None and len(value) < min_items:
        out.append(_invalid(path, value, f"should have at least {min_items} items"))
    if schema.get("uniqueItems"):
        seen: set[str] = set()
        for item in value:
            key = _json(item, sort=True)
            if key in seen:
                out.append(_invalid(path, value, "shouldn't contain duplicates"))
                break
            seen.add(key)
    items = schema.get("items")
    if isinstance(items, Mapping):
        for i, item in enumerate(value):
            _validate(items, item, f"{path}[{i}]", out)


def _validate_object(schema: Mapping[str, Any], value: Mapping[str, Any], path: str, out: list[dict[str, str]]) -> None:
    for key in schema.get("required") or ():
        if key not in value:
            out.append(cause(REQUIRED, _join(path, key), "Required value"))
    max_props = schema.get("maxProperties")
    if max_props is not None and len(value) > max_props:
        out.append(cause(TOO_MANY, path, f"Too many: {len(value)}: must have at most {max_props} items"))
    min_props = schema.get("minProperties")
    if min_props is not None and len(value) < min_props:
        out.append(_invalid(path, value, f"should have at least {min_props} properties"))
    props: Mapping[str, Any] = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    for key, item in value.items():
        if key in props:
            _validate(props[key], item, _join(path, key), out)
        elif isinstance(additional, Mapping):
            _validate(additional, item, _index(path, key), out)
        elif additional is False and not schema.get(PRESERVE):
            out.append(cause(INVALID, _join(path, key), f"Invalid value: {_unsupported_body(item)}: field not declared in schema"))


def _validate_combinators(schema: Mapping[str, Any], value: Any, path: str, out: list[dict[str, str]]) -> None:
    for sub in schema.get("allOf") or ():
        _validate(sub, value, path, out)
    any_of = schema.get("anyOf")
    if any_of and not any(not validate(sub, value, path) for sub in any_of):
        out.append(_invalid(path, value, "must validate at least one schema (anyOf)"))
    one_of = schema.get("oneOf")
    if one_of and sum(1 for sub in one_of if not validate(sub, value, path)) != 1:
        out.append(_invalid(path, value, "must validate one and only one schema (oneOf)"))
    not_schema = schema.get("not")
    if isinstance(not_schema, Mapping) and not validate(not_schema, value, path):
        out.append(_invalid(path, value, "must not validate the schema (not)"))


# ---------------------------------------------------------------------------------------------- wording

_DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)?)?$"
)


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _index(path: str, key: str) -> str:
    return f"{path}[{key}]"


def _name(path: str) -> str:
    return path or "<root>"


def _invalid(path: str, value: Any, detail: str) -> dict[str, str]:
    return cause(INVALID, path, f"Invalid value: {_unsupported_body(value)}: {_name(path)} in body {detail}")


def _unsupported(value: Any) -> str:
    return f"Unsupported value: {_unsupported_body(value)}"


def _unsupported_body(value: Any) -> str:
    """A bad value printed the way apimachinery's field errors print it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _num(value)
    if isinstance(value, str):
        return _quote(value)
    return _json(value)


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _num(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def _json(value: Any, sort: bool = False) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=sort, ensure_ascii=False, default=str)


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b
