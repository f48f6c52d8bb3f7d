"""An in-memory object store that behaves like a kube-apiserver (the heart of the fake clientset and the sandbox).

Guarantees (see also ``gc``, ``watchcache`` and ``lister``):
- One global resourceVersion counter across all kinds; every write bumps it and is recorded in a bounded watch
  history (``watch_history`` events). A write that changes nothing is not a write (no new RV, no event).
- create sets uid, creationTimestamp, resourceVersion, ``generation: 1`` (kinds that have one, see ``strategy``),
  expands ``generateName``, fills apiVersion/kind; a create carrying a non-zero resourceVersion fails with 500 as
  etcd3 does, while an apply that creates and ``add`` (seeding, which also keeps a given uid and
  creationTimestamp) drop it.
- update: a given resourceVersion must match (409 Conflict); custom resources and CRDs need one on PUT (422,
  ``strategy``); generation is bumped per ``strategy``; on kinds with
  a status subresource the main resource keeps the stored status and the ``status`` subresource changes nothing
  but status.
- Every write is decoded and validated first (``admission``): a body that does not decode into the kind's Go type
  is a 400 (a patch result: 422 on ``patch``), unknown fields of built-in kinds are dropped, ObjectMeta problems and
  changes to immutable fields are one 422; custom resources are pruned, defaulted and validated against their CRD's
  openAPIV3Schema (``apis.openapi``). A refused write changes nothing. Writing a CustomResourceDefinition registers
  what it serves. A pod's ``spec.nodeName`` changes only through ``bind`` (the ``pods/binding`` subresource).
- Stored objects are never mutated after they are stored, and every object handed out is a copy, except to readers
  that ask for the stored objects themselves and never modify them (``peek``, ``claimable``, ``list(copy=False)``,
  a watch's ``next_events(copy=False)``: the sandbox API server, which only serializes them).
- ``dry_run`` on create, update, patch and delete runs every check and answers what the write would, committing
  nothing (no RV bump, event, GC, reserved name): a created object has no resourceVersion, an updated one the current.
- Events (core and events.k8s.io) are deleted ``event_ttl`` seconds after their last write (kube-apiserver's
  ``--event-ttl``, default 1 h; ``ttl``), at the next write or ``expire_events``; watchers get DELETED.
- What is stored is bounded (``limits``): depth, JSON values, 3 MiB per object. With ``cluster_limits`` also what
  a cluster refuses (``limits``): an object etcd would not store (over 1.5 MiB: 500 ``etcdserver:
  request is too large``, checked as the write commits, so a dry run passes as on a cluster) and ConfigMap or
  Secret data over 1 MiB (422).
- A list or watch at a resourceVersion newer than the current one waits up to ``too_large_rv_wait`` seconds for
  it, then fails as kube-apiserver's watch cache does: 504 Timeout "Too large resource version" with the cause
  ``ResourceVersionTooLarge`` (raised by ``list``; one ERROR event, then the end, for ``watch``).

Simplifications, on purpose: "apply" patches are a strategic merge of the applied configuration for built-in kinds
and a JSON merge for custom resources (no field managers, no conflicts), and create the object when it is missing
(``patch_with_outcome`` tells whether it did); strategic merge patches on custom resources are refused with 415 as
kube-apiserver does; namespaces are not required to exist (the sandbox API server's NamespaceLifecycle admission
checks that) and deleting one does not empty it.
"""

from __future__ import annotations

import builtins
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from ... import meta
from ... import resources as res
from ...client import PatchBody
from ...errors import (
    ApiError,
    BadRequestError,
    RequestTimeoutError,
    new_already_exists,
    new_conflict,
    new_invalid,
    new_not_found,
)
from ...resources import GroupVersionResource, ResourceInfo
from ...watch import ADDED, DELETED, MODIFIED, ListOptions
from .admission import (
    admit_create,
    admit_update,
    check_decodes,
    check_type_meta,
    resolve_namespace,
    unknown_fields,
)
from .filter import ObjectFilter
from .gc import GarbageCollector
from .limits import bounded_copy, check_storable
from .lister import parse_rv, select_page
from .patch import PatchOutcome, apply_patch, decode_patch
from .registry import ResourceRegistry
from .services import allocate_cluster_ip, keep_allocated_values
from .store import ObjectStore
from .strategy import (
    assign_name,
    bound_pod,
    check_conditional_update,
    check_no_new_finalizers,
    check_no_resource_version_on_create,
    check_preconditions,
    check_propagation_policy,
    generation_content,
    has_generation,
    without_rv,
)
from .ttl import DEFAULT_EVENT_TTL, EventExpiry
from .watch import HistoryEvent, TrackerWatch
from .watchcache import WatchCache

