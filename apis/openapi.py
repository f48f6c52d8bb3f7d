"""OpenAPI v3 structural-schema handling for custom resources, the way kube-apiserver (1.32) does it.

A write to a custom resource goes through three steps, in this order:

1. ``prune(schema, obj)`` drops fields the schema does not know (unless preserved) and reduces the root's and every
   embedded resource's ``metadata`` to ObjectMeta fields, in place;
2. ``apply_defaults(schema, obj)`` drops non-nullable ``null`` map fields that have no default, then fills in
   ``default`` values (for missing fields and non-nullable ``null``s), in place, recursively;
3. ``validate(schema, obj)`` returns one cause per problem, ``{"type", "message", "field"}``, worded as
   kube-openapi + apimachinery word them in a 422 Status. An empty list means valid.

``schema`` is the ``openAPIV3Schema`` of one CRD version (a plain dict). No function modifies it.
Sources: apiextensions-apiserver ``pkg/apiserver/schema/{pruning,defaulting,objectmeta}``, ``pkg/apiserver/validation``;
kube-openapi ``pkg/validation/validate``; apimachinery ``pkg/util/validation/field``.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from . import meta
from .openapi_format import FORMATS, bad_value, go_float, go_json, go_quote, json_equal

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
_RESOURCE_FIELDS = frozenset(("apiVersion", "kind", "metadata"))
_NIL_PATH = "<nil>"  # what field.Path(nil).String() prints: kube-openapi's composite errors carry no field

# metav1.ObjectMeta (and the structs it nests) as JSON: anything else does not survive the round trip.
_OBJECT_META_FIELDS = frozenset((
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
    "managedFields",
))
_OWNER_REFERENCE_FIELDS = frozenset(("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"))
_MANAGED_FIELDS_ENTRY_FIELDS = frozenset(
    ("manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource")
)


# --------------------------------------------------------------------------------------------- pruning


def prune(schema: Mapping[str, Any], obj: object, *, pruned: list[str] | None = None) -> None:
    """Drop, in place, every field ``schema`` does not specify, as apiextensions-apiserver's pruning does.

    - ``x-kubernetes-preserve-unknown-fields`` keeps unknown fields at that level and, through arrays, in their
      items; known properties and ``additionalProperties`` values below it are still pruned.
    - ``additionalProperties`` keeps every key; a schema is recursed into, ``true``/``false`` (no schema) prune
      the values with no schema at all, so nested objects come out empty.
    - ``apiVersion``/``kind``/``metadata`` are kept at the root and in ``x-kubernetes-embedded-resource`` objects,
      and their ``metadata`` keeps only ObjectMeta fields (no ``null`` values, no zero ``creationTimestamp`` in
      embedded ones).

    When ``pruned`` is given, the sorted paths of dropped fields are appended (kube-apiserver's warnings).
    """
    found: list[str] = []
    _prune(obj, schema, "", found, resource=True)
    if isinstance(obj, dict) and isinstance(obj.get("metadata"), dict):
        _prune_object_meta(obj["metadata"], "metadata", found, embedded=False)
    if pruned is not None:
        pruned.extend(sorted(found))


def _prune(value: object, schema: Mapping[str, Any] | None, path: str, out: list[str], resource: bool = False,
           preserving: bool = False) -> None:
    """kube's prune; with ``preserving`` (or the schema's preserve flag) its skipPrune, which keeps unknown fields
    and stays in force through array items, while known properties and additionalProperties values are pruned."""
    if schema is None:
        if preserving:
            return
        if isinstance(value, dict):
            out.extend(_join(path, key) for key in value)
            value.clear()
        elif isinstance(value, list):
            for i, item in enumerate(value):
                _prune(item, None, f"{path}[{i}]", out)
        return
    preserving = preserving or bool(schema.get(PRESERVE))
    if isinstance(value, dict):
        props: Mapping[str, Any] = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        embedded = resource or bool(schema.get(EMBEDDED))
        for key in list(value):
            if embedded and key in _RESOURCE_FIELDS:
                # The root's metadata is handled once by prune(); embedded resources get objectmeta.Coerce's.
                if key == "metadata" and not resource and isinstance(value[key], dict):
                    _prune_object_meta(value[key], _join(path, key), out, embedded=True)
            elif key in props:
                _prune(value[key], props[key], _join(path, key), out)
            elif additional is not None:
                _prune(value[key], additional if isinstance(additional, Mapping) else None, _join(path, key), out)
            elif not preserving:
                out.append(_join(path, key))
                del value[key]
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _prune(item, schema.get("items"), f"{path}[{i}]", out, preserving=preserving)


def _prune_object_meta(md: dict[str, Any], path: str, out: list[str], embedded: bool) -> None:
    """What decoding into metav1.ObjectMeta and back leaves of ``md``: known fields, no ``null`` pointers."""
    for key in list(md):
        if key not in _OBJECT_META_FIELDS:
            out.append(_join(path, key))
            del md[key]
        elif md[key] is None:
            del md[key]
    for key, known in (("ownerReferences", _OWNER_REFERENCE_FIELDS), ("managedFields", _MANAGED_FIELDS_ENTRY_FIELDS)):
        entries = md.get(key)
        if isinstance(entries, list):
            for i, entry in enumerate(entries):
                if isinstance(entry, dict):
                    for field in [f for f in entry if f not in known]:
                        out.append(f"{path}.{key}[{i}].{field}")
                        del entry[field]
    if embedded and not md.get("creationTimestamp"):
        md.pop("creationTimestamp", None)


# ------------------------------------------------------------------------------------------- defaulting


def apply_defaults(schema: Mapping[str, Any], obj: object) -> None:
    """Apply ``default`` values in place, as kube-apiserver's decoder does.

    First every non-nullable ``null`` under a property or ``additionalProperties`` schema without a default is
    removed (array items keep theirs); then missing fields get their property's ``default`` and non-nullable
    ``null`` fields, map values and array items get the default of their schema. Defaults are deep-copied and
    then defaulted themselves.
    """
    _prune_nulls(obj, schema)
    _default(obj, schema)


def _field_schema(schema: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    if schema is None:
        return None
    props: Mapping[str, Mapping[str, Any]] = schema.get("properties") or {}
    if key in props:
        return props[key]
    additional = schema.get("additionalProperties")
    return additional if isinstance(additional, Mapping) else None


def _prune_nulls(value: object, schema: Mapping[str, Any] | None) -> None:
    if isinstance(value, dict):
        for key in list(value):
            sub = _field_schema(schema, key)
            if value[key] is None and sub is not None and not sub.get("nullable") and "default" not in sub:
                del value[key]
            else:
                _prune_nulls(value[key], sub)
    elif isinstance(value, list):
        items = schema.get("items") if schema is not None else None
        for item in value:
            _prune_nulls(item, items if isinstance(items, Mapping) else None)


def _null_replacement(value: object, schema: Mapping[str, Any] | None) -> Any:
    if value is None and schema is not None and not schema.get("nullable"):
        return meta.deep_copy(schema.get("default"))
    return value


def _default(value: object, schema: Mapping[str, Any] | None) -> None:
    if schema is None:
        return
    if isinstance(value, dict):
        props: Mapping[str, Any] = schema.get("properties") or {}
        for key, prop in props.items():
            if prop.get("default") is None:
                continue
            if key not in value or (value[key] is None and not prop.get("nullable")):
                value[key] = meta.deep_copy(prop["default"])
        additional = schema.get("additionalProperties")
        for key in value:
            if key in props:
                _default(value[key], props[key])
            elif isinstance(additional, Mapping):
                value[key] = _null_replacement(value[key], additional)
                _default(value[key], additional)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for i in range(len(value)):
                value[i] = _null_replacement(value[i], items)
                _default(value[i], items)


# ------------------------------------------------------------------------------------------- validation


def cause(kind: str, field: str, message: str) -> dict[str, str]:
    """One validation cause as ``apis.errors.new_invalid`` expects it."""
    return {"type": kind, "message": message, "field": field}


def data_type(value: object) -> str:
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


def validate(schema: Mapping[str, Any], obj: object, path: str = "") -> list[dict[str, str]]:
    """Every way ``obj`` (at field path ``path``) violates ``schema``; empty when it conforms.

    Checks run in kube-openapi's order (type, allOf/anyOf/oneOf/not, string, format, number, array, enum, object)
    and each applies by the value's JSON kind, so a type error does not hide, e.g., an enum error.
    """
    causes: list[dict[str, str]] = []
    _validate(schema, obj, path, causes)
    return causes


def _is_number(value: object) -> TypeGuard[float]:  # int or float, not bool
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _validate(schema: Mapping[str, Any], value: object, path: str, out: list[dict[str, str]]) -> None:
    types = _types(schema)
    if value is None:  # only the type and enum checks look at null
        if types and not schema.get("nullable"):
            out.append(_type_invalid(path, ",".join(types), "null"))
        if schema.get("enum"):
            out.append(_not_supported(path, None, schema["enum"]))
        return
    actual = data_type(value)
    if types and actual not in types and not (actual == "number" and "integer" in types and _is_number(value)
                                                 and _is_json_integer(value)):
        if not (actual == "integer" and "number" in types):
            out.append(_type_invalid(path, ",".join(types), actual))
    _validate_combinators(schema, value, path, out)
    if isinstance(value, str):
        _validate_string(schema, value, path, out)
        _validate_format(schema, types, value, path, out)
    elif _is_number(value):
        _validate_number(schema, value, path, out)
    elif isinstance(value, list):
        _validate_array(schema, value, path, out)
    if schema.get("enum") and not any(json_equal(value, allowed) for allowed in schema["enum"]):
        out.append(_not_supported(path, value, schema["enum"]))
    if isinstance(value, Mapping):
        _validate_object(schema, value, path, out)


def _types(schema: Mapping[str, Any]) -> tuple[str, ...]:
    if schema.get(INT_OR_STRING):
        return ("integer", "string")
    return (schema["type"],) if schema.get("type") else ()


def _is_json_integer(value: float) -> bool:
    """swag.IsFloat64AJSONInteger: integral, or within a relative 1e-9 of an integer."""
    if isinstance(value, int):
        return True
    if not math.isfinite(value) or abs(value) > 2**53:
        return False
    nearest = float(round(value))
    if value == nearest:
        return True
    if nearest == 0:
        return False
    return abs(value - nearest) / (abs(value) + abs(nearest)) < 1e-9


def _validate_string(schema: Mapping[str, Any], value: str, path: str, out: list[dict[str, str]]) -> None:
    # kube-openapi's string validator stops at the first failure.
    max_length = schema.get("maxLength")
    if max_length is not None and len(value) > max_length:
        out.append(cause(TOO_LONG, path, f"Too long: may not be more than {int(max_length)} bytes"))
        return
    min_length = schema.get("minLength")
    if min_length is not None and len(value) < min_length:
        out.append(_invalid(path, value, f"{path} in body should be at least {int(min_length)} chars long"))
        return
    pattern = schema.get("pattern")
    if pattern is not None:
        try:
            matched = _compiled(pattern).search(value) is not None
        except re.error as err:
            out.append(_invalid(path, value, f"{path} in body should match '{pattern}, but pattern is invalid: {err}'"))
            return
        if not matched:
            out.append(_invalid(path, value, f"{path} in body should match '{pattern}'"))


def _validate_format(schema: Mapping[str, Any], types: tuple[str, ...], value: str, path: str, out: list[dict[str, str]]) -> None:
    fmt = schema.get("format")
    # The API server strips formats it does not support, and any format from non-string schemas.
    if not fmt or types not in ((), ("string",)):
        return
    check = FORMATS.get(fmt.replace("-", ""))
    if check is not None and not check(value):
        out.append(cause(TYPE_INVALID, path, f"Invalid value: {go_quote(value)}: {path} in body must be of type {fmt}: {go_quote(value)}"))


def _validate_number(schema: Mapping[str, Any], value: float, path: str, out: list[dict[str, str]]) -> None:
    # Integers are compared with int64(bound), as MinimumNativeType & co. do; floats with the float bound.
    native = isinstance(value, int)

    def bound(b: float) -> float:
        return int(b) if native else b

    def shown(b: float) -> str:
        return str(int(b)) if native else go_float(float(b))

    multiple = schema.get("multipleOf")
    if multiple is not None:
        factor = bound(multiple)
        if factor <= 0:
            out.append(_invalid(path, factor, f"factor MultipleOf declared for {path} must be positive: {shown(multiple)}"))
        elif (value % factor != 0) if native else not _is_json_integer(value / factor if factor >= 1 else 1 / factor * value):
            out.append(_invalid(path, value, f"{path} in body should be a multiple of {shown(multiple)}"))
    minimum = schema.get("minimum")
    if minimum is not None:
        exclusive = bool(schema.get("exclusiveMinimum"))
        if value < bound(minimum) or (exclusive and value == bound(minimum)):
            word = "greater than" if exclusive else "greater than or equal to"
            out.append(_invalid(path, value, f"{path} in body should be {word} {shown(minimum)}"))
    maximum = schema.get("maximum")
    if maximum is not None:
        exclusive = bool(schema.get("exclusiveMaximum"))
        if value > bound(maximum) or (exclusive and value == bound(maximum)):
            word = "less than" if exclusive else "less than or equal to"
            out.append(_invalid(path, value, f"{path} in body should be {word} {shown(maximum)}"))


def _validate_array(schema: Mapping[str, Any], value: list[Any], path: str, out: list[dict[str, str]]) -> None:
    items = schema.get("items")
    if isinstance(items, Mapping):
        for i, item in enumerate(value):
            _validate(items, item, f"{path}[{i}]", out)
    min_items = schema.get("minItems")
    if min_items is not None and len(value) < min_items:
        out.append(_invalid(path, len(value), f"{path} in body should have at least {int(min_items)} items"))
    max_items = schema.get("maxItems")
    if max_items is not None and len(value) > max_items:
        out.append(cause(TOO_MANY, path, f"Too many: {len(value)}: must have at most {int(max_items)} items"))
    if schema.get("uniqueItems"):
        seen: list[Any] = []
        for item in value:
            if any(json_equal(item, other) for other in seen):
                out.append(_invalid(path, "", f"{path} in body shouldn't contain duplicates"))
                break
            seen.append(item)


def _validate_object(schema: Mapping[str, Any], value: Mapping[str, Any], path: str, out: list[dict[str, str]]) -> None:
    min_props = schema.get("minProperties")
    if min_props is not None and len(value) < min_props:
        out.append(_invalid(path, len(value), f"{path} in body should have at least {int(min_props)} properties"))
    max_props = schema.get("maxProperties")
    if max_props is not None and len(value) > max_props:
        out.append(cause(TOO_MANY, path, f"Too many: {len(value)}: must have at most {int(max_props)} items"))
    props: Mapping[str, Any] = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    if additional is False:
        for key in value:
            if key not in props:
                out.append(_invalid(path, key, f"{_join(path, key)} in body is a forbidden property"))
    elif isinstance(additional, Mapping):
        for key, item in value.items():
            if key not in props:
                _validate(additional, item, _join(path, key), out)
    for key, prop in props.items():
        if key in value:
            _validate(prop, value[key], _join(path, key), out)
    for key in schema.get("required") or ():
        if key not in value:
            out.append(cause(REQUIRED, _join(path, key), "Required value"))


def _validate_combinators(schema: Mapping[str, Any], value: object, path: str, out: list[dict[str, str]]) -> None:
    """allOf/anyOf/oneOf/not; their own errors carry no field path (kube-openapi reports them as plain errors)."""
    quoted = json.dumps(path)
    any_of = schema.get("anyOf")
    if any_of:
        results = [validate(sub, value, path) for sub in any_of]
        if all(results):
            out.append(_composite(f"{quoted} must validate at least one schema (anyOf)"))
            closest = min(results, key=len)  # the closest alternative's failures (kube keeps its best match)
            out.extend(closest)
    one_of = schema.get("oneOf")
    if one_of:
        results = [validate(sub, value, path) for sub in one_of]
        valid = sum(1 for r in results if not r)
        if valid != 1:
            found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            out.append(_composite(f"{quoted} must validate one and only one schema (oneOf). {found}"))
            if valid == 0:
                closest = min(results, key=len)
                out.extend(closest)
    all_of = schema.get("allOf")
    if all_of:
        results = [validate(sub, value, path) for sub in all_of]
        for r in results:
            out.extend(r)
        valid = sum(1 for r in results if not r)
        if valid != len(results):
            out.append(_composite(f"{quoted} must validate all the schemas (allOf){'. None validated' if valid == 0 else ''}"))
    not_schema = schema.get("not")
    if isinstance(not_schema, Mapping) and not validate(not_schema, value, path):
        out.append(_composite(f"{quoted} must not validate the schema (not)"))


# ---------------------------------------------------------------------------------------------- wording


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_invalid(path: str, expected: str, actual: str) -> dict[str, str]:
    return cause(TYPE_INVALID, path, f"Invalid value: {go_quote(actual)}: {path} in body must be of type {expected}: {go_quote(actual)}")


def _invalid(path: str, value: object, detail: str) -> dict[str, str]:
    return cause(INVALID, path, f"Invalid value: {bad_value(value)}: {detail}")


def _composite(message: str) -> dict[str, str]:
    return cause(INVALID, _NIL_PATH, f'Invalid value: "": {message}')


def _not_supported(path: str, value: object, allowed: list[Any]) -> dict[str, str]:
    supported = ", ".join(go_quote(a if isinstance(a, str) else go_json(a)) for a in allowed)
    return cause(NOT_SUPPORTED, path, f"Unsupported value: {bad_value(value)}: supported values: {supported}")
