"""The object store at the heart of the tracker: objects by resource and key, a revision counter (etcd's role)
and the uid and owner indexes the garbage collector looks objects up by.

Not thread-safe: the tracker's lock guards every call. Stored objects are never mutated once committed; the
mappings handed out are the live ones and must not be modified by callers.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ... import meta
from ...resources import GroupVersionResource
from ...watch import DELETED

__all__ = ["ObjectKey", "ObjectStore"]

ObjectKey = tuple[GroupVersionResource, str, str]  # (gvr, namespace, name)
_EMPTY: Mapping[tuple[str, str], dict[str, Any]] = {}


class ObjectStore:
    """Objects of every resource, their revision counter and the uid → key and owner uid → dependents indexes."""

    def __init__(self) -> None:
        self.revision = 0
        self._objects: dict[GroupVersionResource, dict[tuple[str, str], dict[str, Any]]] = {}
        self._uids: dict[str, ObjectKey] = {}
        self._dependents: dict[str, set[ObjectKey]] = {}
        self._orphans: dict[tuple[GroupVersionResource, str], set[str]] = {}  # (gvr, ns) → names without controller

    # -- reads ------------------------------------------------------------------------------------------------------
    def get(self, gvr: GroupVersionResource, namespace: str, name: str) -> dict[str, Any] | None:
        return self._objects.get(gvr, _EMPTY).get((namespace, name))

    def get_by_key(self, key: ObjectKey) -> dict[str, Any] | None:
        return self.get(*key)

    def objects(self, gvr: GroupVersionResource) -> Mapping[tuple[str, str], dict[str, Any]]:
        """The objects of ``gvr`` by (namespace, name); the live mapping, read-only for callers."""
        return self._objects.get(gvr, _EMPTY)

    def key_for_uid(self, uid: str) -> ObjectKey | None:
        return self._uids.get(uid)

    def has_uid(self, uid: str) -> bool:
        return uid in self._uids

    def dependents(self, owner_uid: str) -> Collection[ObjectKey]:
        """Keys of the objects whose ownerReferences name ``owner_uid`` (a copy)."""
        return set(self._dependents.get(owner_uid, ()))

    def claimable(self, gvr: GroupVersionResource, namespace: str, owner_uid: str) -> list[Mapping[str, Any]]:
        """The objects of ``gvr`` in ``namespace`` that name ``owner_uid`` as an owner or have no controller, by
        name (looked up by index: what a controller may claim)."""
        names = set(self._orphans.get((gvr, namespace), ()))
        names.update(name for g, ns, name in self._dependents.get(owner_uid, ()) if g == gvr and ns == namespace)
        objects = self._objects.get(gvr, _EMPTY)
        return [objects[(namespace, name)] for name in sorted(names) if (namespace, name) in objects]

    def absent_owner_uids(self) -> list[str]:
        """Owner uids that some object references but no stored object has."""
        return [uid for uid in self._dependents if uid not in self._uids]

    def find(self, group: str, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        """The object named so in any served version of ``group``/``resource`` (they hold the same objects)."""
        for gvr, objects in self._objects.items():
            if gvr.group == group and gvr.resource == resource:
                obj = objects.get((namespace, name))
                if obj is not None:
                    return obj
        return None

    # -- writes -----------------------------------------------------------------------------------------------------
    def commit(self, gvr: GroupVersionResource, new: dict[str, Any], prev: dict[str, Any] | None, event_type: str) -> int:
        """Store ``new`` (drop it for DELETED) at the next revision, stamped on it as its resourceVersion; keep the
        indexes. Returns the revision."""
        self.revision += 1
        md = new["metadata"]
        md["resourceVersion"] = str(self.revision)
        key = (md.get("namespace") or "", md["name"])
        okey: ObjectKey = (gvr, key[0], key[1])
        if prev is not None:
            for ref in meta.owner_references(prev):
                deps = self._dependents.get(ref.get("uid", ""))
                if deps is not None:
                    deps.discard(okey)
                    if not deps:
                        del self._dependents[ref.get("uid", "")]
        orphans = self._orphans.get((gvr, key[0]))
        if orphans is not None:
            orphans.discard(key[1])
            if not orphans:
                del self._orphans[(gvr, key[0])]
        if event_type == DELETED:
            self._objects.get(gvr, {}).pop(key, None)
            self._uids.pop(md.get("uid", ""), None)
        else:
            if meta.get_controller_of(new) is None:
                self._orphans.setdefault((gvr, key[0]), set()).add(key[1])
            self._objects.setdefault(gvr, {})[key] = new
            self._uids[md["uid"]] = okey
            for ref in meta.owner_references(new):
                if ref.get("uid"):
                    self._dependents.setdefault(ref["uid"], set()).add(okey)
        return self.revision

    def drop_resource(self, gvr: GroupVersionResource) -> None:
        """Forget every object of ``gvr`` (its CRD is gone; they were removed one by one before)."""
        self._objects.pop(gvr, None)
        for key in [k for k in self._orphans if k[0] == gvr]:
            del self._orphans[key]
