"""Sedna's worker labels and selectors: ``<kind>.<group>/name``, ``/uid`` and ``/worker-type``.

For a JointInferenceService ``ji1`` the prefix is ``jointinferenceservice.sedna.io/``. The name label is the object's
name when that is a valid label value, else ``names.label_value`` of it (a prefix and a hash: object names may be up
to 253 characters, label values only 63), so every kind's selectors stay valid whatever the name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta

from .names import label_value

__all__ = ["label_prefix", "generate_labels", "generate_selector", "generate_worker_selector"]


def label_prefix(obj: Mapping[str, Any]) -> str:
    """``lower(Kind + "." + group + "/")`` from the object's ``kind`` and ``apiVersion``."""
    kind = obj.get("kind") or ""
    api_version = obj.get("apiVersion") or ""
    if not kind:
        raise ValueError(f"object {meta.namespace(obj)}/{meta.name(obj)} has no kind: cannot build labels")
    group = api_version.rpartition("/")[0]
    return f"{kind}.{group}/".lower()


def generate_labels(obj: Mapping[str, Any], worker_type: str = "") -> dict[str, str]:
    """The labels every worker of ``obj`` carries (name, uid and, with ``worker_type``, the lowercased type)."""
    prefix = label_prefix(obj)
    out = {prefix + "name": label_value(meta.name(obj)), prefix + "uid": meta.uid(obj)}
    if worker_type:
        out[prefix + "worker-type"] = label_value(worker_type.lower())
    return out


def generate_selector(obj: Mapping[str, Any]) -> meta.Selector:
    """Selects every worker of ``obj`` (name + uid)."""
    return meta.selector_from_set(generate_labels(obj))


def generate_worker_selector(obj: Mapping[str, Any], worker_type: str) -> meta.Selector:
    """Selects the workers of ``obj`` of one type."""
    return meta.selector_from_set(generate_labels(obj, worker_type))