__all__ = ["ObjectTracker", "PatchOutcome"]

CRDS = res.CUSTOM_RESOURCE_DEFINITIONS
_MODIFIED_WHY = "the object has been modified; please apply your changes to the latest version and try again"


class ObjectTracker:
    """Thread-safe store of API objects with API-server semantics; see the module doc for the guarantees.

    Composed of an ``ObjectStore`` (objects and indexes), a ``ResourceRegistry`` (built-in kinds and CRDs), a
    ``WatchCache`` (history and watchers) and a ``GarbageCollector`` (deletion paths), all under one lock.
    """

    def __init__(
        self,
        watch_history: int = 1000,
        watch_buffer: int = 1000,
        event_ttl: float | None = DEFAULT_EVENT_TTL,
        clock: Callable[[], float] = time.monotonic,
        cluster_limits: bool = False,
    ) -> None:
        if watch_history < 1 or watch_buffer < 1:
            raise ValueError("watch_history and watch_buffer must be at least 1")
        self._lock = threading.RLock()
        self._store = ObjectStore()
        self._registry = ResourceRegistry()
        self._watch_cache = WatchCache(self._lock, watch_history)
        self._gc = GarbageCollector(self._store, self._registry, self._commit, self._on_removed)
        self._event_expiry = EventExpiry(event_ttl, clock, self._store, self._registry.resource_info, self._commit)
        self.watch_buffer = watch_buffer
        self.cluster_limits = cluster_limits  # what etcd and kube-apiserver's validation refuse (module doc)
        self.bookmark_interval = 1.0  # seconds of idleness before a watcher that asked for bookmarks gets one
        self.too_large_rv_wait = 3.0  # seconds a list/watch waits for a future resourceVersion before failing (504)
        # called with (info, object) before a custom resource is stored (created or changed), under the write lock:
        # the lenient pod simulator registers the nodes such an object names
        self.custom_write_observers: list[Callable[[ResourceInfo, dict[str, Any]], None]] = []

    # -- resources --------------------------------------------------------------------------------------------------
    def resource_info(self, gvr: GroupVersionResource) -> ResourceInfo:
        """The served resource; ``NotFoundError`` when this tracker does not serve it."""
        return self._registry.resource_info(gvr)

    def served_resources(self) -> list[ResourceInfo]:
        return self._registry.served_resources()

    def is_custom(self, info: ResourceInfo) -> bool:
        return self._registry.is_custom(info)

    def register_crd(self, crd: dict[str, Any]) -> list[ResourceInfo]:
        """Serve every served version of ``crd`` (idempotent); 422 ``InvalidError`` for a malformed CRD."""
        with self._lock:
            return self._registry.register_crd(crd)

    def unknown_fields(self, gvr: GroupVersionResource, obj: dict[str, Any]) -> list[str]:
        """The paths of the fields of ``obj`` a write of ``gvr`` would drop (for ``fieldValidation`` warnings)."""
        info = self.resource_info(gvr)
        return unknown_fields(info, obj, self._registry.crd_schema(gvr))

    def resource_version(self) -> str:
        with self._lock:
            return str(self._store.revision)

    @property
    def open_watch_count(self) -> int:
        """Open watches: those the tracker still offers events to."""
        with self._lock:
            return self._watch_cache.watcher_count

    # -- the write path ---------------------------------------------------------------------------------------------
    def _commit(self, info: ResourceInfo, new: dict[str, Any], prev: dict[str, Any] | None, etype: str) -> dict[str, Any]:
        """Store (or, for DELETED, drop) ``new`` at the next RV and record the event in the watch cache; Events whose
        TTL ran out are deleted first."""
        if etype != DELETED and self.custom_write_observers and self._registry.is_custom(info):
            for observer in list(self.custom_write_observers):
                observer(info, new)
        self._event_expiry.expire(keep=(info.gvr, meta.namespace(new), meta.name(new)))
        rv = self._store.commit(info.gvr, new, prev, etype)
        self._watch_cache.record(HistoryEvent(rv, info.gvr, etype, new, prev))
        self._event_expiry.written(info.gvr, new, etype)
        return new

    def expire_events(self) -> int:
        """Delete the Events whose TTL (``event_ttl`` seconds after their last write) ran out, as etcd drops a key
        whose lease expired: watchers get DELETED. Every write does this too. Returns how many went."""
        with self._lock:
            return self._event_expiry.expire()

    def _on_removed(self, info: ResourceInfo, final: dict[str, Any]) -> None:
        """A deleted CRD takes what it served with it: every object of those resources is removed first."""
        if info.gvr != CRDS:
            return
        name = meta.name(final)
        for served in self._registry.crd_resources(name):
            objects = self._store.objects(served.gvr)
            for obj in sorted(objects.values(), key=lambda o: (meta.namespace(o), meta.name(o))):
                self._gc.remove(served, obj, obj)
            self._store.drop_resource(served.gvr)
        self._registry.unregister_crd(name)

    # -- create / get / list ----------------------------------------------------------------------------------------
    @staticmethod
    def _decoded(info: ResourceInfo, obj: object, patched: bool = False,
                 unknown: builtins.list[str] | None = None) -> dict[str, Any]:
        """The tracker's own copy of a written ``obj``, within bounds and decoded as ``info``'s kind (unknown fields
        of a built-in kind dropped, their paths added to ``unknown``). Touches nothing shared: no lock needed."""
        if not isinstance(obj, dict):
            raise BadRequestError(f"the object must be a JSON object, got {type(obj).__name__}")
        new = bounded_copy(obj, patched=patched)  # bounds first: a hostile document is never walked twice
        dropped = check_decodes(info, new, patched, drop_unknown=True)
        if unknown is not None:
            unknown.extend(dropped)
        return new

    def add(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Seed an object (a ``…List`` adds each item); like ``create`` but keeps a given uid and creationTimestamp."""
        if not isinstance(obj, dict) or not obj.get("apiVersion") or not obj.get("kind"):
            raise BadRequestError("add: the object needs apiVersion and kind")
        if obj["kind"].endswith("List") and isinstance(obj.get("items"), list):
            return {**obj, "items": [self.add(item) for item in obj["items"]]}
        info = self._registry.info_for_kind(obj["apiVersion"], obj["kind"])
        ns = (meta.namespace(obj) or "default") if info.namespaced else ""
        with self._lock:
            stored = self._create_locked(info, obj, ns, keep_identity=True, reject_rv=False)
        return meta.deep_copy(stored)

    def create(
        self,
        gvr: GroupVersionResource,
        obj: dict[str, Any],
        namespace: str = "",
        dry_run: bool = False,
        *,
        copy: bool = True,
        unknown: list[str] | None = None,
        trusted: bool = False,
    ) -> dict[str, Any]:
        """``copy=False``: the answer is the stored object itself, for a writer that only reads or serializes it;
        ``unknown``: gets the paths of the unknown fields of a built-in kind's body (``fieldValidation=Warn``'s
        warnings) that the decoding check dropped, found by that same walk. ``trusted``: ``obj`` was built in this
        process for this write, well-formed, and is never changed afterwards (the pod simulator's writes): it is
        stored as it is, without the bounds copy and the decoding check; admission still applies."""
        info = self.resource_info(gvr)
        # copied and decoded before the lock: writers (request threads, the pod simulator) wait on each other less
        new = obj if trusted else self._decoded(info, obj, unknown=unknown)
        with self._lock:
            stored = self._create_locked(info, new, namespace, keep_identity=False, reject_rv=True, dry_run=dry_run,
                                         decoded=True)
            if not dry_run:
                self._gc.collect_if_dangling(info, stored)
        return meta.deep_copy(stored) if copy else stored

    def _create_locked(
        self,
        info: ResourceInfo,
        obj: dict[str, Any],
        namespace: str,
        keep_identity: bool,
        reject_rv: bool,
        patched: bool = False,
        dry_run: bool = False,
        decoded: bool = False,
    ) -> dict[str, Any]:
        """Create ``obj``; ``reject_rv``: a given resourceVersion is an error (POST); otherwise it is dropped;
        ``patched``: ``obj`` is the result of an apply patch (decoding errors are the patch's 422); ``decoded``:
        ``obj`` is ``_decoded``'s answer already (or a trusted object), stored as it is."""
        new = obj if decoded else self._decoded(info, obj, patched=patched)
        check_type_meta(info, new)
        ns = resolve_namespace(info, namespace, new)
        md = new["metadata"]
        if reject_rv:
            check_no_resource_version_on_create(md)
        store = self._store.objects(info.gvr)
        name = assign_name(info, md, ns, store)
        if (ns, name) in store:
            raise new_already_exists(info.gvr.resource, name, info.gvr.group)
        if not (keep_identity and md.get("uid")):
            md["uid"] = str(uuid.uuid4())
        elif self._store.has_uid(md["uid"]):
            raise BadRequestError(f'uid "{md["uid"]}" of {info.gvr.resource} "{name}" is already used by another object')
        if not (keep_identity and md.get("creationTimestamp")):
            md["creationTimestamp"] = meta.now_rfc3339()
        for field in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "selfLink"):
            md.pop(field, None)
        if has_generation(info, self.is_custom(info)):
            md["generation"] = 1
        else:
            md.pop("generation", None)
        if info.gvr == res.PODS and not new.get("status"):
            new["status"] = {"phase": "Pending"}
        if info.gvr == res.NAMESPACES:  # kube-apiserver's namespace strategy: every new namespace is Active
            new["status"] = {"phase": "Active"}
        if info.gvr == res.SERVICES:
            allocate_cluster_ip(new, self._store.objects(res.SERVICES).values())
        admit_create(info, new, self._registry.crd_schema(info.gvr), self.cluster_limits)
        if dry_run:
            return new
        if self.cluster_limits:
            check_storable(new)
        stored = self._commit(info, new, None, ADDED)
        if info.gvr == CRDS:
            self._registry.register_crd(stored)
        return stored

    def get(self, gvr: GroupVersionResource, namespace: str, name: str) -> dict[str, Any]:
        obj = self.peek(gvr, namespace, name)
        if obj is None:
            raise new_not_found(gvr.resource, name, gvr.group)
        return meta.deep_copy(obj)

    def peek(self, gvr: GroupVersionResource, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The stored object itself (None when absent), for in-process readers that never modify it (``get``
        returns a copy). Takes no lock: a write replaces a stored object in one dict assignment, so a reader gets
        the object before or after a concurrent write, never a part of one."""
        info = self.resource_info(gvr)
        return self._store.get(gvr, namespace if info.namespaced else "", name)

    def claimable(self, gvr: GroupVersionResource, namespace: str, owner_uid: str) -> list[Mapping[str, Any]]:
        """The stored objects (read-only) of ``gvr`` in ``namespace`` that ``owner_uid`` owns or that have no
        controller, by name: what a controller may claim, found by index rather than by listing the namespace."""
        with self._lock:
            return self._store.claimable(gvr, namespace, owner_uid)

    def list(
        self, gvr: GroupVersionResource, namespace: str = "", options: ListOptions | None = None, *, copy: bool = True
    ) -> dict[str, Any]:
        """The List object: items sorted by namespace/name, filtered by selectors, paginated by limit/continue.
        ``copy=False``: the items are the stored objects themselves, for a reader that only serializes them."""
        options = options or ListOptions()
        info = self.resource_info(gvr)
        flt = ObjectFilter(info, namespace, options.label_selector, options.field_selector)
        with self._lock:
            page = select_page(self._store, self._watch_cache, info, flt, options, self.too_large_rv_wait)
        return page.to_list(info, copy)

    # -- update / patch ---------------------------------------------------------------------------------------------
    def update(
        self,
        gvr: GroupVersionResource,
        obj: dict[str, Any],
        namespace: str = "",
        subresource: str | None = None,
        dry_run: bool = False,
        *,
        copy: bool = True,
        unknown: builtins.list[str] | None = None,
        trusted: bool = False,
    ) -> dict[str, Any]:
        """``copy=False``, ``unknown`` and ``trusted`` as for ``create``."""
        info = self._registry.resource_info(gvr, subresource)
        new = obj if trusted else self._decoded(info, obj, unknown=unknown)  # before the lock, as in create
        with self._lock:
            stored = self._update_locked(info, new, namespace, subresource, conditional=True, dry_run=dry_run)
        return meta.deep_copy(stored) if copy else stored

    def _update_locked(
        self,
        info: ResourceInfo,
        new: dict[str, Any],
        namespace: str,
        subresource: str | None,
        conditional: bool = False,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """``conditional``: a PUT, which kinds without unconditional updates refuse without a resourceVersion (a
        patch always applies to the current version)."""
        gvr = info.gvr
        check_type_meta(info, new)
        ns = resolve_namespace(info, namespace, new)
        md = new["metadata"]
        name = md.get("name")
        if not name:
            cause = {"type": "FieldValueRequired", "field": "metadata.name", "message": "Required value: name is required"}
            raise new_invalid(info.kind, "", [cause], gvr.group)
        old = self._store.get(gvr, ns, name)
        if old is None:
            raise new_not_found(gvr.resource, name, gvr.group)
        old_md = old["metadata"]
        if conditional:
            check_conditional_update(info, self.is_custom(info), md)
        if md.get("resourceVersion") and md["resourceVersion"] != old_md["resourceVersion"]:
            raise new_conflict(gvr.resource, name, _MODIFIED_WHY, gvr.group)
        check_preconditions(gvr, old, md.get("uid"), None)
        if subresource == "status":
            result = meta.deep_copy(old)
            if "status" in new:
                result["status"] = new["status"]
            else:
                result.pop("status", None)
        else:
            result = new
            if info.has_status:
                if "status" in old:
                    result["status"] = meta.deep_copy(old["status"])
                else:
                    result.pop("status", None)
            check_no_new_finalizers(info, new, old)
            for field in ("uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds"):
                if field in old_md:
                    md[field] = old_md[field]
                else:
                    md.pop(field, None)
        if gvr == res.SERVICES and subresource != "status":
            keep_allocated_values(result, old)
        admit_update(info, result, old, self._registry.crd_schema(gvr), self.cluster_limits)
        custom = self.is_custom(info)
        if (
            subresource != "status"
            and has_generation(info, custom)
            and generation_content(result, custom) != generation_content(old, custom)
        ):
            result["metadata"]["generation"] = int(old_md.get("generation") or 0) + 1
        if without_rv(result) == without_rv(old):
            return old  # nothing changed: no write, no event
        if dry_run:
            result["metadata"]["resourceVersion"] = old_md["resourceVersion"]
            return result
        if meta.deletion_timestamp(result) and not meta.finalizers(result):
            return self._gc.remove(info, result, old)
        if self.cluster_limits:
            check_storable(result)
        stored = self._commit(info, result, old, MODIFIED)
        if gvr == CRDS:
            self._registry.register_crd(stored)
        self._gc.after_update(info, stored, old)
        return stored

    def patch(
        self,
        gvr: GroupVersionResource,
        namespace: str,
        name: str,
        body: PatchBody,
        patch_type: str = "merge",
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Apply a merge/json/strategic patch, or an apply (strategic merge of the applied configuration for
        built-in kinds, JSON merge for custom resources; creates the object when missing)."""
        return self.patch_with_outcome(gvr, namespace, name, body, patch_type, subresource, dry_run).object

    def patch_with_outcome(
        self,
        gvr: GroupVersionResource,
        namespace: str,
        name: str,
        body: PatchBody,
        patch_type: str = "merge",
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> PatchOutcome:
        """``patch``, also telling whether an apply patch created the object (an API server answers 201 then)."""
        if patch_type not in ("merge", "json", "strategic", "apply"):
            raise ApiError(415, "UnsupportedMediaType", f"unsupported patch type {patch_type!r}: expected merge, json, strategic or apply")
        doc = decode_patch(body, patch_type)
        with self._lock:
            info = self._registry.resource_info(gvr, subresource)
            ns = namespace if info.namespaced else ""
            current = self._store.get(gvr, ns, name)
            if patch_type == "apply":
                if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind"):
                    raise BadRequestError("an apply patch must be an object with apiVersion and kind")
                if meta.name(doc) and meta.name(doc) != name:
                    raise BadRequestError(f"the name of the object ({meta.name(doc)}) does not match the name on the URL ({name})")
                if current is None and subresource is None:
                    doc.setdefault("metadata", {})["name"] = name
                    # kube-apiserver creates through its update path here, which drops a given resourceVersion
                    created = self._create_locked(
                        info, doc, ns, keep_identity=False, reject_rv=False, patched=True, dry_run=dry_run
                    )
                    if not dry_run:
                        self._gc.collect_if_dangling(info, created)
                    return PatchOutcome(meta.deep_copy(created), True)
            if current is None:
                raise new_not_found(gvr.resource, name, gvr.group)
            new = apply_patch(current, doc, patch_type, self.is_custom(info))
            check_decodes(info, new, patched=True, drop_unknown=True)
            new_md = new.get("metadata")
            if not isinstance(new_md, dict) or new_md.get("name") != name:
                raise BadRequestError(f"the name of the object ({meta.name(new)}) does not match the name on the URL ({name})")
            stored = self._update_locked(info, new, ns, subresource, dry_run=dry_run)
        return PatchOutcome(meta.deep_copy(stored), False)

    def bind(self, namespace: str, name: str, node_name: str) -> dict[str, Any]:
        """Bind a pod to a node, as a POST to ``pods/binding`` does (the only way ``spec.nodeName`` changes): sets
        it and the ``PodScheduled`` condition; 409 when the pod is being deleted or already bound."""
        gvr = res.PODS
        with self._lock:
            info = self.resource_info(gvr)
            pod = self._store.get(gvr, namespace, name)
            if pod is None:
                raise new_not_found(gvr.resource, name, gvr.group)
            bound = bound_pod(pod, node_name)
            stored = self._commit(info, bound, pod, MODIFIED)
        return meta.deep_copy(stored)

    # -- delete -----------------------------------------------------------------------------------------------------
    def delete(
        self,
        gvr: GroupVersionResource,
        namespace: str,
        name: str,
        propagation_policy: str | None = None,
        preconditions: dict[str, Any] | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Delete (or, while finalizers remain, mark deleted); runs ownerReference garbage collection."""
        check_propagation_policy(propagation_policy)
        with self._lock:
            info = self.resource_info(gvr)
            obj = self._store.get(gvr, namespace if info.namespaced else "", name)
            if obj is None:
                raise new_not_found(gvr.resource, name, gvr.group)
            pre = preconditions or {}
            check_preconditions(gvr, obj, pre.get("uid"), pre.get("resourceVersion"))
            result = self._gc.delete(info, obj, propagation_policy or "Background", dry_run)
        return meta.deep_copy(result)

    def delete_collection(
        self, gvr: GroupVersionResource, namespace: str = "", options: ListOptions | None = None, dry_run: bool = False
    ) -> None:
        """Delete every object the list with ``options`` (selectors; no pagination) would return."""
        options = options or ListOptions()
        info = self.resource_info(gvr)
        flt = ObjectFilter(info, namespace, options.label_selector, options.field_selector)
        with self._lock:
            for key in sorted(k for k, o in self._store.objects(gvr).items() if flt.matches(o)):
                obj = self._store.get(gvr, *key)
                if obj is not None:
                    self._gc.delete(info, obj, "Background", dry_run)

    # -- watch ------------------------------------------------------------------------------------------------------
    def watch(self, gvr: GroupVersionResource, namespace: str = "", options: ListOptions | None = None) -> TrackerWatch:
        """A watch per the API server's rules: initial events for RV ""/"0", replay after an exact RV, one 410
        ERROR event when that RV is older than the retained history, one 504 "Too large resource version" ERROR
        event when a future RV does not appear within ``too_large_rv_wait`` seconds, bookmarks when asked.
        ``send_initial_events`` (watch-list) overrides the RV's choice: true sends the current state (once the store
        reached the RV) and, with bookmarks, the initial-events-end bookmark; false with RV ""/"0" starts now."""
        options = options or ListOptions()
        info = self.resource_info(gvr)
        flt = ObjectFilter(info, namespace, options.label_selector, options.field_selector)
        interval = self.bookmark_interval if options.allow_watch_bookmarks else None
        w = TrackerWatch(info, flt, self.watch_buffer, interval, options.timeout_seconds)
        rv_opt = options.resource_version or ""
        from_now = rv_opt in ("", "0")
        send_initial = from_now if options.send_initial_events is None else options.send_initial_events
        with self._lock:
            if not (send_initial or from_now):
                self._watch_cache.start(w, parse_rv(rv_opt), self.too_large_rv_wait)
                return w
            if not from_now:
                try:
                    self._watch_cache.wait_for(parse_rv(rv_opt), self.too_large_rv_wait)
                except RequestTimeoutError as err:
                    w.fail(err.to_status())
                    return w
            objects = self._store.objects(gvr) if send_initial else {}
            initial = [objects[k] for k in sorted(k for k, o in objects.items() if flt.matches(o))]
            end_bookmark = bool(options.send_initial_events and options.allow_watch_bookmarks)
            w.queue_initial(initial, self._store.revision, end_bookmark)
            self._watch_cache.add(w)
        return w

    def close_watches(self) -> None:
        """End every open watch (as a server shutting down does)."""
        self._watch_cache.close_all()
