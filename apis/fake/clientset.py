"""``FakeClientset``: the clientset interface over an ``ObjectTracker``, with recorded actions and reactors.

Every call records an ``Action`` (a copy, chronological), then runs the matching reactors in order: the first one
that answers ``handled`` decides the call (its error is raised, else its object is returned). When none handles it
the tracker answers, which behaves like a real API server (resourceVersions, 409 conflicts, selectors, watch
replay and 410, garbage collection …).

Differences from client-go's fake, on purpose: the tracker is the *default* reaction, after every reactor (so
``add_reactor`` reactors run too, not only prepended ones), and no lock is held while reactors run, so a reactor
may call the clientset itself.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from .. import meta
from ..client import ClientsetBase, PatchBody, ResourceClient
from ..errors import NotFoundError
from ..resources import GroupVersionResource, ResourceInfo
from ..watch import ListOptions, Watch
from .tracker import ObjectTracker

__all__ = ["Action", "FakeClientset", "FakeResourceClient", "Reactor", "VERBS"]

VERBS = ("get", "list", "create", "update", "patch", "delete", "delete-collection", "watch")

ReactionFunc = Callable[["Action"], tuple[bool, Any, BaseException | None]]

_Answer = TypeVar("_Answer")


@dataclass
class Action:
    """One recorded clientset call."""

    verb: str
    resource: str  # plural, e.g. "pods"
    gvr: GroupVersionResource
    namespace: str = ""
    name: str = ""
    subresource: str | None = None
    object: dict[str, Any] | None = None  # create / update
    patch: PatchBody | None = None
    patch_type: str | None = None
    options: ListOptions | None = None  # list / watch / delete-collection
    propagation_policy: str | None = None
    preconditions: dict[str, Any] | None = None
    grace_period_seconds: int | None = None  # delete (recorded; the tracker deletes at once)
    field_manager: str | None = None  # patch (recorded; the tracker keeps no managedFields)
    force: bool = False  # patch with patch_type "apply"

    def matches(self, verb: str, resource: str) -> bool:
        """Case-insensitive; ``resource`` may name a subresource (``pods/status``); plain ``pods`` matches both."""
        if verb.lower() != self.verb:
            return False
        top, _, sub = resource.lower().partition("/")
        if top != self.resource.lower():
            return False
        return not sub or sub == (self.subresource or "").lower()

    def deep_copy(self) -> Action:
        return dataclasses.replace(
            self,
            object=meta.deep_copy(self.object) if self.object is not None else None,
            patch=self.patch if isinstance(self.patch, (bytes, bytearray, str)) or self.patch is None else meta.deep_copy(self.patch),
            options=dataclasses.replace(self.options) if self.options is not None else None,
            preconditions=dict(self.preconditions) if self.preconditions is not None else None,
        )


@dataclass(frozen=True)
class Reactor:
    """``fn`` for calls whose verb and resource match (``"*"`` matches anything; ``"pods"`` covers ``pods/status``)."""

    verb: str
    resource: str
    fn: Callable[[Action], tuple[bool, Any, BaseException | None]]

    def handles(self, action: Action) -> bool:
        if self.verb != "*" and self.verb.lower() != action.verb:
            return False
        if self.resource == "*":
            return True
        wanted = self.resource.lower()
        return wanted == action.resource.lower() or (
            action.subresource is not None and wanted == f"{action.resource}/{action.subresource}".lower()
        )


def _run_chain(chain: list[Reactor], action: Action, default: Callable[[Action], _Answer], what: str) -> _Answer:
    for reactor in chain:
        if not reactor.handles(action):
            continue
        answer = reactor.fn(action)
        if not (isinstance(answer, tuple) and len(answer) == 3):
            raise TypeError(f"{what} reactor {reactor.fn!r} must return (handled, object, error), got {answer!r}")
        handled, obj, err = answer
        if not handled:
            continue
        if err is not None:
            raise err
        # A reactor answers for the verb (an object, a list, a Watch), unchecked as client-go's runtime.Object.
        answer_obj: _Answer = obj
        return answer_obj
    return default(action)


def _object_of(action: Action) -> dict[str, Any]:
    """The object of a create or update action (a reactor may have taken it away: an error, not a silent None)."""
    if action.object is None:
        raise TypeError(f"{action.verb} {action.resource} action has no object")
    return action.object


def _patch_of(action: Action) -> tuple[PatchBody, str]:
    """The body and type of a patch action."""
    if action.patch is None or action.patch_type is None:
        raise TypeError(f"patch {action.resource} action has no patch body or type")
    return action.patch, action.patch_type


class FakeClientset(ClientsetBase):
    """The clientset interface over an in-memory ``ObjectTracker`` (``.tracker``); seed objects go through
    ``tracker.add``."""

    def __init__(self, *objects: dict[str, Any], watch_history: int = 1000, tracker: ObjectTracker | None = None,
                 cluster_limits: bool = False) -> None:
        """``cluster_limits``: refuse what a cluster refuses and client-go's fake stores (an object over etcd's
        1.5 MiB, ConfigMap or Secret data over 1 MiB: ``tracker.limits``), as the sandbox API server does."""
        self.tracker = tracker if tracker is not None else ObjectTracker(watch_history=watch_history,
                                                                         cluster_limits=cluster_limits)
        self._lock = threading.Lock()  # guards actions and reactor chains only; never held while reacting
        self._actions: list[Action] = []
        self._reactors: list[Reactor] = []
        self._watch_reactors: list[Reactor] = []
        for obj in objects:
            self.tracker.add(obj)

    def resource(self, gvr: GroupVersionResource, namespace: str = "") -> FakeResourceClient:
        return FakeResourceClient(self, self.tracker.resource_info(gvr), namespace)

    # -- actions --------------------------------------------------------------------------------------------------
    def actions(self) -> list[Action]:
        """Every recorded call so far, oldest first (copies)."""
        with self._lock:
            return [a.deep_copy() for a in self._actions]

    def clear_actions(self) -> None:
        with self._lock:
            self._actions.clear()

    # -- reactors -------------------------------------------------------------------------------------------------
    def add_reactor(self, verb: str, resource: str, fn: ReactionFunc) -> None:
        """Run ``fn(action) -> (handled, obj, err)`` after the reactors already registered (before the tracker)."""
        with self._lock:
            self._reactors.append(Reactor(verb, resource, fn))

    def prepend_reactor(self, verb: str, resource: str, fn: ReactionFunc) -> None:
        """Run ``fn`` before every reactor registered so far."""
        with self._lock:
            self._reactors.insert(0, Reactor(verb, resource, fn))

    def add_watch_reactor(self, resource: str, fn: Callable[[Action], tuple[bool, Watch | None, BaseException | None]]) -> None:
        with self._lock:
            self._watch_reactors.append(Reactor("watch", resource, fn))

    def prepend_watch_reactor(self, resource: str, fn: Callable[[Action], tuple[bool, Watch | None, BaseException | None]]) -> None:
        with self._lock:
            self._watch_reactors.insert(0, Reactor("watch", resource, fn))

    def invokes(self, action: Action, default: Callable[[Action], _Answer]) -> _Answer:
        """Record ``action`` and answer it through the reactors, else ``default(action)``."""
        with self._lock:
            self._actions.append(action.deep_copy())
            chain = list(self._watch_reactors if action.verb == "watch" else self._reactors)
        return _run_chain(chain, action.deep_copy(), default, action.verb)


class FakeResourceClient(ResourceClient):
    """Every verb of one resource in one namespace, answered by the fake clientset."""

    def __init__(self, clientset: FakeClientset, info: ResourceInfo, namespace: str = "") -> None:
        super().__init__(info, namespace)
        self._cs = clientset
        self._tracker = clientset.tracker

    def _new_action(self, verb: str, namespace: str, **fields: Any) -> Action:
        return Action(verb=verb, resource=self.gvr.resource, gvr=self.gvr, namespace=namespace, **fields)

    def get(self, name: str) -> dict[str, Any]:
        action = self._new_action("get", self._namespace_for(), name=name)
        return self._cs.invokes(action, lambda a: self._tracker.get(a.gvr, a.namespace, a.name))

    def list(self, options: ListOptions | None = None, **kwargs: Any) -> dict[str, Any]:
        action = self._new_action("list", self.namespace, options=self._options(options, kwargs))
        return self._cs.invokes(action, lambda a: self._tracker.list(a.gvr, a.namespace, a.options))

    def watch(self, options: ListOptions | None = None, **kwargs: Any) -> Watch:
        action = self._new_action("watch", self.namespace, options=self._options(options, kwargs))
        return self._cs.invokes(action, lambda a: self._tracker.watch(a.gvr, a.namespace, a.options))

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        action = self._new_action("create", self._namespace_for(obj), name=meta.name(obj), object=obj)
        return self._cs.invokes(action, lambda a: self._tracker.create(a.gvr, _object_of(a), a.namespace))

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        action = self._new_action("update", self._namespace_for(obj), name=meta.name(obj), object=obj)
        return self._cs.invokes(action, lambda a: self._tracker.update(a.gvr, _object_of(a), a.namespace))

    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        action = self._new_action("update", self._namespace_for(obj), name=meta.name(obj), object=obj, subresource="status")
        return self._cs.invokes(action, lambda a: self._tracker.update(a.gvr, _object_of(a), a.namespace, subresource="status"))

    def patch(
        self,
        name: str,
        body: PatchBody,
        patch_type: str = "merge",
        subresource: str | None = None,
        *,
        field_manager: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        self._check_patch_options(patch_type, force)
        action = self._new_action(
            "patch", self._namespace_for(), name=name, patch=body, patch_type=patch_type, subresource=subresource,
            field_manager=field_manager, force=force,
        )
        return self._cs.invokes(
            action, lambda a: self._tracker.patch(a.gvr, a.namespace, a.name, *_patch_of(a), a.subresource)
        )

    def delete(
        self,
        name: str,
        propagation_policy: str | None = None,
        preconditions: dict[str, Any] | None = None,
        *,
        grace_period_seconds: int | None = None,
    ) -> dict[str, Any]:
        self._check_propagation_policy(propagation_policy)
        action = self._new_action(
            "delete", self._namespace_for(), name=name, propagation_policy=propagation_policy,
            preconditions=preconditions, grace_period_seconds=grace_period_seconds,
        )
        return self._cs.invokes(
            action, lambda a: self._tracker.delete(a.gvr, a.namespace, a.name, a.propagation_policy, a.preconditions)
        )

    def delete_collection(
        self, options: ListOptions | None = None, propagation_policy: str | None = None, **kwargs: Any
    ) -> None:
        """Delete every object the selectors pick (no pagination), each with ``propagation_policy``."""
        self._check_propagation_policy(propagation_policy)
        action = self._new_action(
            "delete-collection", self.namespace, options=self._options(options, kwargs),
            propagation_policy=propagation_policy,
        )
        self._cs.invokes(action, self._delete_collection)

    def _delete_collection(self, action: Action) -> None:
        if action.propagation_policy is None:
            self._tracker.delete_collection(action.gvr, action.namespace, action.options)
            return
        opts = action.options or ListOptions()
        selected = ListOptions(label_selector=opts.label_selector, field_selector=opts.field_selector)
        for obj in self._tracker.list(action.gvr, action.namespace, selected)["items"]:
            try:
                self._tracker.delete(action.gvr, meta.namespace(obj), meta.name(obj), action.propagation_policy)
            except NotFoundError:
                pass  # collected meanwhile (e.g. as a dependent of an object deleted just before)

