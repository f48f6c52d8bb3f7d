"""``events.k8s.io/v1`` Events over the core/v1 Event store, as kube-apiserver serves them: one set of objects,
two shapes, converted on every read and write (``pkg/apis/events/v1/conversion.go``):

    events.k8s.io/v1          core/v1
    regarding            <->  involvedObject
    note                 <->  message
    reportingController  <->  reportingComponent
    deprecatedSource     <->  source
    deprecatedFirstTimestamp / deprecatedLastTimestamp / deprecatedCount  <->  firstTimestamp / lastTimestamp / count

(``eventTime``, ``series``, ``action``, ``reason``, ``related``, ``type``, ``reportingInstance`` keep their names.)
A create or update through events.k8s.io/v1 is validated strictly, as ``ValidateEventCreate``/``Update`` do for
that API (``eventTime``, ``reportingController``, ``reportingInstance``, ``action``, ``reason`` required; the
deprecated fields unset; most fields immutable), with the core field paths kube-apiserver reports.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from apis import meta
from apis.client import PatchBody
from apis.errors import BadRequestError, NotFoundError, new_invalid
from apis.fake.tracker import ObjectTracker, PatchOutcome
from apis.fake.tracker.patch import apply_patch, decode_patch
from apis.fake.tracker.watch import TrackerWatch
from apis.resources import EVENTS, EVENTS_V1, GroupVersionResource
from apis.watch import BOOKMARK, ERROR, ListOptions, Watch, WatchEvent
from sandbox.faults import Faults

if TYPE_CHECKING:  # the context types the endpoints, which import this module
    from .context import SandboxContext, ServingContext

__all__ = ["EventsV1Tracker", "for_resource", "to_core", "to_events_v1"]

# events.k8s.io/v1 field → core/v1 field
_RENAMED = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_TO_V1 = {core: v1 for v1, core in _RENAMED.items()}
_SAME = ("metadata", "eventTime", "series", "action", "reason", "related", "type", "reportingInstance")
_FIELD_LABELS = {"regarding.": "involvedObject.", "reportingController": "reportingComponent"}
_IMMUTABLE = ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count", "type",
              "eventTime", "action", "related", "reportingComponent", "reportingInstance")
_LIMITS = {"reportingInstance": 128, "action": 128, "reason": 128, "message": 1024}


def _convert(obj: Mapping[str, Any], names: Mapping[str, str], api_version: str, always: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "Event", "apiVersion": api_version}
    for key, value in obj.items():
        if key in _SAME:
            out[key] = value
        elif key in names:
            out[names[key]] = value
    for key in always:  # Go struct fields that always marshal
        out.setdefault(key, {})
    return out


def to_events_v1(core: Mapping[str, Any]) -> dict[str, Any]:
    """A core/v1 Event in its events.k8s.io/v1 shape."""
    return _convert(core, _TO_V1, EVENTS_V1.api_version, ("regarding", "deprecatedSource"))


def to_core(event: Mapping[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event in its core/v1 shape."""
    return _convert(event, _RENAMED, EVENTS.api_version, ("involvedObject", "source"))


def _core_field_selector(selector: str | None) -> str | None:
    if not selector:
        return selector
    parts = []
    for requirement in selector.split(","):
        for v1_prefix, core_prefix in _FIELD_LABELS.items():
            if requirement.startswith(v1_prefix):
                requirement = core_prefix + requirement[len(v1_prefix):]
                break
        parts.append(requirement)
    return ",".join(parts)


def _cause(field: str, message: str, kind: str = "FieldValueInvalid") -> dict[str, str]:
    return {"type": kind, "field": field, "message": message}


