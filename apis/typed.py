"""Typed views over API objects, and their OpenAPI v3 schemas, from one set of dataclass definitions.

A view type is a ``@dataclass(kw_only=True)`` subclass of ``ApiType`` whose fields are declared with
``api_field``. Attribute names are snake_case; the JSON name is the camelCase of the attribute unless
``api_field(json=...)`` names it. Field types may be ``str``, ``int``, ``float``, ``bool``, another ``ApiType``,
``list[T]``, ``dict[str, T]``, ``dict[str, Any]`` (a free-form object kept as a plain dict, e.g. a pod template)
or ``Any``; every field is optional in Python (``None`` = absent).

Guarantees:
- ``T.from_dict(d).to_dict() == d`` for any ``d`` that matches the types: unknown fields and explicit
  ``null`` values are kept per level in ``_extra`` and emitted again; absent fields stay absent.
- ``from_dict`` raises ``ValueError`` naming the JSON field path when a typed field holds a value of the wrong type.
- ``from_dict`` does not copy free-form sub-objects (templates, unknown fields): the view shares them with the
  source dict, as listers share objects. Deep-copy the source (``apis.meta.deep_copy``) before changing either.
- ``schema_of(T)`` is the structural OpenAPI v3 schema of ``T``: ``required``, ``enum``, ``default``,
  ``minimum`` … come from the ``api_field`` declarations, free-form objects get
  ``x-kubernetes-preserve-unknown-fields: true``.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from cachetools import LRUCache

from .resources import GroupVersionResource, ResourceInfo, lookup

__all__ = ["ApiType", "Resource", "api_field", "schema_of", "camel_case", "spec_of"]

T = TypeVar("T", bound="ApiType")
R = TypeVar("R", bound="Resource")
V = TypeVar("V", bound="ApiType")

VIEW_CACHE_SIZE = 2048  # objects whose last view is kept (one entry per object UID)

_META_KEY = "apis.typed"


@dataclass(frozen=True)
class _FieldOptions:
    json: str | None
    required: bool
    doc: str
    schema: Mapping[str, Any]
    replace_schema: Mapping[str, Any] | None


def api_field(
    json: str | None = None,
    *,
    required: bool = False,
    doc: str = "",
    replace_schema: Mapping[str, Any] | None = None,
    **schema: Any,
) -> Any:
    """Declare a view field. ``schema`` holds extra OpenAPI keywords verbatim (``minimum=1``, ``default=60``,
    ``enum=[...]``, ``pattern=...``, ``format="date-time"``, ``minItems=1`` …); they go into the generated
    schema only — views never fill in defaults, so round trips stay exact. ``replace_schema`` replaces the
    schema derived from the Python type (e.g. the root ``metadata``, which a CRD may only declare as an object)."""
    options = _FieldOptions(json=json, required=required, doc=doc, schema=dict(schema), replace_schema=replace_schema)
    return dataclasses.field(default=None, metadata={_META_KEY: options})


def camel_case(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# ------------------------------------------------------------------------------------ type descriptions


@dataclass(frozen=True)
class _Type:
    """What a field holds: ``scalar`` (py = str/int/float/bool), ``view`` (py = ApiType subclass),
    ``list``/``map`` (item = element type), ``object`` (free-form dict) or ``any``."""

    shape: str
    py: Any = None
    item: _Type | None = None


@dataclass(frozen=True)
class _Field:
    attr: str
    json: str
    type: _Type
    options: _FieldOptions


_NONE = type(None)
_SCALAR_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _describe(hint: object, where: str) -> _Type:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not _NONE]
        if len(rest) != 1:
            raise TypeError(f"{where}: only Optional[X] unions are supported, got {hint!r}")
        return _describe(rest[0], where)
    if hint is Any:
        return _Type("any")
    if hint in _SCALAR_NAMES:
        return _Type("scalar", hint)
    if origin is list:
        return _Type("list", item=_describe(args[0], where))
    if origin is dict:
        if args[1] is Any:
            return _Type("object")
        return _Type("map", item=_describe(args[1], where))
    if isinstance(hint, type) and issubclass(hint, ApiType):
        return _Type("view", hint)
    raise TypeError(f"{where}: unsupported field type {hint!r}")


_FIELD_CACHE: dict[type, tuple[_Field, ...]] = {}


def _fields(cls: type[ApiType]) -> tuple[_Field, ...]:
    cached = _FIELD_CACHE.get(cls)
    if cached is not None:
        return cached
    hints = typing.get_type_hints(cls)
    result = []
    for f in dataclasses.fields(cls):
        options = f.metadata.get(_META_KEY)
        if options is None:
            continue
        json_name = options.json or camel_case(f.name)
        result.append(_Field(f.name, json_name, _describe(hints[f.name], f"{cls.__name__}.{f.name}"), options))
    fields = tuple(result)
    _FIELD_CACHE[cls] = fields
    return fields


# ------------------------------------------------------------------------------------------- the views


@dataclass(kw_only=True)
class ApiType:
    """Base of every typed view; see the module doc for the round-trip guarantees."""

    _extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)

    SCHEMA_DESCRIPTION: ClassVar[str] = ""

    @classmethod
    def from_dict(cls: type[T], data: Mapping[str, Any], path: str = "") -> T:
        """The view of ``data`` (a dict as the API server serves it); ``path`` prefixes field paths in errors."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{path or cls.__name__}: expected an object, got {_type_name(data)}")
        fields = _fields(cls)
        known = {f.json: f for f in fields}
        values: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            f = known.get(key)
            if f is None or value is None:
                extra[key] = value
            else:
                values[f.attr] = _load(f.type, value, _join(path, key))
        return cls(_extra=extra, **values)

    def to_dict(self) -> dict[str, Any]:
        """The object as the API server serves it: camelCase names, absent fields left out, unknown fields kept."""
        out: dict[str, Any] = {}
        for f in _fields(type(self)):
            value = getattr(self, f.attr)
            if value is not None:
                out[f.json] = _dump(f.type, value)
        for key, value in self._extra.items():
            out.setdefault(key, value)
        return out


