"""Server-side printing (``meta.k8s.io/v1`` Table) for ``kubectl get``.

kubectl asks for ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io, ...``. The sandbox answers a minimal
Table: Name and Age for every kind, the familiar columns for pods, deployments, nodes and namespaces, and a CRD's
``additionalPrinterColumns`` for custom resources (simple JSONPaths: ``.a.b``, ``.a[0].b``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from ... import meta

__all__ = ["wanted_table_version", "to_table", "human_duration", "crd_printer_columns"]

Cell = Callable[[Mapping[str, Any]], Any]


def wanted_table_version(accept: str | None) -> str | None:
    """``"v1"`` / ``"v1beta1"`` when the Accept header asks for a Table first, else None."""
    for part in (accept or "").split(","):
        params = dict(p.strip().partition("=")[::2] for p in part.split(";")[1:])
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
            return params["v"]
    return None


def human_duration(seconds: float) -> str:
    """apimachinery's HumanDuration: ``45s``, ``3m20s``, ``5h``, ``3d4h``, ``2y10d`` …"""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 24 * 8:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    if h < 24 * 365 * 8:
        days = h // 24 - (h // 24 // 365) * 365
        return f"{h // 24 // 365}y{days}d" if days else f"{h // 24 // 365}y"
    return f"{h // 24 // 365}y"


def _age(obj: Mapping[str, Any]) -> str:
    ts = meta.creation_timestamp(obj)
    if not ts:
        return "<unknown>"
    try:
        return human_duration((datetime.now(timezone.utc) - meta.parse_time(ts)).total_seconds())
    except ValueError:
        return "<invalid>"


def _conditions(obj: Mapping[str, Any]) -> dict[str, str]:
    return {c.get("type", ""): c.get("status", "") for c in (obj.get("status") or {}).get("conditions") or []}


def _pod_ready(obj: Mapping[str, Any]) -> str:
    statuses = (obj.get("status") or {}).get("containerStatuses") or []
    total = len((obj.get("spec") or {}).get("containers") or []) or len(statuses)
    return f"{sum(1 for s in statuses if s.get('ready'))}/{total}"


def _pod_status(obj: Mapping[str, Any]) -> str:
    if meta.deletion_timestamp(obj):
        return "Terminating"
    status = obj.get("status") or {}
    for cs in status.get("containerStatuses") or []:
        state = cs.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            return state["waiting"]["reason"]
        if (state.get("terminated") or {}).get("reason") and status.get("phase") not in ("Succeeded", "Failed"):
            return state["terminated"]["reason"]
    if status.get("phase") == "Succeeded":
        return "Completed"
    if status.get("phase") == "Failed":
        return status.get("reason") or "Error"
    return status.get("reason") or status.get("phase") or "Pending"


def _restarts(obj: Mapping[str, Any]) -> int:
    return sum(int(s.get("restartCount") or 0) for s in (obj.get("status") or {}).get("containerStatuses") or [])


def _status_of(field: str) -> Cell:
    return lambda o: (o.get("status") or {}).get(field) or 0


_BUILTIN: dict[tuple[str, str], list[tuple[str, str, int, Cell]]] = {
    ("", "pods"): [
        ("Ready", "string", 0, _pod_ready),
        ("Status", "string", 0, _pod_status),
        ("Restarts", "integer", 0, _restarts),
        ("Age", "string", 0, _age),
        ("IP", "string", 1, lambda o: (o.get("status") or {}).get("podIP") or "<none>"),
        ("Node", "string", 1, lambda o: (o.get("spec") or {}).get("nodeName") or "<none>"),
    ],
    ("apps", "deployments"): [
        ("Ready", "string", 0, lambda o: f"{_status_of('readyReplicas')(o)}/{(o.get('spec') or {}).get('replicas', 1)}"),
        ("Up-to-date", "integer", 0, _status_of("updatedReplicas")),
        ("Available", "integer", 0, _status_of("availableReplicas")),
        ("Age", "string", 0, _age),
    ],
    ("", "nodes"): [
        ("Status", "string", 0, lambda o: "Ready" if _conditions(o).get("Ready") == "True" else "NotReady"),
        ("Roles", "string", 0, lambda o: "<none>"),
        ("Age", "string", 0, _age),
        ("Version", "string", 0, lambda o: ((o.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")),
    ],
    ("", "namespaces"): [
        ("Status", "string", 0, lambda o: (o.get("status") or {}).get("phase") or "Active"),
        ("Age", "string", 0, _age),
    ],
}
_DEFAULT = [("Age", "string", 0, _age)]

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
        try:
            return human_duration((datetime.now(timezone.utc) - meta.parse_time(value)).total_seconds())
        except ValueError:
            return value

    return cell


def to_table(
    body: Mapping[str, Any],
    group: str,
    resource: str,
    table_version: str = "v1",
    columns: list[tuple[str, str, int, Cell]] | None = None,
) -> dict[str, Any]:
    """A Table for a single object or a List ``body`` (row objects are PartialObjectMetadata)."""
    cols = columns if columns is not None else _BUILTIN.get((group, resource), _DEFAULT)
    is_list = isinstance(body.get("items"), list)
    items = body["items"] if is_list else [body]
    definitions = [{"name": "Name", "type": "string", "format": "name", "description": "Name", "priority": 0}]
    definitions += [{"name": n, "type": t, "format": "", "description": n, "priority": p} for n, t, p, _ in cols]
    rows = []
    for obj in items:
        cells = [meta.name(obj)] + [_cell_value(get(obj)) for _, _, _, get in cols]
        rows.append(
            {
                "cells": cells,
                "object": {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": f"meta.k8s.io/{table_version}",
                    "metadata": obj.get("metadata") or {},
                },
            }
        )
    list_meta = dict(body.get("metadata") or {}) if is_list else {"resourceVersion": meta.resource_version(body)}
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{table_version}",
        "metadata": list_meta,
        "columnDefinitions": definitions,
        "rows": rows,
    }


def _cell_value(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    import orjson

    return orjson.dumps(value).decode()