def _validate_create(core: Mapping[str, Any]) -> list[dict[str, str]]:
    causes: list[dict[str, str]] = []
    namespace = meta.namespace(core)
    if not core.get("eventTime"):
        causes.append(_cause("eventTime", "Required value", "FieldValueRequired"))
    involved_ns = (core.get("involvedObject") or {}).get("namespace") or ""
    if not involved_ns and namespace not in ("default", "kube-system"):
        causes.append(_cause("involvedObject.namespace", 'Invalid value: "": does not match event.namespace'))
    for field in ("reportingComponent", "reportingInstance", "action", "reason"):
        path = "reportingController" if field == "reportingComponent" else field
        if not core.get(field):
            causes.append(_cause(path, "Required value", "FieldValueRequired"))
    for field, limit in _LIMITS.items():
        if isinstance(core.get(field), str) and len(core[field]) > limit:
            causes.append(_cause(field, f'Invalid value: "": can have at most {limit} characters'))
    series = core.get("series")
    if isinstance(series, Mapping):
        if not isinstance(series.get("count"), int) or series["count"] < 2:
            causes.append(_cause("series.count", 'Invalid value: "": should be at least 2'))
        if not series.get("lastObservedTime"):
            causes.append(_cause("series.lastObservedTime", "Required value", "FieldValueRequired"))
    if core.get("type") not in ("Normal", "Warning"):
        causes.append(_cause("type", f'Invalid value: "": has invalid value: {core.get("type") or ""}'))
    for field in ("firstTimestamp", "lastTimestamp", "count"):
        if core.get(field):
            causes.append(_cause(field, 'Invalid value: "": needs to be unset'))
    source = core.get("source") or {}
    if source.get("component") or source.get("host"):
        causes.append(_cause("source", 'Invalid value: "": needs to be unset'))
    return causes


def _validate_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[dict[str, str]]:
    causes = []
    for field in _IMMUTABLE:
        if (new.get(field) or None) != (old.get(field) or None):
            causes.append(_cause(field, "Invalid value: field is immutable"))
    return causes


def _converted(event: WatchEvent) -> WatchEvent:
    if event.type == ERROR:
        return event
    if event.type == BOOKMARK:
        return WatchEvent(BOOKMARK, {**event.object, "apiVersion": EVENTS_V1.api_version})
    return WatchEvent(event.type, to_events_v1(event.object))


class EventsV1Watch:
    """A tracker watch of core/v1 Events whose events carry events.k8s.io/v1 objects."""

    def __init__(self, watch: TrackerWatch) -> None:
        self._watch = watch

    def next_event(self, timeout: float | None = None) -> WatchEvent | None:
        event = self._watch.next_event(timeout)
        return None if event is None else _converted(event)

    def next_events(
        self, timeout: float | None = None, *, copy: bool = True, limit: int | None = None, gather: float = 0.0
    ) -> list[WatchEvent]:
        events = self._watch.next_events(timeout, copy=copy, limit=limit, gather=gather)
        return [_converted(e) for e in events]

    def __iter__(self) -> Iterator[WatchEvent]:
        return map(_converted, self._watch)

    def stop(self) -> None:
        self._watch.stop()


