"""OpenAPI v3 schemas of the built-in kinds the sandbox serves, derived from the ``kubernetes`` package's model
classes (``openapi_types``, ``attribute_map``, field descriptions), never written by hand.

Each model class becomes one definition, named as the class (``V1Pod``, ``V1ObjectMeta``, ``CoreV1Event`` …):
``type: object`` with ``properties`` keyed by JSON name, ``required``, ``description``; a property whose type is
another model is ``{"description": …, "allOf": [{"$ref": "#/components/schemas/<name>"}]}`` as kube-apiserver's
``/openapi/v3`` spells it (definitions refer to each other, so recursive types such as ``V1JSONSchemaProps`` stay
finite). Lists are ``type: array`` with ``items``; maps ``type: object`` with ``additionalProperties``. Special
values: ``date-time`` strings (``metav1.Time``), ``byte`` strings (base64, Secret data), int-or-string
(``x-kubernetes-int-or-string``), quantities (``oneOf`` string/number, ``format: quantity``, as ``resource.Quantity``
decodes both) and untyped values (raw JSON) as ``{}``.

Built once per process, lazily and thread-safely (``definitions``); a kind's top-level definition carries
``x-kubernetes-group-version-kind``. ``kind_definition(api_version, kind)`` finds the one of a served kind.
"""

from __future__ import annotations

import functools
import inspect
import re
import threading
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, TypeGuard

__all__ = [
    "REF_PREFIX",
    "QUANTITY_FORMAT",
    "definitions",
    "go_type_name",
    "kind_definition",
    "kind_definition_name",
    "model_class",
    "resolve",
]

REF_PREFIX = "#/components/schemas/"
QUANTITY_FORMAT = "quantity"

# Fields of type resource.Quantity (the client's generator flattens them to strings; the API accepts numbers too).
_QUANTITY_FIELDS: dict[str, frozenset[str]] = {
    "V1ResourceRequirements": frozenset({"limits", "requests"}),
    "V1VolumeResourceRequirements": frozenset({"limits", "requests"}),
    "V1NodeStatus": frozenset({"allocatable", "capacity"}),
    "V1EmptyDirVolumeSource": frozenset({"size_limit"}),
    "V1PodSpec": frozenset({"overhead"}),
    "V1ContainerStatus": frozenset({"allocated_resources"}),
    "V2MetricTarget": frozenset({"average_value", "value"}),
    "V2MetricValueStatus": frozenset({"average_value", "value"}),
    "V1ResourceQuotaSpec": frozenset({"hard"}),
    "V1ResourceQuotaStatus": frozenset({"hard", "used"}),
    "V1LimitRangeItem": frozenset({"default", "default_request", "max", "max_limit_request_ratio", "min"}),
    "V1PersistentVolumeSpec": frozenset({"capacity"}),
    "V1PersistentVolumeClaimStatus": frozenset({"allocated_resources", "capacity"}),
}
_PRIMITIVES: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number", "format": "double"},
    "bool": {"type": "boolean"},
    "bytes": {"type": "string", "format": "byte"},
    "bytearray": {"type": "string", "format": "byte"},
    "datetime": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "object": {},
}
_LIST = re.compile(r"^(?:List|list)\[(.*)\]$")
_DICT = re.compile(r"^(?:Dict\[str, (.*)\]|dict\(str, (.*)\))$")
_NOQA = re.compile(r"\s*#\s*noqa: E501")

_lock = threading.Lock()
_definitions: dict[str, dict[str, Any]] = {}
_kinds_ready: set[str] = set()  # kinds whose definitions kind_definition_name has built


class KubernetesModel(Protocol):
    """A model class of the ``kubernetes`` package (which ships no types): its attributes' OpenAPI type names and
    JSON names."""

    openapi_types: ClassVar[dict[str, str]]
    attribute_map: ClassVar[dict[str, str]]


def _is_model(cls: object) -> TypeGuard[type[KubernetesModel]]:
    return inspect.isclass(cls) and isinstance(getattr(cls, "openapi_types", None), dict)


def _client() -> Any:
    import kubernetes.client

    return kubernetes.client


@functools.cache
def model_class(api_version: str, kind: str) -> type[KubernetesModel] | None:
    """The ``kubernetes`` model class of a kind (``CoreV1Event`` for core/v1 Event, ``V1Deployment`` …), or None."""
    group, _, version = api_version.rpartition("/")
    prefix = "".join(part.capitalize() for part in (group.split(".")[0] if group else "core").split("-"))
    client = _client()
    for name in (f"{prefix}{version.capitalize()}{kind}", f"{version.capitalize()}{kind}"):
        cls = getattr(client, name, None)
        if _is_model(cls):
            return cls
    return None


@functools.cache
def go_type_name(definition_name: str) -> str:
    """The Go type a definition stands for, as Go's JSON errors print it (``V1ObjectMeta`` → ``v1.ObjectMeta``)."""
    m = re.match(r"^(?:[A-Z][a-z]+)?(V\d+(?:(?:alpha|beta)\d+)?)([A-Z]\w*)$", definition_name)
    if not m:
        return definition_name
    return f"{m.group(1).lower()}.{m.group(2)}"


