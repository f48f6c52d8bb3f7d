"""Server-side printing (``meta.k8s.io/v1`` Table) for ``kubectl get``.

kubectl asks for ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io, ...``. The sandbox answers the columns
kube-apiserver prints for the built-in kinds (``printers``), a CRD's ``additionalPrinterColumns`` for custom
resources (simple JSONPaths: ``.a.b``, ``.a[0].b``) after Name, and Name and Age for anything else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ... import meta
from .columns import AGE, NAME, Cell, Column, human_duration, since
from .printers import printer_for, row_conditions

__all__ = ["wanted_table_version", "to_table", "human_duration", "crd_printer_columns"]


def wanted_table_version(accept: str | None) -> str | None:
    """``"v1"`` / ``"v1beta1"`` when the Accept header asks for a Table first, else None."""
    for part in (accept or "").split(","):
        params = dict(p.strip().partition("=")[::2] for p in part.split(";")[1:])
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
            return params["v"]
    return None


_PATH_PART = re.compile(r"^([^\[\]]*)((?:\[\d+\])*)$")


def _jsonpath(path: str) -> Cell:
    parts = [p for p in path.strip().strip("{}").split(".") if p]

    def cell(obj: Mapping[str, Any]) -> Any:
        cur: Any = obj
        for part in parts:
            m = _PATH_PART.match(part)
            if not m:
                return None
            if m.group(1):
                cur = cur.get(m.group(1)) if isinstance(cur, Mapping) else None
            for idx in re.findall(r"\[(\d+)\]", m.group(2)):
                cur = cur[int(idx)] if isinstance(cur, list) and int(idx) < len(cur) else None
        return cur

    return cell


def crd_printer_columns(crd: Mapping[str, Any] | None, version: str) -> list[tuple[str, str, int, Cell]] | None:
    """The Table columns of a CRD version's ``additionalPrinterColumns`` (None when it declares none)."""
    for v in ((crd or {}).get("spec") or {}).get("versions") or []:
        if v.get("name") != version or not v.get("additionalPrinterColumns"):
            continue
        columns = []
        for col in v["additionalPrinterColumns"]:
            get = _jsonpath(col.get("jsonPath", ""))
            kind = col.get("type", "string")
            if kind == "date":
                columns.append((col.get("name", ""), "date", int(col.get("priority") or 0), _date_cell(get)))
            else:
                columns.append((col.get("name", ""), kind, int(col.get("priority") or 0), get))
        return columns
    return None


def _date_cell(get: Cell) -> Cell:
    def cell(obj: Mapping[str, Any]) -> Any:
        value = get(obj)
        if not isinstance(value, str):
            return None
        shown = since(value)
        return value if shown == "<invalid>" else shown

    return cell


def to_table(
    body: Mapping[str, Any],
    group: str,
    resource: str,
    table_version: str = "v1",
    columns: list[tuple[str, str, int, Cell]] | None = None,
) -> dict[str, Any]:
    """A Table for a single object or a List ``body`` (row objects are PartialObjectMetadata); ``columns`` are a
    custom resource's printer columns (shown after Name), else the built-in printer's or Name and Age."""
    if columns is not None:
        cols = [NAME] + [Column(n, t, get, priority=p) for n, t, p, get in columns]
    else:
        cols = printer_for(group, resource) or [NAME, AGE]
    is_list = isinstance(body.get("items"), list)
    items = body["items"] if is_list else [body]
    rows = []
    for obj in items:
        row: dict[str, Any] = {
            "cells": [_cell_value(col.cell(obj)) for col in cols],
            "object": {
                "kind": "PartialObjectMetadata",
                "apiVersion": f"meta.k8s.io/{table_version}",
                "metadata": obj.get("metadata") or {},
            },
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


def _cell_value(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    import orjson

    return orjson.dumps(value).decode()
