"""Server-side printing (``meta.k8s.io/v1`` Table) for ``kubectl get``.

kubectl asks for ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io, ...``. The sandbox answers the columns
kube-apiserver prints for the built-in kinds (``printers``), a CRD's ``additionalPrinterColumns`` for custom
resources (kube's JSONPath, ``jsonpath``) after Name, and Name and Age for anything else. ``includeObject`` says
what each row carries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from apis import meta
from apis.errors import BadRequestError

from . import jsonpath
from .columns import AGE, NAME, Cell, Column, human_duration, since
from .printers import printer_for, row_conditions

__all__ = [
    "TableOptions",
    "crd_printer_columns",
    "human_duration",
    "table_options",
    "to_table",
    "wanted_table_version",
]


@lru_cache(maxsize=256)  # a few distinct Accept headers, asked about on every request
def wanted_table_version(accept: str | None) -> str | None:
    """``"v1"`` / ``"v1beta1"`` when the Accept header asks for a Table first, else None."""
    for part in (accept or "").split(","):
        params = dict(p.strip().partition("=")[::2] for p in part.split(";")[1:])
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
            return params["v"]
    return None


@dataclass(frozen=True)
class TableOptions:
    """What a Table request asked for: the Table version and ``includeObject`` (each row's ``object``: ``None``,
    ``Metadata`` (PartialObjectMetadata, the default) or ``Object`` (the whole object, what ``kubectl get
    --sort-by`` asks for))."""

    version: str = "v1"
    include_object: str = "Metadata"


INCLUDE_OBJECT_VALUES = ("Metadata", "None", "Object")


def table_options(accept: str | None, query: Mapping[str, list[str]]) -> TableOptions | None:
    """The Table a request asks for (None: not a Table); a bad ``includeObject`` is a 400 as kube-apiserver's."""
    version = wanted_table_version(accept)
    if version is None:
        return None
    include = (query.get("includeObject") or [""])[0] or "Metadata"
    if include not in INCLUDE_OBJECT_VALUES:
        supported = ", ".join(f'"{v}"' for v in INCLUDE_OBJECT_VALUES)
        raise BadRequestError(
            f'Unable to convert to Table as requested: includeObject: Unsupported value: "{include}": '
            f"supported values: {supported}"
        )
    return TableOptions(version, include)


def crd_printer_columns(crd: Mapping[str, Any] | None, version: str) -> list[Column] | None:
    """The Table columns of a CRD version's ``additionalPrinterColumns`` after Name (None when it declares none),
    evaluated as kube-apiserver's table convertor does. A column whose path does not parse shows no values."""
    for v in ((crd or {}).get("spec") or {}).get("versions") or []:
        if v.get("name") != version or not v.get("additionalPrinterColumns"):
            continue
        columns = [NAME]
        for col in v["additionalPrinterColumns"]:
            path = str(col.get("jsonPath", ""))
            kind = str(col.get("type", "string"))
            columns.append(Column(
                str(col.get("name", "")), kind, _column_cell(path, kind), priority=int(col.get("priority") or 0),
                format=str(col.get("format") or ""),
                description=str(col.get("description") or "")
                or f"Custom resource definition column (in JSONPath format): {path}",
            ))
        return columns
    return None


def _column_cell(path: str, kind: str) -> Cell:
    try:
        compiled = jsonpath.parse(path)
    except jsonpath.JSONPathError:
        return lambda obj: None

    def cell(obj: Mapping[str, Any]) -> Any:
        found, value = compiled.first(obj)
        return _typed_cell(kind, value) if found else None

    return cell


def _typed_cell(kind: str, value: Any) -> Any:
    """cellForJSONValue: a value of the column's type, else nothing; ``string`` prints any value as Go does."""
    if value is None:
        return None
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "string":
        return jsonpath.format_value(value)
    if kind == "integer" and is_number:
        return int(value) if not isinstance(value, float) or math.isfinite(value) else None
    if kind == "number" and is_number:
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        return since(value)
    return None


def to_table(
    body: Mapping[str, Any],
    group: str,
    resource: str,
    options: TableOptions = TableOptions(),
    columns: list[Column] | None = None,
) -> dict[str, Any]:
    """A Table for a single object or a List ``body`` (each row's object as ``options.include_object`` says);
    ``columns`` are a custom resource's printer columns (``crd_printer_columns``), else the built-in printer's or
    Name and Age."""
    cols = columns if columns is not None else printer_for(group, resource) or [NAME, AGE]
    table_version = options.version
    is_list = isinstance(body.get("items"), list)
    items = body["items"] if is_list else [body]
    item_type = _item_type(body) if is_list else {}
    rows = []
    for obj in items:
        row: dict[str, Any] = {"cells": [_cell_value(col.cell(obj)) for col in cols]}
        if options.include_object == "Object":
            row["object"] = {**item_type, **obj} if item_type and "kind" not in obj else obj
        elif options.include_object == "Metadata":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": f"meta.k8s.io/{table_version}",
                "metadata": obj.get("metadata") or {},
            }
        conditions = row_conditions(group, resource, obj)
        if conditions:
            row["conditions"] = conditions
        rows.append(row)
    list_meta = dict(body.get("metadata") or {}) if is_list else {"resourceVersion": meta.resource_version(body)}
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{table_version}",
        "metadata": list_meta,
        "columnDefinitions": [col.definition() for col in cols],
        "rows": rows,
    }


def _item_type(body: Mapping[str, Any]) -> dict[str, str]:
    """The kind and apiVersion of a List's items (``PodList`` → ``Pod``), for rows that carry whole objects."""
    kind = str(body.get("kind") or "")
    if not kind.endswith("List") or not body.get("apiVersion"):
        return {}
    return {"kind": kind[: -len("List")], "apiVersion": str(body["apiVersion"])}


def _cell_value(value: object) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    import orjson

    return orjson.dumps(value).decode()
