"""An in-memory object store that behaves like a kube-apiserver (the heart of the fake clientset and the sandbox).

Guarantees (see also ``tracker_gc`` and ``tracker_watch``):
- One global resourceVersion counter across all kinds; every write bumps it and is recorded in a bounded watch
  history (``watch_history`` events). A write that changes nothing is not a write (no new RV, no event).
- create sets uid, creationTimestamp, resourceVersion, ``generation: 1`` (kinds that have one, see
  ``tracker_strategy``), expands ``generateName``, fills apiVersion/kind; a create carrying a non-zero
  resourceVersion fails with 500 as etcd3 does, while an apply that creates and ``add`` (seeding, which also keeps
  a given uid and creationTimestamp) drop it.
- update: a given resourceVersion must match (409 Conflict); generation is bumped per ``tracker_strategy``; on
  kinds with a status subresource the main resource keeps the stored status and the ``status`` subresource
  changes nothing but status.
- Custom resources are pruned, defaulted and validated (422) against their CRD's openAPIV3Schema (``apis.openapi``);
  writing a CustomResourceDefinition registers what it serves.
- Stored objects are never mutated after they are stored, and every object handed out is a copy.

- A list or watch at a resourceVersion newer than the current one waits up to ``too_large_rv_wait`` seconds for
  it, then fails as kube-apiserver's watch cache does: 504 Timeout "Too large resource version" with the cause
  ``ResourceVersionTooLarge`` (raised by ``list``; one ERROR event, then the end, for ``watch``).

Simplifications, on purpose: "apply" patches are a strategic merge of the applied configuration for built-in kinds
and a JSON merge for custom resources (no field managers, no conflicts), and create the object when it is missing
(``patch_with_outcome`` tells whether it did); strategic merge patches on custom resources are refused with 415 as
kube-apiserver does; namespaces are not required to exist and deleting one does not empty it.
"""

from __future__ import annotations

import random
import string
import threading
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Any

from .. import meta
from .. import resources as res
from ..errors import (
    ApiError,
    BadRequestError,
    NotFoundError,
    new_already_exists,
    new_conflict,
    new_invalid,
    new_not_found,
)
from ..resources import GroupVersionResource, ResourceInfo
from ..watch import ADDED, DELETED, MODIFIED, ListOptions
from .patch import decode_patch, json_patch, merge_patch, strategic_merge_patch
from .tracker_crd import ServedVersion, crd_status, parse_crd
from .tracker_gc import GarbageCollectorMixin, ObjectKey
from .tracker_list import ListMixin, parse_rv
from .tracker_registry import BUILTIN_GROUPS, NOT_SERVED, ResourceRegistryMixin
from .tracker_strategy import check_no_resource_version_on_create, generation_content, has_generation
from .tracker_watch import HistoryEvent, ObjectFilter, TrackerWatch

__all__ = ["ObjectTracker", "TrackerWatch", "PatchOutcome", "BUILTIN_GROUPS"]

CRDS = res.CUSTOM_RESOURCE_DEFINITIONS
_MODIFIED_WHY = "the object has been modified; please apply your changes to the latest version and try again"


def _random_suffix() -> str:
    return "".join(random.choices(string.ascii_lowercase + string.digits, k=5))


def _without_rv(obj: dict[str, Any]) -> dict[str, Any]:
    md = dict(obj.get("metadata") or {})
    md.pop("resourceVersion", None)
    return {**obj, "metadata": md}


@dataclass(frozen=True)
class PatchOutcome:
    """What a patch did: the resulting object, and whether an apply patch created it (HTTP 201)."""

    object: dict[str, Any]
    created: bool