class EventsV1Tracker:
    """The tracker as the events.k8s.io/v1 endpoints see it; every other resource passes through unchanged."""

    def __init__(self, tracker: ObjectTracker) -> None:
        self._tracker = tracker

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tracker, name)

    def get(self, gvr: GroupVersionResource, namespace: str, name: str) -> dict[str, Any]:
        if gvr != EVENTS_V1:
            return self._tracker.get(gvr, namespace, name)
        return to_events_v1(self._tracker.get(EVENTS, namespace, name))

    def peek(self, gvr: GroupVersionResource, namespace: str, name: str) -> Mapping[str, Any] | None:
        if gvr != EVENTS_V1:
            return self._tracker.peek(gvr, namespace, name)
        core = self._tracker.peek(EVENTS, namespace, name)
        return None if core is None else to_events_v1(core)

    def list(
        self, gvr: GroupVersionResource, namespace: str = "", options: ListOptions | None = None, *, copy: bool = True
    ) -> dict[str, Any]:
        if gvr != EVENTS_V1:
            return self._tracker.list(gvr, namespace, options, copy=copy)
        listed = self._tracker.list(EVENTS, namespace, self._core_options(options))
        return {**listed, "apiVersion": EVENTS_V1.api_version, "items": [to_events_v1(i) for i in listed["items"]]}

    def watch(
        self, gvr: GroupVersionResource, namespace: str = "", options: ListOptions | None = None
    ) -> TrackerWatch | EventsV1Watch:
        if gvr != EVENTS_V1:
            return self._tracker.watch(gvr, namespace, options)
        return EventsV1Watch(self._tracker.watch(EVENTS, namespace, self._core_options(options)))

    def create(
        self, gvr: GroupVersionResource, obj: dict[str, Any], namespace: str = "", dry_run: bool = False,
        *, copy: bool = True, unknown: builtins.list[str] | None = None,
    ) -> dict[str, Any]:
        """``copy=False``: the stored object itself (read-only) is the answer (an events.k8s.io Event is always a
        new, converted one); ``unknown`` as for ``ObjectTracker.create`` (not for events.k8s.io Events)."""
        if gvr != EVENTS_V1:
            return self._tracker.create(gvr, obj, namespace, dry_run=dry_run, copy=copy, unknown=unknown)
        core = self._checked_core(obj)
        if namespace:
            core.setdefault("metadata", {}).setdefault("namespace", namespace)
        causes = _validate_create(core)
        if causes:
            raise new_invalid("Event", meta.name(obj), causes, EVENTS_V1.group)
        return to_events_v1(self._tracker.create(EVENTS, core, namespace, dry_run=dry_run))

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
    ) -> dict[str, Any]:
        if gvr != EVENTS_V1:
            return self._tracker.update(gvr, obj, namespace, subresource=subresource, dry_run=dry_run, copy=copy,
                                        unknown=unknown)
        core = self._checked_core(obj)
        old = self._tracker.get(EVENTS, namespace or meta.namespace(obj), meta.name(obj))
        causes = _validate_update(core, old)
        if causes:
            raise new_invalid("Event", meta.name(obj), causes, EVENTS_V1.group)
        return to_events_v1(self._tracker.update(EVENTS, core, namespace, subresource=subresource, dry_run=dry_run))

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
        if gvr != EVENTS_V1:
            return self._tracker.patch_with_outcome(gvr, namespace, name, body, patch_type, subresource, dry_run)
        doc = decode_patch(body, patch_type)
        try:
            current = self.get(gvr, namespace, name)
        except NotFoundError:
            if patch_type != "apply":
                raise
            created = self.create(
                gvr, {**doc, "metadata": {**(doc.get("metadata") or {}), "name": name}}, namespace, dry_run
            )
            return PatchOutcome(created, True)
        new = apply_patch(current, doc, patch_type, custom=False)
        if meta.name(new) != name:
            raise BadRequestError(f"the name of the patched object must stay {name!r}")
        new["metadata"]["resourceVersion"] = meta.resource_version(current)
        return PatchOutcome(self.update(gvr, new, namespace, dry_run=dry_run), False)

    def delete(
        self,
        gvr: GroupVersionResource,
        namespace: str,
        name: str,
        propagation_policy: str | None = None,
        preconditions: dict[str, Any] | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        target = EVENTS if gvr == EVENTS_V1 else gvr
        deleted = self._tracker.delete(target, namespace, name, propagation_policy, preconditions, dry_run)
        return to_events_v1(deleted) if gvr == EVENTS_V1 else deleted

    @staticmethod
    def _checked_core(obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("apiVersion") not in (None, "", EVENTS_V1.api_version) or obj.get("kind") not in (None, "", "Event"):
            raise BadRequestError(
                f"the API version in the data ({obj.get('apiVersion')}) does not match the expected API version "
                f"({EVENTS_V1.api_version})"
            )
        return to_core(obj)

    @staticmethod
    def _core_options(options: ListOptions | None) -> ListOptions:
        options = options or ListOptions()
        if not options.field_selector:
            return options
        return replace(options, field_selector=_core_field_selector(options.field_selector))


class _SandboxView:
    """The sandbox with its tracker seen through ``EventsV1Tracker``."""

    def __init__(self, sandbox: SandboxContext) -> None:
        self._sandbox = sandbox
        self.tracker = EventsV1Tracker(sandbox.tracker)

    @property
    def faults(self) -> Faults:
        return self._sandbox.faults

    @property
    def stopping(self) -> threading.Event:
        return self._sandbox.stopping

    @property
    def namespace_lifecycle(self) -> bool:
        return self._sandbox.namespace_lifecycle

    def track_watch(self, watch: Watch) -> None:
        self._sandbox.track_watch(watch)

    def untrack_watch(self, watch: Watch) -> None:
        self._sandbox.untrack_watch(watch)


def for_resource(sandbox: SandboxContext, gvr: GroupVersionResource) -> ServingContext:
    """What serves a request for ``gvr``: the sandbox itself, or its events.k8s.io/v1 view."""
    return _SandboxView(sandbox) if gvr == EVENTS_V1 else sandbox