# (view type, object UID) -> (the dicts the view was built from, the view); Resource views and spec views alike
_VIEWS: LRUCache[tuple[type, str], tuple[tuple[Any, ...], ApiType]] = LRUCache(maxsize=VIEW_CACHE_SIZE)
_VIEWS_LOCK = threading.Lock()


@dataclass(kw_only=True)
class Resource(ApiType):
    """A top-level object (``apiVersion``, ``kind``, ``metadata``, then the subclass's ``spec``/``status``).

    Subclasses set ``GVR`` (registered in ``apis.resources``) and the CRD's ``PRINTER_COLUMNS``."""

    GVR: ClassVar[GroupVersionResource]
    PRINTER_COLUMNS: ClassVar[tuple[Mapping[str, Any], ...]] = ()

    api_version: str | None = api_field(replace_schema={"type": "string"})
    kind: str | None = api_field(replace_schema={"type": "string"})
    metadata: dict[str, Any] | None = api_field(replace_schema={"type": "object"})

    @classmethod
    def info(cls) -> ResourceInfo:
        return lookup(cls.GVR)

    @classmethod
    def view_of(cls: type[R], obj: Mapping[str, Any]) -> R:
        """``from_dict(obj)``, remembered while ``obj``'s ``metadata``, ``spec`` and ``status`` are the dicts (or
        equal to the dicts) it was built from: an informer's objects are shared and never changed (an update brings
        new dicts), so a controller syncing a job many times between its updates parses it once. The view is shared
        and its free-form parts may be those of an earlier, equal dict: never change it. Errors are not remembered
        (the next call raises them again)."""
        parts = (obj.get("metadata"), obj.get("spec"), obj.get("status"))
        return _remembered(cls, obj, parts, lambda: cls.from_dict(obj))

    @property
    def name(self) -> str:
        return (self.metadata or {}).get("name") or ""

    @property
    def namespace(self) -> str:
        return (self.metadata or {}).get("namespace") or ""


def spec_of(spec_type: type[T], obj: Mapping[str, Any]) -> T | None:
    """The view of ``obj``'s ``spec`` alone (``None`` when it has none), as ``Resource.view_of`` would give it but
    without parsing the status: a controller that reads only the spec pays nothing for status updates (a learning
    job's conditions). Remembered while ``obj``'s ``spec`` is (or equals) the dict it was built from; shared, never
    change it. ``ValueError`` names the field as ``spec.<path>``."""
    spec = obj.get("spec")
    if spec is None:
        return None
    return _remembered(spec_type, obj, (spec,), lambda: spec_type.from_dict(spec, "spec"))


