"""The objects a job owns and the objects it references, as ``BaseController`` handles them (a mixin).

Owned resources (pods, Deployments, Services, HPAs...):
* watched through the shared informer with the ``controller-uid`` index; ``owned(gvr, job)`` is a job's objects,
  looked up by index (never a namespace listed and filtered);
* handlers as Go's ``addPod``/``updatePod``/``deletePod`` and ``addDeployment``/...: an object is mapped to its job
  through the controller ownerReference, checked against the cached job's UID (an object of a deleted-and-recreated
  job of the same name never wakes the new one); updates with an unchanged resourceVersion are ignored;
* self-healing for the resources in ``recreates``: an object deleted from under a live job is created again — at most
  once per ``recreation_ttl`` (5 s) per object, never while the job's workers are being replaced on purpose
  (``JobState.prevent_recreation``), never when ``should_recreate`` says no, never when the job is gone or being
  deleted (asked from the API server, not only the cache: Sedna #466);
* creation expectations (``expect_creation`` / ``creations_pending``): objects created but not yet seen by the
  informer, so that a sync running before the cache caught up does not create a second set;
* ``create_owned`` / ``update_owned`` / ``delete_object``: API calls with the Events and logs every kind wants.

Referenced resources (Models, Datasets): ``watch_references(gvr, refs)`` indexes jobs by the objects they name and
wakes exactly those jobs when such an object is added, changes its spec or is deleted.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from apis import errors, meta
from apis.record import NORMAL, WARNING
from apis.resources import DEPLOYMENTS, PODS, GroupVersionResource, lookup
from informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs
from reconcile import object_identity

from .indexes import CONTROLLER_UID_INDEX, controller_uid_index_func, ensure_index, reference_index_func
from .selfheal import object_for_recreation

__all__ = ["EXPECTATION_TIMEOUT", "OwnedObjects"]

EXPECTATION_TIMEOUT = 300.0  # client-go's ExpectationsTimeout


def _unwrap(obj: Any) -> Any:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


class OwnedObjects:
    """Mixin of ``BaseController``; see the module doc. Needs ``_watch_owned`` called from ``__init__``."""

    # provided by BaseController
    kind: str
    clientset: Any
    informer_factory: Any
    job_informer: Any
    cache_syncs: list[Callable[[], bool]]
    recorder: Any
    _log: Any

    # -- wiring ---------------------------------------------------------------------------------------------------
    def _watch_owned(self, owns: Sequence[GroupVersionResource], recreates: Sequence[GroupVersionResource]) -> None:
        unknown = [str(g) for g in recreates if g not in owns]
        if unknown:
            raise ValueError(f"recreates {unknown} must also be owned")
        self.recreates = frozenset(recreates)
        self.owned_informers: dict[GroupVersionResource, Any] = {}
        for gvr in owns:
            generic = self.informer_factory.for_resource(gvr)
            informer = generic.informer()
            ensure_index(informer, CONTROLLER_UID_INDEX, controller_uid_index_func)
            if gvr == PODS:
                handlers = (self.add_pod, self.update_pod, self.delete_pod)
                self.pod_informer, self.pod_lister = generic, generic.lister()
            else:
                handlers = (
                    functools.partial(self._add_owned, gvr),
                    functools.partial(self._update_owned, gvr),
                    functools.partial(self._delete_owned, gvr),
                )
            informer.add_event_handler(
                ResourceEventHandlerFuncs(add_func=handlers[0], update_func=handlers[1], delete_func=handlers[2])
            )
            self.owned_informers[gvr] = generic
            self.cache_syncs.append(informer.has_synced)

    def watch_references(self, gvr: GroupVersionResource, refs: Callable[[Mapping[str, Any]], Iterable[str]]) -> Any:
        """Wake the jobs whose ``refs(job)`` (names in the job's namespace; a module-level function) name an object
        of ``gvr`` when that object is added, deleted or its spec changes. Returns the lister of ``gvr``."""
        ensure_index(self.job_informer.informer(), f"references:{gvr.resource}", reference_index_func(refs))
        generic = self.informer_factory.for_resource(gvr)
        wake = functools.partial(self.wake_referencing, gvr)

        def changed(old: Any, cur: Any) -> None:
            if old.get("spec") != cur.get("spec"):
                wake(cur)

        generic.informer().add_event_handler(ResourceEventHandlerFuncs(add_func=wake, update_func=changed, delete_func=wake))
        self.cache_syncs.append(generic.informer().has_synced)
        return generic.lister()

    def wake_referencing(self, gvr: GroupVersionResource, obj: Any) -> None:
        """Enqueue every job that references ``obj`` (an object of ``gvr``, or its tombstone), found by index."""
        obj = _unwrap(obj)
        if not isinstance(obj, Mapping):
            return
        key = f"{meta.namespace(obj)}/{meta.name(obj)}"
        for job in self.job_informer.informer().get_indexer().by_index(f"references:{gvr.resource}", key):
            self.enqueue_controller(job, immediate=True)

    # -- lookups --------------------------------------------------------------------------------------------------
    def owned(self, gvr: GroupVersionResource, job: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The cached objects of ``gvr`` whose controller is ``job`` (shared: do not modify)."""
        return self.owned_informers[gvr].informer().get_indexer().by_index(CONTROLLER_UID_INDEX, meta.uid(job))

    def get_cached(self, gvr: GroupVersionResource, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self.owned_informers[gvr].lister().namespaced(namespace).get(name)
        except errors.NotFoundError:
            return None

    # -- handlers -------------------------------------------------------------------------------------------------
    def enqueue_by_owner(self, obj: Mapping[str, Any], immediate: bool) -> None:
        """Enqueue the job that controls ``obj`` (Go's ``enqueueByPod``/``enqueueByDeployment``)."""
        job = self.resolve_controller_ref(meta.namespace(obj), meta.get_controller_of(obj))
        if job is not None:
            self.enqueue_controller(job, immediate)

    def enqueue_by_pod(self, pod: Mapping[str, Any], immediate: bool) -> None:
        self.enqueue_by_owner(pod, immediate)

    def add_pod(self, pod: Any) -> None:
        # a pod already being deleted (seen after a restart) is only a reason to look at its job again;
        # a failed pod wakes its job after the backoff, as in Sedna
        immediate = meta.deletion_timestamp(pod) is not None or (pod.get("status") or {}).get("phase") != "Failed"
        self._observe_creation(PODS, pod)
        self.enqueue_by_pod(pod, immediate)

    def update_pod(self, old: Any, cur: Any) -> None:
        if meta.resource_version(old) != meta.resource_version(cur):
            self.add_pod(cur)

    def delete_pod(self, obj: Any) -> None:
        self._delete_owned(PODS, obj)

    # Go's deployment handlers: the owned-object handlers of DEPLOYMENTS
    def add_deployment(self, deployment: Any) -> None:
        self._add_owned(DEPLOYMENTS, deployment)

    def update_deployment(self, old: Any, cur: Any) -> None:
        self._update_owned(DEPLOYMENTS, old, cur)

    def delete_deployment(self, obj: Any) -> None:
        self._delete_owned(DEPLOYMENTS, obj)

    def _add_owned(self, gvr: GroupVersionResource, obj: Any) -> None:
        self._observe_creation(gvr, obj)
        self.enqueue_by_owner(obj, True)

    def _update_owned(self, gvr: GroupVersionResource, old: Any, cur: Any) -> None:
        if meta.resource_version(old) != meta.resource_version(cur):
            self.enqueue_by_owner(cur, True)

    def _delete_owned(self, gvr: GroupVersionResource, obj: Any) -> None:
        """Wake the object's job; recreate the object if it was deleted from under a live job."""
        kind = lookup(gvr).kind
        obj = _unwrap(obj)
        if not isinstance(obj, Mapping) or obj.get("kind", kind) != kind:
            self._log.warning(f"delete handler of {gvr.resource}: not a {kind}; ignored", **object_identity(obj))
            return
        self._observe_creation(gvr, obj)  # created and deleted before the cache showed it
        if gvr == PODS:
            self.enqueue_by_pod(obj, True)
        else:
            self.enqueue_by_owner(obj, True)
        if gvr in self.recreates:
            self.maybe_recreate(gvr, obj)

    # -- self-healing ---------------------------------------------------------------------------------------------
    def should_recreate(self, gvr: GroupVersionResource, job: Mapping[str, Any], obj: Mapping[str, Any]) -> bool:
        """Whether ``obj`` of ``gvr``, deleted from under the live ``job``, is created again (default: yes)."""
        return True

    @staticmethod
    def recreation_key(gvr: GroupVersionResource, namespace: str, name: str) -> str:
        return f"{gvr.resource}:{namespace}/{name}"

    def maybe_recreate(self, gvr: GroupVersionResource, obj: Mapping[str, Any]) -> bool:
        """Recreate the deleted ``obj`` unless one of the rules in the module doc says no; True when created."""
        ref = meta.get_controller_of(obj)
        if ref is None or ref.get("kind") != self.kind:
            return False
        ns = meta.namespace(obj)
        job_key, obj_key = f"{ns}/{ref.get('name')}", f"{gvr.resource}/{ns}/{meta.name(obj)}"
        job = self.resolve_controller_ref(ns, ref)
        if job is None:
            self._log.info("owner gone, not recreating", key=job_key, object=obj_key)
            return False
        state = self.job_state(job)
        if state.prevent_recreation or not self.should_recreate(gvr, job, obj):
            return False
        if not self.job_is_live(job):
            self._log.info("owner is being deleted, not recreating", key=job_key, object=obj_key)
            return False
        if not state.recreated.try_mark(self.recreation_key(gvr, ns, meta.name(obj))):
            self._log.info("recreated moments ago, not recreating again", key=job_key, object=obj_key)
            return False
        try:
            self.clientset.resource(gvr, ns).create(object_for_recreation(obj))
        except errors.AlreadyExistsError:
            return False
        except errors.ApiError as exc:
            state.recreated.unmark(self.recreation_key(gvr, ns, meta.name(obj)))
            self._log.warning("recreation failed", key=job_key, object=obj_key, error=str(exc))
            return False
        self.expect_creation(job, gvr, meta.name(obj))
        self._log.info("recreated an object deleted from under its job", key=job_key, object=obj_key)
        self.recorder.event(job, NORMAL, "Recreated", f"recreated {lookup(gvr).kind} {meta.name(obj)} deleted from under it")
        return True

    def expect_creation(self, job: Mapping[str, Any], gvr: GroupVersionResource, name: str) -> None:
        """Remember that ``name`` was just created for ``job``: ``creations_pending`` is True until the informer has
        seen it (or ``EXPECTATION_TIMEOUT`` passed, as client-go's expectations)."""
        state = self.job_state(job)
        state.expected[self.recreation_key(gvr, meta.namespace(job), name)] = self.job_states.timer() + EXPECTATION_TIMEOUT

    def creations_pending(self, job: Mapping[str, Any], gvr: GroupVersionResource) -> int:
        """How many objects of ``gvr`` created for ``job`` the cache has not shown yet (seen ones are forgotten)."""
        state = self.job_state(job)
        prefix, now = f"{gvr.resource}:", self.job_states.timer()
        for key, deadline in list(state.expected.items()):
            if not key.startswith(prefix):
                continue
            ns, _, name = key[len(prefix):].partition("/")
            if deadline <= now or self.get_cached(gvr, ns, name) is not None:
                state.expected.pop(key, None)
        return sum(1 for key in state.expected if key.startswith(prefix))

    def _observe_creation(self, gvr: GroupVersionResource, obj: Mapping[str, Any]) -> None:
        ref = meta.get_controller_of(obj)
        state = self.job_states.get(ref.get("uid", "")) if ref is not None else None
        if state is not None and state.expected:
            state.expected.pop(self.recreation_key(gvr, meta.namespace(obj), meta.name(obj)), None)

    def recreation_wait(self, job: Mapping[str, Any], gvr: GroupVersionResource, name: str) -> float:
        """Seconds before the missing ``name`` may be created again by ``sync`` (0: now): it was (re)created less
        than the recreation TTL ago. ``mark_recreated`` counts a creation by ``sync`` against the TTL."""
        return self.job_state(job).recreated.remaining(self.recreation_key(gvr, meta.namespace(job), name))

    def mark_recreated(self, job: Mapping[str, Any], gvr: GroupVersionResource, name: str) -> None:
        self.job_state(job).recreated.try_mark(self.recreation_key(gvr, meta.namespace(job), name))

    # -- API helpers ----------------------------------------------------------------------------------------------
    def create_owned(
        self, gvr: GroupVersionResource, job: Mapping[str, Any], obj: dict[str, Any], what: str = ""
    ) -> dict[str, Any] | None:
        """Create ``obj`` for ``job``; Event ``SuccessfulCreate`` and the created object, ``None`` when it exists
        already (our cache is behind), or Event ``FailedCreate`` and the error raised."""
        what = what or lookup(gvr).kind
        name = meta.name(obj) or meta.generate_name(obj)
        key = f"{meta.namespace(job)}/{meta.name(job)}"
        try:
            created = self.clientset.resource(gvr, meta.namespace(job)).create(obj)
        except errors.AlreadyExistsError:
            self._log.info(f"{what} exists already", key=key, name=name)
            return None
        except errors.ApiError as exc:
            self.recorder.event(job, WARNING, "FailedCreate", f"error creating {what} {name}: {exc.message}")
            raise
        self._log.info(f"created {what}", key=key, name=meta.name(created))
        self.recorder.event(job, NORMAL, "SuccessfulCreate", f"created {what} {meta.name(created)}")
        return created

    def update_owned(
        self, gvr: GroupVersionResource, job: Mapping[str, Any], obj: dict[str, Any], what: str = ""
    ) -> dict[str, Any]:
        """Update ``obj`` (spec, not status); Event ``SuccessfulUpdate``, or ``FailedUpdate`` and the error raised."""
        what = what or lookup(gvr).kind
        try:
            updated = self.clientset.resource(gvr, meta.namespace(obj)).update(obj)
        except errors.ApiError as exc:
            self.recorder.event(job, WARNING, "FailedUpdate", f"error updating {what} {meta.name(obj)}: {exc.message}")
            raise
        self._log.info(f"updated {what}", key=f"{meta.namespace(job)}/{meta.name(job)}", name=meta.name(obj))
        self.recorder.event(job, NORMAL, "SuccessfulUpdate", f"updated {what} {meta.name(obj)}")
        return updated

    def delete_object(self, gvr: GroupVersionResource, namespace: str, name: str) -> bool:
        """Delete ``namespace/name``; False when it was already gone."""
        try:
            self.clientset.resource(gvr, namespace).delete(name)
        except errors.NotFoundError:
            return False
        return True
