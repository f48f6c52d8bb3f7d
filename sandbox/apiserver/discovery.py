"""Discovery documents of the sandbox API server (``/version``, ``/api``, ``/apis``, resource lists).

Built on every request from the tracker's served resources, so CRDs registered at run time show up at once. Only
the legacy (unaggregated) discovery format is served, with ``Content-Type: application/json``; clients that ask for
aggregated discovery (``apidiscovery.k8s.io/v2``) fall back to it, as they do against older servers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from apis.resources import ResourceInfo

__all__ = [
    "SERVER_MAJOR",
    "SERVER_MINOR",
    "SERVER_GIT_VERSION",
    "version_info",
    "core_api_versions",
    "group_list",
    "api_group",
    "resource_list",
    "version_priority",
]

SERVER_MAJOR = "1"
SERVER_MINOR = "30"
SERVER_GIT_VERSION = f"v{SERVER_MAJOR}.{SERVER_MINOR}.0-sandbox"

_SUBRESOURCE_VERBS = {
    "status": ["get", "patch", "update"], "scale": ["get", "patch", "update"], "log": ["get"], "token": ["create"]
}
# Subresources of another kind than their object: (group, version, kind) as discovery reports them.
_SUBRESOURCE_KINDS = {"scale": ("autoscaling", "v1", "Scale"), "token": ("authentication.k8s.io", "v1", "TokenRequest")}
# Resources listed in the "all" category, as a real server does (``kubectl get all``).
_ALL_CATEGORY = {
    ("", "pods"), ("", "services"), ("apps", "deployments"), ("apps", "replicasets"), ("batch", "jobs"),
    ("batch", "cronjobs"), ("autoscaling", "horizontalpodautoscalers"),
}


def version_info() -> dict[str, Any]:
    """The ``/version`` document (version.Info)."""
    return {
        "major": SERVER_MAJOR,
        "minor": SERVER_MINOR,
        "gitVersion": SERVER_GIT_VERSION,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.22.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def core_api_versions(server_address: str) -> dict[str, Any]:
    """``/api`` (APIVersions)."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key in Kubernetes version priority: GA > beta > alpha, higher numbers first; others last, by name."""
    m = _VERSION_RE.match(version)
    if not m:
        return (3, 0, 0, version)
    major, level, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[level]
    return (rank, -major, -minor, "")


def _groups(infos: Iterable[ResourceInfo]) -> dict[str, list[str]]:
    versions: dict[str, set[str]] = {}
    for info in infos:
        versions.setdefault(info.gvr.group, set()).add(info.gvr.version)
    return {g: sorted(vs, key=version_priority) for g, vs in versions.items()}


def _group_entry(group: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}


def group_list(infos: Iterable[ResourceInfo]) -> dict[str, Any]:
    """``/apis`` (APIGroupList): every named group served, CRD groups included, sorted by name."""
    groups = _groups(infos)
    entries = [_group_entry(g, vs) for g, vs in sorted(groups.items()) if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": entries}


def api_group(infos: Iterable[ResourceInfo], group: str) -> dict[str, Any] | None:
    """``/apis/<group>`` (APIGroup), or None when no resource of that group is served."""
    versions = _groups(infos).get(group)
    if not group or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(group, versions)}


def resource_list(infos: Iterable[ResourceInfo], group: str, version: str) -> dict[str, Any] | None:
    """``/api/v1`` or ``/apis/<group>/<version>`` (APIResourceList), or None when nothing is served there."""
    resources: list[dict[str, Any]] = []
    for info in sorted(infos, key=lambda i: i.gvr.resource):
        if info.gvr.group != group or info.gvr.version != version:
            continue
        entry: dict[str, Any] = {
            "name": info.gvr.resource,
            "singularName": info.singular or info.kind.lower(),
            "namespaced": info.namespaced,
            "kind": info.kind,
            "verbs": sorted(info.verbs),
        }
        if info.short_names:
            entry["shortNames"] = list(info.short_names)
        if (group, info.gvr.resource) in _ALL_CATEGORY:
            entry["categories"] = ["all"]
        resources.append(entry)
        for sub in info.subresources:
            verbs = _SUBRESOURCE_VERBS.get(sub)
            if verbs is None:  # only subresources the sandbox actually serves are advertised
                continue
            sub_entry: dict[str, Any] = {
                "name": f"{info.gvr.resource}/{sub}",
                "singularName": "",
                "namespaced": info.namespaced,
                "kind": info.kind,
                "verbs": verbs,
            }
            if sub in _SUBRESOURCE_KINDS:
                sub_group, sub_version, sub_entry["kind"] = _SUBRESOURCE_KINDS[sub]
                sub_entry.update(group=sub_group, version=sub_version)
            resources.append(sub_entry)
    if not resources:
        return None
    group_version = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}