def _remembered(cls: type, obj: Mapping[str, Any], parts: tuple[Any, ...], build: Callable[[], V]) -> V:
    """``build()``, or the view built before for ``obj`` (by UID) from the same ``parts``: the very dicts, or equal
    ones (an update decodes new dicts for the parts it left alone; comparing them costs far less than a parse)."""
    metadata = obj.get("metadata")
    uid = metadata.get("uid") if isinstance(metadata, Mapping) else None
    if not uid:
        return build()
    key = (cls, uid)
    with _VIEWS_LOCK:
        hit = _VIEWS.get(key)
    if hit is not None:
        built_from, view = hit[0], typing.cast(V, hit[1])
        if all(a is b for a, b in zip(built_from, parts, strict=True)):
            return view
        if built_from == parts:  # equal content in new dicts (an update that left these parts alone): same view
            with _VIEWS_LOCK:
                _VIEWS[key] = (parts, view)
            return view
    view = build()
    with _VIEWS_LOCK:
        _VIEWS[key] = (parts, view)
    return view


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    for py, name in _SCALAR_NAMES.items():
        if isinstance(value, py):
            return name
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _scalar_ok(py: type, value: object) -> bool:
    if isinstance(value, bool):
        return py is bool
    if py is float:
        return isinstance(value, (int, float))
    if py is int:
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, py)


def _load(t: _Type, value: object, path: str) -> Any:
    if t.shape == "any":
        return value
    if t.shape == "scalar":
        if not _scalar_ok(t.py, value):
            raise ValueError(f"{path}: expected {_SCALAR_NAMES[t.py]}, got {_type_name(value)} {value!r}")
        return value
    if t.shape == "view":
        return t.py.from_dict(value, path)
    if t.shape == "object":
        if not isinstance(value, Mapping):
            raise ValueError(f"{path}: expected an object, got {_type_name(value)}")
        return value
    if t.shape == "list":
        if not isinstance(value, list):
            raise ValueError(f"{path}: expected an array, got {_type_name(value)}")
        assert t.item is not None
        return [_load(t.item, item, f"{path}[{i}]") for i, item in enumerate(value)]
    if not isinstance(value, Mapping):
        raise ValueError(f"{path}: expected an object, got {_type_name(value)}")
    assert t.item is not None
    return {k: _load(t.item, v, f"{path}[{k}]") for k, v in value.items()}


def _dump(t: _Type, value: Any) -> Any:  # value: what t.shape says (a view, a list, a map or a scalar)
    if t.shape == "view":
        return value.to_dict()
    if t.shape == "list":
        assert t.item is not None
        return [_dump(t.item, item) for item in value]
    if t.shape == "map":
        assert t.item is not None
        return {k: _dump(t.item, v) for k, v in value.items()}
    return value


# -------------------------------------------------------------------------------------------- schemas


def schema_of(cls: type[ApiType]) -> dict[str, Any]:
    """The structural OpenAPI v3 schema of a view type (a fresh dict; properties in declaration order)."""
    return _type_schema(_Type("view", cls))


def _type_schema(t: _Type) -> dict[str, Any]:
    if t.shape == "scalar":
        return {"type": _SCALAR_NAMES[t.py]}
    if t.shape == "any":
        return {"x-kubernetes-preserve-unknown-fields": True}
    if t.shape == "object":
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if t.shape == "list":
        assert t.item is not None
        return {"type": "array", "items": _type_schema(t.item)}
    if t.shape == "map":
        assert t.item is not None
        return {"type": "object", "additionalProperties": _type_schema(t.item)}
    cls = t.py
    schema: dict[str, Any] = {"type": "object"}
    if cls.SCHEMA_DESCRIPTION:
        schema["description"] = cls.SCHEMA_DESCRIPTION
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in _fields(cls):
        prop = dict(f.options.replace_schema) if f.options.replace_schema is not None else _type_schema(f.type)
        if f.options.doc:
            prop["description"] = _one_line(f.options.doc)
        prop.update(f.options.schema)
        properties[f.json] = prop
        if f.options.required:
            required.append(f.json)
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = required
    return schema


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
