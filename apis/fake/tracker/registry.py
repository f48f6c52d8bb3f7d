"""Which resources a tracker serves: everything in ``apis.resources`` plus what the CRDs written to it serve."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ... import meta
from ... import resources as res
from ...errors import NotFoundError
from ...logs import get_logger
from ...resources import GroupVersionResource, ResourceInfo
from .crd import ServedVersion, parse_crd

__all__ = ["ResourceRegistry", "BUILTIN_GROUPS", "NOT_SERVED"]

log = get_logger(__name__)

NOT_SERVED = "the server could not find the requested resource"
# API groups served by kube-apiserver itself; every other group is a custom resource (no strategic merge patch).
BUILTIN_GROUPS = frozenset(
    {
        "", "apps", "batch", "autoscaling", "policy", "coordination.k8s.io", "apiextensions.k8s.io",
        "rbac.authorization.k8s.io", "networking.k8s.io", "storage.k8s.io", "events.k8s.io", "discovery.k8s.io",
        "admissionregistration.k8s.io", "scheduling.k8s.io", "node.k8s.io", "certificates.k8s.io",
        "apiregistration.k8s.io", "flowcontrol.apiserver.k8s.io", "resource.k8s.io",
    }
)

# GVRs that exist only because trackers registered a CRD for them (process-wide, like apis.resources), with how
# many trackers serve each: the last one to stop serving it removes it from apis.resources, so that creating and
# deleting CRDs does not grow the process.
_CRD_ONLY_GVRS: Counter[GroupVersionResource] = Counter()
_crd_only_lock = threading.Lock()


def _hold(info: ResourceInfo, newly_served: bool) -> None:
    """A tracker serves ``info`` for a CRD (``newly_served``: it did not before)."""
    with _crd_only_lock:
        if newly_served and (info.gvr in _CRD_ONLY_GVRS or not _registered(info.gvr)):
            _CRD_ONLY_GVRS[info.gvr] += 1
        res.register(info)


def _release(gvr: GroupVersionResource) -> bool:
    """A tracker stopped serving ``gvr``'s CRD; True when ``gvr`` exists only through CRDs."""
    with _crd_only_lock:
        if gvr not in _CRD_ONLY_GVRS:
            return False
        _CRD_ONLY_GVRS[gvr] -= 1
        if _CRD_ONLY_GVRS[gvr] <= 0:
            del _CRD_ONLY_GVRS[gvr]
            res.unregister(gvr)
        return True


def _registered(gvr: GroupVersionResource) -> bool:
    try:
        res.lookup(gvr)
    except KeyError:
        return False
    return True


class ResourceRegistry:
    """The resources of one tracker; thread-safe (its own lock, never held while calling out)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._crds: dict[GroupVersionResource, ServedVersion] = {}
        self._crd_gvrs: dict[str, list[GroupVersionResource]] = {}  # CRD name → the GVRs it serves here
        self._unserved: set[GroupVersionResource] = set()  # built-in resources whose CRD was deleted here

    def resource_info(self, gvr: GroupVersionResource, subresource: str | None = None) -> ResourceInfo:
        """The served resource; ``NotFoundError`` when this tracker does not serve it (or the subresource of it:
        only ``status`` is a part of the object the tracker writes)."""
        if subresource is not None:
            info = self.resource_info(gvr)
            if subresource != "status" or not info.has_status:
                details = {"group": gvr.group, "kind": f"{gvr.resource}/{subresource}"}
                raise NotFoundError(404, "NotFound", NOT_SERVED, details=details)
            return info
        with self._lock:
            served = self._crds.get(gvr)
            if served is not None:
                return served.info
            unserved = gvr in self._unserved
        if not unserved and gvr not in _CRD_ONLY_GVRS:
            try:
                return res.lookup(gvr)
            except KeyError:
                pass
        raise NotFoundError(404, "NotFound", NOT_SERVED, details={"group": gvr.group, "kind": gvr.resource})

    def served_resources(self) -> list[ResourceInfo]:
        with self._lock:
            out = {i.gvr: i for i in res.all_resources() if i.gvr not in self._unserved and i.gvr not in _CRD_ONLY_GVRS}
            out.update({gvr: sv.info for gvr, sv in self._crds.items()})
        return sorted(out.values(), key=lambda i: (i.gvr.group, i.gvr.version, i.gvr.resource))

    def info_for_kind(self, api_version: str, kind: str) -> ResourceInfo:
        """The served resource of ``kind`` in ``api_version``; ``NotFoundError`` "no matches for kind" otherwise."""
        with self._lock:
            for served in self._crds.values():
                if served.info.gvr.api_version == api_version and served.info.kind == kind:
                    return served.info
        try:
            return self.resource_info(res.lookup_kind(api_version, kind).gvr)
        except (KeyError, NotFoundError):
            raise NotFoundError(f'no matches for kind "{kind}" in version "{api_version}"') from None

    def is_custom(self, info: ResourceInfo) -> bool:
        """Whether ``info`` is a custom resource (served by a CRD, or of a group kube-apiserver does not serve)."""
        with self._lock:
            return info.gvr in self._crds or info.gvr.group not in BUILTIN_GROUPS

    def crd_schema(self, gvr: GroupVersionResource) -> dict[str, Any] | None:
        """The openAPIV3Schema a CRD declares for ``gvr`` (None for built-in kinds and schemaless CRDs)."""
        with self._lock:
            served = self._crds.get(gvr)
        return served.schema if served is not None else None

    def register_crd(self, crd: dict[str, Any]) -> list[ResourceInfo]:
        """Serve every served version of ``crd`` (idempotent; versions it no longer serves stop being served);
        422 ``InvalidError`` for a malformed CRD."""
        served = parse_crd(crd)
        spec = crd.get("spec") or {}
        name = meta.name(crd) or f"{(spec.get('names') or {}).get('plural')}.{spec.get('group')}"
        with self._lock:
            before = set(self._crd_gvrs.get(name, ()))
        for sv in served:
            _hold(sv.info, sv.info.gvr not in before)
        with self._lock:
            gone = before - {sv.info.gvr for sv in served}
            for gvr in gone:
                self._crds.pop(gvr, None)
            for sv in served:
                self._crds[sv.info.gvr] = sv
                self._unserved.discard(sv.info.gvr)
            self._crd_gvrs[name] = [sv.info.gvr for sv in served]
        self._stop_serving(gone)
        log.info("registered CRD", key=name, versions=[sv.info.gvr.version for sv in served])
        return [sv.info for sv in served]

    def crd_resources(self, crd_name: str) -> list[ResourceInfo]:
        """The resources the CRD named ``crd_name`` serves here."""
        with self._lock:
            return [self._crds[gvr].info for gvr in self._crd_gvrs.get(crd_name, ()) if gvr in self._crds]

    def unregister_crd(self, crd_name: str) -> None:
        """Stop serving what the CRD named ``crd_name`` served (its objects must be removed before)."""
        with self._lock:
            gone = self._crd_gvrs.pop(crd_name, [])
            for gvr in gone:
                self._crds.pop(gvr, None)
        self._stop_serving(gone)
        log.info("unregistered CRD", key=crd_name)

    def _stop_serving(self, gvrs: Iterable[GroupVersionResource]) -> None:
        for gvr in gvrs:
            if not _release(gvr):  # a built-in resource: mask it here (a bounded set)
                with self._lock:
                    self._unserved.add(gvr)
