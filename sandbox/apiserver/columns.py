"""Table columns as kube-apiserver's printers define them: a ``Column`` (definition + the function computing its
cell), the Name and Age columns, and the formatting helpers the printers share (apimachinery's HumanDuration,
label selectors, template containers)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from apis import meta

__all__ = [
    "AGE",
    "NAME",
    "Cell",
    "Column",
    "age",
    "format_labels",
    "human_duration",
    "int_of",
    "label_selector",
    "name_of",
    "since",
    "spec_of",
    "status_of",
    "template_containers",
]

Cell = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Column:
    """One Table column: its definition and the function computing its cell from an object."""

    name: str
    type: str
    cell: Cell
    priority: int = 0
    format: str = ""
    description: str = ""

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description or self.name,
            "priority": self.priority,
        }


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


def since(timestamp: object) -> str:
    """translateTimestampSince: the time since an RFC 3339 timestamp, ``<unknown>`` when unset."""
    if not isinstance(timestamp, str) or not timestamp:
        return "<unknown>"
    try:
        return human_duration((datetime.now(timezone.utc) - meta.parse_time(timestamp)).total_seconds())
    except ValueError:
        return "<invalid>"


def age(obj: Mapping[str, Any]) -> str:
    return since(meta.creation_timestamp(obj))


def name_of(obj: Mapping[str, Any]) -> str:
    return meta.name(obj)


def spec_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def status_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("status") or {}


def int_of(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


NAME = Column("Name", "string", name_of, format="name", description="Name must be unique within a namespace.")
AGE = Column("Age", "string", age, description="CreationTimestamp: when this object was created.")


def template_containers(template_path: tuple[str, ...]) -> tuple[Column, Column]:
    """The wide ``Containers`` and ``Images`` columns of a kind with a pod template at ``spec.<path>``."""

    def containers(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        cur: Any = spec_of(obj)
        for part in template_path:
            cur = cur.get(part) if isinstance(cur, Mapping) else None
        return [c for c in ((cur or {}).get("containers") or []) if isinstance(c, Mapping)]

    return (
        Column("Containers", "string", lambda o: ",".join(c.get("name", "") for c in containers(o)), priority=1,
               description="Names of each container in the template."),
        Column("Images", "string", lambda o: ",".join(c.get("image", "") for c in containers(o)), priority=1,
               description="Images referenced by each container in the template."),
    )


def label_selector(selector: object, empty: str = "<none>") -> str:
    """metav1.FormatLabelSelector: ``a=b,c in (x)``; ``<none>`` for an empty one, ``<error>`` for a bad one."""
    if not isinstance(selector, Mapping):
        return empty
    try:
        text = str(meta.selector_from_label_selector(selector))
    except ValueError:
        return "<error>"
    return text or empty


def format_labels(labels: object) -> str:
    """labels.FormatLabels: ``a=b,c=d`` sorted by key, ``<none>`` when empty."""
    if not isinstance(labels, Mapping) or not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))
