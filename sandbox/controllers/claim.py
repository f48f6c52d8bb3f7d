"""How the simulated controllers find what they own, as client-go's ControllerRefManager claims it: the objects in
the owner's namespace that its selector matches and that it controls, adopting matching orphans (a controller
ownerReference is added) unless the owner or the orphan is being deleted. An empty or invalid selector claims
nothing (never every object)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.errors import ApiError
from apis.logs import get_logger
from apis.resources import GroupVersionResource
from sandbox.tracker_api import TrackerAPI

__all__ = ["claim", "selector_text"]

log = get_logger(__name__)


def selector_text(label_selector: Mapping[str, Any] | None) -> str:
    """A metav1.LabelSelector as list-option text (``app=web,tier in (a,b)``); ``""`` when empty or invalid."""
    if label_selector is None:
        return ""
    try:
        return str(meta.selector_from_label_selector(label_selector))
    except ValueError:
        return ""


def claim(
    tracker: TrackerAPI, owner: Mapping[str, Any], owner_type: tuple[str, str], gvr: GroupVersionResource, selector: str
) -> list[dict[str, Any]]:
    """The objects of ``gvr`` that ``owner`` (of ``owner_type`` = (apiVersion, kind)) controls or has just adopted."""
    if not selector:
        return []
    matches = meta.parse_selector(selector).matches
    claimed = []
    # the owner's objects and the orphans, by index (never the whole namespace): the rest cannot be claimed
    for obj in tracker.claimable(gvr, meta.namespace(owner), meta.uid(owner)):
        if not matches(meta.labels(obj)):
            continue
        ref = meta.get_controller_of(obj)
        if ref is not None:
            if ref.get("uid") == meta.uid(owner):
                claimed.append(meta.deep_copy(obj))
            continue
        if meta.deletion_timestamp(obj) or meta.deletion_timestamp(owner):
            continue
        adopted = meta.deep_copy(obj)
        md = adopted["metadata"]
        md["ownerReferences"] = [*(md.get("ownerReferences") or []), meta.new_controller_ref(owner, owner_type)]
        try:
            claimed.append(tracker.update(gvr, adopted, meta.namespace(obj)))
        except ApiError as err:
            log.info("sandbox controller could not adopt an orphan", key=f"{meta.namespace(owner)}/{meta.name(owner)}",
                     orphan=meta.name(obj), error=str(err))
    return claimed