class ObjectTracker(ResourceRegistryMixin, ListMixin, GarbageCollectorMixin):
    """Thread-safe store of API objects with API-server semantics; see the module doc for the guarantees."""

    def __init__(self, watch_history: int = 1000, watch_buffer: int = 1000) -> None:
        if watch_history < 1 or watch_buffer < 1:
            raise ValueError("watch_history and watch_buffer must be at least 1")
        self._lock = threading.RLock()
        self._rv_advanced = threading.Condition(self._lock)  # notified on every commit
        self._rv = 0
        self._objects: dict[GroupVersionResource, dict[tuple[str, str], dict[str, Any]]] = {}
        self._uids: dict[str, ObjectKey] = {}
        self._dependents: dict[str, set[ObjectKey]] = {}
        self._history: deque[HistoryEvent] = deque()
        self._watch_history = watch_history
        self._compacted_rv = 0  # RV of the newest event dropped from the history
        self._watchers: list[TrackerWatch] = []
        self._crds: dict[GroupVersionResource, ServedVersion] = {}
        self._crd_gvrs: dict[str, list[GroupVersionResource]] = {}  # CRD name → the GVRs it serves here
        self._unserved: set[GroupVersionResource] = set()  # removed by deleting their CRD
        self._gc_running = False
        self.watch_buffer = watch_buffer
        self.bookmark_interval = 1.0  # seconds of idleness before a watcher that asked for bookmarks gets one
        self.too_large_rv_wait = 3.0  # seconds a list/watch waits for a future resourceVersion before failing (504)

    # -- resources ------------------------------------------------------------------------------------------------
    # -- helpers --------------------------------------------------------------------------------------------------
    def resource_version(self) -> str:
        with self._lock:
            return str(self._rv)

    @staticmethod
    def _check_type_meta(info: ResourceInfo, obj: dict[str, Any]) -> None:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if api_version and api_version != info.gvr.api_version:
            raise BadRequestError(
                f"the API version in the data ({api_version}) does not match the expected API version ({info.gvr.api_version})"
            )
        if kind and kind != info.kind:
            raise BadRequestError(f"the kind in the data ({kind}) does not match the expected kind ({info.kind})")
        obj["apiVersion"], obj["kind"] = info.gvr.api_version, info.kind
        if not isinstance(obj.get("metadata", {}), dict):
            raise BadRequestError("metadata must be an object")
        obj.setdefault("metadata", {})

    @staticmethod
    def _resolve_namespace(info: ResourceInfo, request_ns: str, obj: dict[str, Any]) -> str:
        md = obj["metadata"]
        if not info.namespaced:
            md.pop("namespace", None)
            return ""
        obj_ns = md.get("namespace") or ""
        if request_ns and obj_ns and request_ns != obj_ns:
            raise BadRequestError(
                f"the namespace of the provided object ({obj_ns}) does not match the namespace sent on the request ({request_ns})"
            )
        ns = request_ns or obj_ns
        if not ns:
            raise BadRequestError(f"{info.gvr.group_resource} is namespaced: a namespace is required")
        md["namespace"] = ns
        return ns

    def _stored(self, gvr: GroupVersionResource, ns: str, name: str) -> dict[str, Any] | None:
        return self._objects.get(gvr, {}).get((ns, name))

    def _admit(self, info: ResourceInfo, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Kind-specific admission: CRD acceptance, CR prune → default → validate."""
        if info.gvr == CRDS:
            parse_crd(obj)
            obj["status"] = crd_status(obj, (old or {}).get("status"))
            return
        served = self._crds.get(info.gvr)
        if served is None or not served.schema:
            return
        from .. import openapi

        openapi.prune(served.schema, obj)
        openapi.apply_defaults(served.schema, obj)
        causes = openapi.validate(served.schema, obj)
        if causes:
            raise new_invalid(info.kind, meta.name(obj), causes, info.gvr.group)

    def _commit(self, info: ResourceInfo, new: dict[str, Any], prev: dict[str, Any] | None, etype: str) -> dict[str, Any]:
        """Store (or, for DELETED, drop) ``new`` at the next RV, keep the indexes, record and fan out the event."""
        self._rv += 1
        md = new["metadata"]
        md["resourceVersion"] = str(self._rv)
        gvr, key = info.gvr, (md.get("namespace") or "", md["name"])
        okey: ObjectKey = (gvr, key[0], key[1])
        if prev is not None:
            for ref in meta.owner_references(prev):
                deps = self._dependents.get(ref.get("uid", ""))
                if deps is not None:
                    deps.discard(okey)
                    if not deps:
                        del self._dependents[ref.get("uid", "")]
        if etype == DELETED:
            self._objects.get(gvr, {}).pop(key, None)
            self._uids.pop(md.get("uid", ""), None)
        else:
            self._objects.setdefault(gvr, {})[key] = new
            self._uids[md["uid"]] = okey
            for ref in meta.owner_references(new):
                if ref.get("uid"):
                    self._dependents.setdefault(ref["uid"], set()).add(okey)
        event = HistoryEvent(self._rv, gvr, etype, new, prev)
        if len(self._history) >= self._watch_history:
            self._compacted_rv = self._history.popleft().rv
        self._history.append(event)
        if self._watchers:
            self._watchers = [w for w in self._watchers if w.offer(event)]
        self._rv_advanced.notify_all()
        return new

    # -- create / get / list --------------------------------------------------------------------------------------
    def add(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Seed an object (a ``…List`` adds each item); like ``create`` but keeps a given uid and creationTimestamp."""
        if not isinstance(obj, dict) or not obj.get("apiVersion") or not obj.get("kind"):
            raise BadRequestError("add: the object needs apiVersion and kind")
        if obj["kind"].endswith("List") and isinstance(obj.get("items"), list):
            return {**obj, "items": [self.add(item) for item in obj["items"]]}
        info = self._info_for_kind(obj["apiVersion"], obj["kind"])
        ns = (meta.namespace(obj) or "default") if info.namespaced else ""
        with self._lock:
            stored = self._create_locked(info, obj, ns, keep_identity=True, reject_rv=False)
        return meta.deep_copy(stored)

    def create(self, gvr: GroupVersionResource, obj: dict[str, Any], namespace: str = "") -> dict[str, Any]:
        with self._lock:
            info = self.resource_info(gvr)
            stored = self._create_locked(info, obj, namespace, keep_identity=False, reject_rv=True)
            self._collect_if_dangling(info, stored)
        return meta.deep_copy(stored)

    def _create_locked(
        self, info: ResourceInfo, obj: dict[str, Any], namespace: str, keep_identity: bool, reject_rv: bool
    ) -> dict[str, Any]:
        """Create ``obj``; ``reject_rv``: a given resourceVersion is an error (POST); otherwise it is dropped."""
        if not isinstance(obj, dict):
            raise BadRequestError(f"the object must be a JSON object, got {type(obj).__name__}")
        new = meta.deep_copy(obj)
        self._check_type_meta(info, new)
        ns = self._resolve_namespace(info, namespace, new)
        md = new["metadata"]
        if reject_rv:
            check_no_resource_version_on_create(md)
        store = self._objects.get(info.gvr, {})
        if not md.get("name"):
            prefix = md.get("generateName")
            if not prefix:
                cause = {"type": "FieldValueRequired", "field": "metadata.name", "message": "Required value: name or generateName is required"}
                raise new_invalid(info.kind, "", [cause], info.gvr.group)
            for _ in range(16):
                md["name"] = prefix + _random_suffix()
                if (ns, md["name"]) not in store:
                    break
        name = md["name"]
        if (ns, name) in store:
            raise new_already_exists(info.gvr.resource, name, info.gvr.group)
        if not (keep_identity and md.get("uid")):
            md["uid"] = str(uuid.uuid4())
        elif md["uid"] in self._uids:
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
        self._admit(info, new, None)
        stored = self._commit(info, new, None, ADDED)
        if info.gvr == CRDS:
            self._register_crd_locked(stored)
        return stored

    def get(self, gvr: GroupVersionResource, namespace: str, name: str) -> dict[str, Any]:
        with self._lock:
            info = self.resource_info(gvr)
            obj = self._stored(gvr, namespace if info.namespaced else "", name)
        if obj is None:
            raise new_not_found(gvr.resource, name, gvr.group)
        return meta.deep_copy(obj)

    # -- update / patch -------------------------------------------------------------------------------------------
    def update(
        self, gvr: GroupVersionResource, obj: dict[str, Any], namespace: str = "", subresource: str | None = None
    ) -> dict[str, Any]:
        if not isinstance(obj, dict):
            raise BadRequestError(f"the object must be a JSON object, got {type(obj).__name__}")
        with self._lock:
            info = self._info_with_subresource(gvr, subresource)
            stored = self._update_locked(info, meta.deep_copy(obj), namespace, subresource)
        return meta.deep_copy(stored)

    def _info_with_subresource(self, gvr: GroupVersionResource, subresource: str | None) -> ResourceInfo:
        info = self.resource_info(gvr)
        if subresource is not None and (subresource != "status" or not info.has_status):
            raise NotFoundError(404, "NotFound", NOT_SERVED, details={"group": gvr.group, "kind": f"{gvr.resource}/{subresource}"})
        return info

    def _update_locked(
        self, info: ResourceInfo, new: dict[str, Any], namespace: str, subresource: str | None
    ) -> dict[str, Any]:
        gvr = info.gvr
        self._check_type_meta(info, new)
        ns = self._resolve_namespace(info, namespace, new)
        md = new["metadata"]
        name = md.get("name")
        if not name:
            cause = {"type": "FieldValueRequired", "field": "metadata.name", "message": "Required value: name is required"}
            raise new_invalid(info.kind, "", [cause], gvr.group)
        old = self._stored(gvr, ns, name)
        if old is None:
            raise new_not_found(gvr.resource, name, gvr.group)
        old_md = old["metadata"]
        if md.get("resourceVersion") and md["resourceVersion"] != old_md["resourceVersion"]:
            raise new_conflict(gvr.resource, name, _MODIFIED_WHY, gvr.group)
        if md.get("uid") and md["uid"] != old_md["uid"]:
            why = f"Precondition failed: UID in precondition: {md['uid']}, UID in object meta: {old_md['uid']}"
            raise new_conflict(gvr.resource, name, why, gvr.group)
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
            if old_md.get("deletionTimestamp"):
                added = [f for f in md.get("finalizers") or [] if f not in (old_md.get("finalizers") or [])]
                if added:
                    cause = {
                        "type": "FieldValueForbidden",
                        "field": "metadata.finalizers",
                        "message": f"Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {added}",
                    }
                    raise new_invalid(info.kind, name, [cause], gvr.group)
            for field in ("uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds"):
                if field in old_md:
                    md[field] = old_md[field]
                else:
                    md.pop(field, None)
        self._admit(info, result, old)
        custom = self.is_custom(info)
        if (
            subresource != "status"
            and has_generation(info, custom)
            and generation_content(result, custom) != generation_content(old, custom)
        ):
            result["metadata"]["generation"] = int(old_md.get("generation") or 0) + 1
        if _without_rv(result) == _without_rv(old):
            return old  # nothing changed: no write, no event
        if meta.deletion_timestamp(result) and not meta.finalizers(result):
            return self._remove(info, result, old)
        stored = self._commit(info, result, old, MODIFIED)
        if gvr == CRDS:
            self._register_crd_locked(stored)
        self._after_update(info, stored, old)
        return stored

    def patch(
        self,
        gvr: GroupVersionResource,
        namespace: str,
        name: str,
        body: Any,
        patch_type: str = "merge",
        subresource: str | None = None,
    ) -> dict[str, Any]:
        """Apply a merge/json/strategic patch, or an apply (strategic merge of the applied configuration for
        built-in kinds, JSON merge for custom resources; creates the object when missing)."""
        return self.patch_with_outcome(gvr, namespace, name, body, patch_type, subresource).object

    def patch_with_outcome(
        self,
        gvr: GroupVersionResource,
        namespace: str,
        name: str,
        body: Any,
        patch_type: str = "merge",
        subresource: str | None = None,
    ) -> PatchOutcome:
        """``patch``, also telling whether an apply patch created the object (an API server answers 201 then)."""
        if patch_type not in ("merge", "json", "strategic", "apply"):
            raise ApiError(415, "UnsupportedMediaType", f"unsupported patch type {patch_type!r}: expected merge, json, strategic or apply")
        doc = decode_patch(body, patch_type)
        with self._lock:
            info = self._info_with_subresource(gvr, subresource)
            ns = namespace if info.namespaced else ""
            current = self._stored(gvr, ns, name)
            if patch_type == "apply":
                if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind"):
                    raise BadRequestError("an apply patch must be an object with apiVersion and kind")
                if meta.name(doc) and meta.name(doc) != name:
                    raise BadRequestError(f"the name of the object ({meta.name(doc)}) does not match the name on the URL ({name})")
                if current is None and subresource is None:
                    doc.setdefault("metadata", {})["name"] = name
                    # kube-apiserver creates through its update path here, which drops a given resourceVersion
                    created = self._create_locked(info, doc, ns, keep_identity=False, reject_rv=False)
                    self._collect_if_dangling(info, created)
                    return PatchOutcome(meta.deep_copy(created), True)
            if current is None:
                raise new_not_found(gvr.resource, name, gvr.group)
            if patch_type == "merge" or (patch_type == "apply" and self.is_custom(info)):
                if not isinstance(doc, dict):
                    raise BadRequestError("a merge patch must be a JSON object")
                new = merge_patch(current, doc)
            elif patch_type == "json":
                new = json_patch(current, doc)
            else:
                if self.is_custom(info):
                    raise ApiError(
                        415,
                        "UnsupportedMediaType",
                        "the body of the request was in an unknown format - accepted media types include: "
                        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                    )
                new = strategic_merge_patch(current, doc)
            if not isinstance(new, dict):
                raise BadRequestError("the patched object is not a JSON object")
            new = meta.deep_copy(new)
            new_md = new.get("metadata")
            if not isinstance(new_md, dict) or new_md.get("name") != name:
                raise BadRequestError(f"the name of the patched object must stay {name!r}")
            stored = self._update_locked(info, new, ns, subresource)
        return PatchOutcome(meta.deep_copy(stored), False)

    # -- delete ---------------------------------------------------------------------------------------------------
    def delete(
        self,
        gvr: GroupVersionResource,
        namespace: str,
        name: str,
        propagation_policy: str | None = None,
        preconditions: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Delete (or, while finalizers remain, mark deleted); runs ownerReference garbage collection."""
        if propagation_policy not in (None, "Background", "Foreground", "Orphan"):
            raise BadRequestError(
                f'propagationPolicy: Unsupported value: "{propagation_policy}": supported values: "Background", "Foreground", "Orphan"'
            )
        with self._lock:
            info = self.resource_info(gvr)
            obj = self._stored(gvr, namespace if info.namespaced else "", name)
            if obj is None:
                raise new_not_found(gvr.resource, name, gvr.group)
            pre = preconditions or {}
            if pre.get("uid") and pre["uid"] != meta.uid(obj):
                why = f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {meta.uid(obj)}"
                raise new_conflict(gvr.resource, name, why, gvr.group)
            if pre.get("resourceVersion") and pre["resourceVersion"] != meta.resource_version(obj):
                why = (
                    f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
                    f"ResourceVersion in object meta: {meta.resource_version(obj)}"
                )
                raise new_conflict(gvr.resource, name, why, gvr.group)
            result = self._delete_locked(info, obj, propagation_policy or "Background")
        return meta.deep_copy(result)

    def delete_collection(self, gvr: GroupVersionResource, namespace: str = "", options: ListOptions | None = None) -> None:
        """Delete every object the list with ``options`` (selectors; no pagination) would return."""
        options = options or ListOptions()
        info = self.resource_info(gvr)
        flt = ObjectFilter(info, namespace, options.label_selector, options.field_selector)
        with self._lock:
            for key in sorted(k for k, o in self._objects.get(gvr, {}).items() if flt.matches(o)):
                obj = self._stored(gvr, *key)
                if obj is not None:
                    self._delete_locked(info, obj, "Background")

    # -- watch ----------------------------------------------------------------------------------------------------
    def watch(self, gvr: GroupVersionResource, namespace: str = "", options: ListOptions | None = None) -> TrackerWatch:
        """A watch per the API server's rules: initial events for RV ""/"0", replay after an exact RV, one 410
        ERROR event when that RV is older than the retained history, one 504 "Too large resource version" ERROR
        event when a future RV does not appear within ``too_large_rv_wait`` seconds, bookmarks when asked."""
        options = options or ListOptions()
        info = self.resource_info(gvr)
        flt = ObjectFilter(info, namespace, options.label_selector, options.field_selector)
        interval = self.bookmark_interval if options.allow_watch_bookmarks else None
        w = TrackerWatch(info, flt, self.watch_buffer, interval, options.timeout_seconds)
        rv_opt = options.resource_version
        with self._lock:
            if rv_opt in (None, "", "0"):
                objects = self._objects.get(gvr, {})
                initial = [objects[k] for k in sorted(k for k, o in objects.items() if flt.matches(o))]
                end_bookmark = bool(options.send_initial_events and options.allow_watch_bookmarks)
                w.queue_initial(initial, self._rv, end_bookmark)
            else:
                rv = parse_rv(rv_opt)
                if rv < self._compacted_rv:
                    w.fail(self._expired(rv).to_status())
                    return w
                if rv > self._rv:
                    w.await_resource_version(rv, self._rv, self.too_large_rv_wait)
                else:
                    for event in self._history:
                        if event.rv > rv and not w.offer(event):
                            break
                    w.set_progress(rv)
            self._watchers = [x for x in self._watchers if not x.finished]
            self._watchers.append(w)
        return w

    def close_watches(self) -> None:
        """End every open watch (as a server shutting down does)."""
        with self._lock:
            watchers, self._watchers = self._watchers, []
        for w in watchers:
            w.close()
