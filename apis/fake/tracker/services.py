"""What the Service strategy and ClusterIP allocator of kube-apiserver do to a Service before it is stored:

- create: ``spec.type`` defaults to ``ClusterIP``; a Service of any type but ExternalName without a
  ``spec.clusterIP`` (or with ``""``) gets the next free address of ``10.96.0.0/12`` (from ``10.96.0.10``;
  ``10.96.0.1`` is the ``kubernetes`` Service's); ``"None"`` (headless) is kept; ``spec.clusterIPs`` mirrors it.
- update: an update that leaves ``clusterIP``/``clusterIPs`` out keeps the allocated ones (``patchAllocatedValues``);
  one that changes only ``clusterIP`` moves ``clusterIPs[0]`` along, so that immutability reports it there.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["allocate_cluster_ip", "keep_allocated_values"]

_FIRST = ipaddress.IPv4Address("10.96.0.10")
_LAST = ipaddress.IPv4Address("10.111.255.254")
_EXTERNAL_NAME = "ExternalName"


def allocate_cluster_ip(service: dict[str, Any], existing: Iterable[Mapping[str, Any]]) -> None:
    """Default ``spec.type`` and allocate ``spec.clusterIP(s)`` on a new Service, in place."""
    spec = service.get("spec")
    if not isinstance(spec, dict):
        spec = service["spec"] = {}
    spec.setdefault("type", "ClusterIP")
    if spec["type"] == _EXTERNAL_NAME:
        return
    if not spec.get("clusterIP"):
        used = {(s.get("spec") or {}).get("clusterIP") for s in existing}
        address = _FIRST
        while str(address) in used and address < _LAST:
            address += 1
        spec["clusterIP"] = str(address)
    if not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]


def keep_allocated_values(new: dict[str, Any], old: Mapping[str, Any]) -> None:
    """Carry the old Service's type and allocated addresses into an update that leaves them out, in place."""
    new_spec, old_spec = new.get("spec"), old.get("spec") or {}
    if not isinstance(new_spec, dict):
        return
    if not new_spec.get("type") and old_spec.get("type"):
        new_spec["type"] = old_spec["type"]
    if new_spec.get("type") == _EXTERNAL_NAME or not old_spec.get("clusterIP"):
        return
    if not new_spec.get("clusterIP"):
        new_spec["clusterIP"] = old_spec["clusterIP"]
    old_ips = list(old_spec.get("clusterIPs") or [old_spec["clusterIP"]])
    if not new_spec.get("clusterIPs"):
        same = new_spec["clusterIP"] == old_spec["clusterIP"]
        new_spec["clusterIPs"] = old_ips if same else [new_spec["clusterIP"]]
    elif new_spec["clusterIP"] != old_spec["clusterIP"] and new_spec["clusterIPs"] == old_ips:
        new_spec["clusterIPs"] = [new_spec["clusterIP"], *old_ips[1:]]
