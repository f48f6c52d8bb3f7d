"""Deletion, finalizers and ownerReference garbage collection of the object tracker (run synchronously, under
the tracker's lock, the way kube-controller-manager's garbage collector would eventually act):

- An object with finalizers is only marked (``deletionTimestamp``, ``deletionGracePeriodSeconds: 0``, generation
  bumped) and goes away when an update removes its last finalizer.
- Background (default): the owner goes first; then every object whose owners are all gone is deleted
  (recursively), and an object that still has a live owner just loses its references to the gone ones.
- Foreground: the owner is marked with the ``foregroundDeletion`` finalizer, its dependents are deleted
  (foreground, recursively) and the owner is removed once no dependent with ``blockOwnerDeletion`` remains.
- Orphan: the dependents lose their reference to the owner, then the owner is deleted.
- Objects whose owners are absent (dangling references) are collected after any deletion, and right after a
  create or an update that gives them such references (they get their ADDED/MODIFIED, then DELETED events): an
  object is deleted when every owner is absent, and loses only the dangling references when some owner exists.
  An owner is looked up as kube-controller-manager's garbage collector does: by the resource its apiVersion and
  kind map to, in the DEPENDENT's namespace (cluster-wide for cluster-scoped kinds), by name, and it is present
  only under the referenced uid (a same-name object with another uid, or one in another namespace, is absent).
  A reference that cannot be resolved (a kind this server does not serve, or a namespaced owner of a
  cluster-scoped object) is never treated as absent: the dependent is left untouched, as the real collector
  logs the error and retries. Seeding with ``add`` does not collect (owners may be seeded later).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Protocol

from ... import meta
from ...errors import NotFoundError
from ...resources import NAMESPACES, GroupVersionResource, ResourceInfo
from ...watch import DELETED, MODIFIED
from .store import ObjectKey

__all__ = ["GarbageCollector", "OwnerIndex", "KindResolver", "Commit", "FOREGROUND_FINALIZER", "marked_for_deletion"]

FOREGROUND_FINALIZER = "foregroundDeletion"
OWNER_PRESENT, OWNER_ABSENT, OWNER_UNRESOLVABLE = "present", "absent", "unresolvable"


class OwnerIndex(Protocol):
    """The reads the collector needs from the store."""

    def get_by_key(self, key: ObjectKey) -> dict[str, Any] | None: ...

    def key_for_uid(self, uid: str) -> ObjectKey | None: ...

    def dependents(self, owner_uid: str) -> Collection[ObjectKey]: ...

    def absent_owner_uids(self) -> list[str]: ...

    def find(self, group: str, resource: str, namespace: str, name: str) -> dict[str, Any] | None: ...


class KindResolver(Protocol):
    """How the collector maps resources and ownerReference kinds to served resources."""

    def resource_info(self, gvr: GroupVersionResource) -> ResourceInfo: ...

    def info_for_kind(self, api_version: str, kind: str) -> ResourceInfo: ...


# Writes ``new`` (MODIFIED) or drops it (DELETED) with ``prev`` as the previous state; returns the committed object.
Commit = Callable[[ResourceInfo, dict[str, Any], dict[str, Any] | None, str], dict[str, Any]]


def _key_order(key: ObjectKey) -> tuple[str, str, str]:
    return (str(key[0]), key[1], key[2])


def marked_for_deletion(
    info: ResourceInfo, obj: dict[str, Any], extra_finalizer: str | None = None
) -> dict[str, Any]:
    """A copy of ``obj`` as a deletion that waits for finalizers leaves it: ``deletionTimestamp`` set, generation
    bumped, ``extra_finalizer`` added; a Namespace's phase becomes ``Terminating`` (as kube-apiserver's namespace
    storage marks it)."""
    new = meta.deep_copy(obj)
    if info.gvr == NAMESPACES:
        new["status"] = {**(new.get("status") or {}), "phase": "Terminating"}
    md = new["metadata"]
    md["deletionTimestamp"] = meta.now_rfc3339()
    md["deletionGracePeriodSeconds"] = 0
    if extra_finalizer and extra_finalizer not in (md.get("finalizers") or []):
        md["finalizers"] = [*(md.get("finalizers") or []), extra_finalizer]
    if "generation" in md:
        md["generation"] = int(md["generation"]) + 1
    return new


class GarbageCollector:
    """Deletion paths of the tracker; every method expects the tracker lock to be held.

    ``on_removed(info, final)`` is called after an object is gone for good, before dependents are collected (the
    tracker stops serving a deleted CRD's resources there).
    """

    def __init__(
        self,
        index: OwnerIndex,
        resolver: KindResolver,
        commit: Commit,
        on_removed: Callable[[ResourceInfo, dict[str, Any]], None],
    ) -> None:
        self._index = index
        self._resolver = resolver
        self._commit = commit
        self._on_removed = on_removed
        self._running = False

    def _owner_state(self, dependent_namespace: str, ref: Mapping[str, Any]) -> str:
        """``OWNER_PRESENT``, ``OWNER_ABSENT`` or ``OWNER_UNRESOLVABLE`` for one ownerReference of a dependent."""
        try:
            info = self._resolver.info_for_kind(str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
        except NotFoundError:
            return OWNER_UNRESOLVABLE  # the real collector fails the REST mapping and retries later
        if info.namespaced and not dependent_namespace:
            return OWNER_UNRESOLVABLE  # invalid reference; the real collector gives up without deleting
        ns = dependent_namespace if info.namespaced else ""
        owner = self._index.find(info.gvr.group, info.gvr.resource, ns, str(ref.get("name") or ""))
        if owner is None:
            return OWNER_ABSENT
        return OWNER_PRESENT if meta.uid(owner) == ref.get("uid") else OWNER_ABSENT

    def _by_uid(self, uid: str) -> tuple[ResourceInfo, dict[str, Any]] | None:
        key = self._index.key_for_uid(uid)
        if key is None:
            return None
        obj = self._index.get_by_key(key)
        return (self._resolver.resource_info(key[0]), obj) if obj is not None else None

    def delete(self, info: ResourceInfo, obj: dict[str, Any], policy: str, dry_run: bool = False) -> dict[str, Any]:
        """Delete ``obj`` with ``policy``; returns the final object or, while it lingers, its marked state.
        ``dry_run``: returns what a deletion would, writing and collecting nothing."""
        md = obj["metadata"]
        if md.get("deletionTimestamp"):
            return obj  # already being deleted
        uid = md["uid"]
        foreground = policy == "Foreground" and bool(self._index.dependents(uid))
        if dry_run:
            if foreground or meta.finalizers(obj):
                return marked_for_deletion(info, obj, FOREGROUND_FINALIZER if foreground else None)
            return obj
        if policy == "Orphan":
            self._orphan_dependents(uid)
        elif foreground:
            marked = self._mark_deleted(info, obj, FOREGROUND_FINALIZER)
            for key in sorted(self._index.dependents(uid), key=_key_order):
                dependent = self._index.get_by_key(key)
                if dependent is not None:
                    self.delete(self._resolver.resource_info(key[0]), dependent, "Foreground")
            self._finish_foreground(uid)
            return marked  # as the API server answers a foreground delete: the object marked for deletion
        if meta.finalizers(obj):
            return self._mark_deleted(info, obj)
        return self.remove(info, obj, obj)

    def _mark_deleted(self, info: ResourceInfo, obj: dict[str, Any], extra_finalizer: str | None = None) -> dict[str, Any]:
        return self._commit(info, marked_for_deletion(info, obj, extra_finalizer), obj, MODIFIED)

    def remove(self, info: ResourceInfo, final: dict[str, Any], prev: dict[str, Any]) -> dict[str, Any]:
        """Drop the object for good (DELETED event carrying ``final`` at a new RV), then collect garbage."""
        final = {**final, "metadata": dict(final["metadata"])}
        committed = self._commit(info, final, prev, DELETED)
        self._on_removed(info, prev)
        for ref in meta.owner_references(prev):
            self._finish_foreground(ref.get("uid", ""))
        self._collect_garbage()
        return committed

    def after_update(self, info: ResourceInfo, new: dict[str, Any], old: dict[str, Any]) -> None:
        """An owner waiting in foreground deletion may be done when a dependent dropped its reference; new
        references to absent owners are collected as after a create."""
        kept = {r.get("uid") for r in meta.owner_references(new)}
        old_uids = set()
        for ref in meta.owner_references(old):
            old_uids.add(ref.get("uid"))
            if ref.get("uid") not in kept:
                self._finish_foreground(ref.get("uid", ""))
        if kept - old_uids:
            self.collect_if_dangling(info, new)

    def collect_if_dangling(self, info: ResourceInfo, obj: dict[str, Any]) -> bool:
        """Apply the garbage collector's rule to one object with owner references: delete it when all of its
        owners are absent, drop the dangling references when only some are; leave it alone when any reference
        cannot be resolved. True when something was written."""
        refs = meta.owner_references(obj)
        if not refs or meta.deletion_timestamp(obj):
            return False
        states = [self._owner_state(meta.namespace(obj), r) for r in refs]
        if OWNER_UNRESOLVABLE in states:
            return False
        alive = [r for r, state in zip(refs, states, strict=True) if state == OWNER_PRESENT]
        if len(alive) == len(refs):
            return False
        if alive:
            new = meta.deep_copy(obj)
            new["metadata"]["ownerReferences"] = alive
            self._commit(info, new, obj, MODIFIED)
        else:
            self.delete(info, obj, "Background")
        return True

    def _finish_foreground(self, owner_uid: str) -> None:
        found = self._by_uid(owner_uid)
        if found is None:
            return
        info, owner = found
        fins = meta.finalizers(owner)
        if not meta.deletion_timestamp(owner) or FOREGROUND_FINALIZER not in fins:
            return
        for key in self._index.dependents(owner_uid):
            dependent = self._index.get_by_key(key)
            if dependent is None:
                continue
            for ref in meta.owner_references(dependent):
                if ref.get("uid") == owner_uid and ref.get("blockOwnerDeletion"):
                    return  # still blocked
        new = meta.deep_copy(owner)
        remaining = [f for f in fins if f != FOREGROUND_FINALIZER]
        if remaining:
            new["metadata"]["finalizers"] = remaining
            self._commit(info, new, owner, MODIFIED)
        else:
            new["metadata"].pop("finalizers", None)
            self.remove(info, new, owner)

    def _orphan_dependents(self, owner_uid: str) -> None:
        for key in sorted(self._index.dependents(owner_uid), key=_key_order):
            dependent = self._index.get_by_key(key)
            if dependent is None:
                continue
            new = meta.deep_copy(dependent)
            refs = [r for r in meta.owner_references(dependent) if r.get("uid") != owner_uid]
            if refs:
                new["metadata"]["ownerReferences"] = refs
            else:
                new["metadata"].pop("ownerReferences", None)
            self._commit(self._resolver.resource_info(key[0]), new, dependent, MODIFIED)

    def _collect_garbage(self) -> None:
        """Delete objects all of whose owners are gone; strip references to gone owners from the others."""
        if self._running:
            return  # the sweep already running picks up what this deletion left dangling
        self._running = True
        try:
            progress = True
            while progress:
                progress = False
                for owner_uid in self._index.absent_owner_uids():
                    for key in sorted(self._index.dependents(owner_uid), key=_key_order):
                        dependent = self._index.get_by_key(key)
                        if dependent is not None and self.collect_if_dangling(
                            self._resolver.resource_info(key[0]), dependent
                        ):
                            progress = True
        finally:
            self._running = False