def _description_of(cls: type[KubernetesModel], attr: str) -> str:
    fields = getattr(cls, "model_fields", None)
    if isinstance(fields, Mapping) and attr in fields:  # pydantic models (kubernetes >= 35)
        return (getattr(fields[attr], "description", None) or "").strip()
    prop = cls.__dict__.get(attr)
    doc = getattr(prop, "__doc__", None) or ""
    lines = [_NOQA.sub("", line).strip() for line in doc.split("\n")]
    body: list[str] = []
    for line in lines[1:]:  # the first line is "Gets the <attr> of this <Class>."
        if line.startswith(":return:") or line.startswith(":rtype:"):
            break
        body.append(line)
    return " ".join(part for part in body if part).strip()


def _class_description(cls: type[KubernetesModel]) -> str:
    doc = inspect.cleandoc(cls.__doc__ or "")
    text = doc.split("Attributes:")[0].strip()
    return "" if text.startswith("NOTE: This class is auto generated") else " ".join(text.split())


def _required(cls: type[KubernetesModel]) -> list[str]:
    fields = getattr(cls, "model_fields", None)
    if not isinstance(fields, Mapping):
        return []
    json_names = cls.attribute_map
    return [json_names[a] for a, f in fields.items() if a in json_names and f.is_required()]


def _is_int_or_string(cls: type[KubernetesModel], attr: str) -> bool:
    fields = getattr(cls, "model_fields", None)
    if not isinstance(fields, Mapping) or attr not in fields:
        return False
    found: set[type] = set()

    def collect(annotation: object) -> None:
        if annotation in (int, str):
            found.add(annotation)
        for arg in typing.get_args(annotation):
            collect(arg)

    collect(fields[attr].annotation)
    return found == {int, str}


def _quantity(description: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {"oneOf": [{"type": "string"}, {"type": "number"}], "format": QUANTITY_FORMAT}
    if description:
        schema["description"] = description
    return schema


def _type_schema(type_name: str, pending: list[str], quantity: bool) -> dict[str, Any]:
    """The schema of one ``openapi_types`` type string; model names are queued in ``pending``."""
    m = _LIST.match(type_name)
    if m:
        return {"type": "array", "items": _type_schema(m.group(1), pending, quantity)}
    m = _DICT.match(type_name)
    if m:
        return {"type": "object", "additionalProperties": _type_schema(m.group(1) or m.group(2), pending, quantity)}
    if quantity:
        return _quantity()
    if type_name in _PRIMITIVES:
        return dict(_PRIMITIVES[type_name])
    pending.append(type_name)
    return {"allOf": [{"$ref": REF_PREFIX + type_name}]}


def _model_definition(cls: type[KubernetesModel], pending: list[str]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    quantities = _QUANTITY_FIELDS.get(cls.__name__, frozenset())
    for attr, type_name in cls.openapi_types.items():
        json_name = cls.attribute_map[attr]
        if type_name == "object" and _is_int_or_string(cls, attr):
            schema: dict[str, Any] = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
        else:
            schema = _type_schema(type_name, pending, attr in quantities)
        description = _description_of(cls, attr)
        if description:
            schema = {"description": description, **schema}
        properties[json_name] = schema
    definition: dict[str, Any] = {"type": "object", "properties": properties}
    description = _class_description(cls)
    if description:
        definition["description"] = description
    required = _required(cls)
    if required:
        definition["required"] = required
    return definition


def _build(root: str) -> None:
    """Add ``root`` and every definition it reaches to the cache (with the module lock held)."""
    pending = [root]
    client = _client()
    while pending:
        name = pending.pop()
        if name in _definitions:
            continue
        cls = getattr(client, name, None)
        if not _is_model(cls):
            _definitions[name] = {}  # an unknown model: any value
            continue
        _definitions[name] = _model_definition(cls, pending)


def kind_definition_name(api_version: str, kind: str) -> str | None:
    """The definition name of a built-in kind (building its definitions on first use), or None when the
    ``kubernetes`` package has no model for it (custom resources)."""
    cls = model_class(api_version, kind)
    if cls is None:
        return None
    if cls.__name__ in _kinds_ready:  # lock-free once built
        return cls.__name__
    with _lock:
        if cls.__name__ not in _definitions:
            _build(cls.__name__)
            group, _, version = api_version.rpartition("/")
            _definitions[cls.__name__]["x-kubernetes-group-version-kind"] = [
                {"group": group, "version": version, "kind": kind}
            ]
        _kinds_ready.add(cls.__name__)
    return cls.__name__


def kind_definition(api_version: str, kind: str) -> dict[str, Any] | None:
    """The top-level definition of a built-in kind (its nested types by ``$ref``), or None."""
    name = kind_definition_name(api_version, kind)
    return definitions()[name] if name is not None else None


def definitions() -> dict[str, dict[str, Any]]:
    """Every definition built so far, by name (a copy of the index; the schemas themselves are shared and must not
    be modified)."""
    with _lock:
        return dict(_definitions)


def resolve(schema: Mapping[str, Any]) -> tuple[str | None, Mapping[str, Any]]:
    """The definition a property schema refers to (``allOf: [{$ref}]`` or ``$ref``) as ``(name, definition)``, or
    ``(None, schema)`` when it refers to none."""
    ref = schema.get("$ref")
    if ref is None:
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
            ref = all_of[0].get("$ref")
    if not isinstance(ref, str) or not ref.startswith(REF_PREFIX):
        return None, schema
    name = ref[len(REF_PREFIX):]
    definition = _definitions.get(name)  # definitions are added whole (lock-free reads)
    if definition is None:
        with _lock:
            if name not in _definitions:
                _build(name)
            definition = _definitions[name]
    return name, definition
