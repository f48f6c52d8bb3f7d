"""The objects a job owns and the objects it references, as ``BaseController`` handles them (a mixin).

Owned resources (pods, Deployments, Services, HPAs...):
* watched through the shared informer with the ``controller-uid`` index; ``owned(gvr, job)`` is a job's objects,
  looked up by index (never a namespace listed and filtered);
* handlers as Go's ``addPod``/``updatePod``/``deletePod`` and ``addDeployment``/...: an object is mapped to its job
  through the controller ownerReference, checked against the cached job's UID (an object of a deleted-and-recreated
  job of the same name never wakes the new one); updates with an unchanged resourceVersion are ignored;
* self-healing for the resources in ``recreates``: an object deleted from under a live job is created again — at most
  once per ``recreation_ttl`` (5 s) per object (``recreated_pods``), never while the job's workers are being replaced
  on purpose (its key in ``prevent_recreation``), never when ``should_recreate`` says no, never when the job is gone or being
  deleted (asked from the API server, not only the cache: Sedna #466);
* creation expectations (``expect_creation`` / ``creations_pending``): objects created but not yet seen by the
  informer, so that a sync running before the cache caught up does not create a second set;
* ``ensure_worker(job, gvr, slot, build)``: the create-a-worker protocol (expectation, per-slot recreation limit,
  ``prevent_recreation``, ``job_is_live``) in one place, for every kind;
* ``create_owned`` / ``update_owned`` / ``delete_object``: API calls with the Events and logs every kind wants.

Referenced resources (Models, Datasets): ``watch_references(gvr, refs)`` indexes jobs by the objects they name and
wakes exactly those jobs when such an object is added, changes its spec or is deleted.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from apis import errors, meta
from apis.record import NORMAL, WARNING
from apis.resources import DEPLOYMENTS, PODS, GroupVersionResource, lookup
from informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs
from reconcile import object_identity

from .indexes import CONTROLLER_UID_INDEX, controller_uid_index_func, ensure_index, reference_index_func
from .jobstate import ExpectedCreation, JobState, JobStates
from .selfheal import RecreatedPods, object_for_recreation

__all__ = ["EXPECTATION_TIMEOUT", "OwnedObjects", "WorkerCreation"]

EXPECTATION_TIMEOUT = 300.0  # client-go's ExpectationsTimeout


@dataclass(frozen=True)
class WorkerCreation:
    """What ``ensure_worker`` did: ``created`` (the created object, else None); ``wait`` > 0: throttled, the job is
    requeued after ``wait`` seconds; ``pending``: a worker created for the slot earlier is not in the cache yet;
    ``recreation``: the creation (done or throttled) counts as a re-creation of the slot."""

    created: dict[str, Any] | None = None
    wait: float = 0.0
    pending: bool = False
    recreation: bool = False

    @property
    def on_its_way(self) -> bool:
        """A worker exists for the slot soon: created now, created earlier and not cached yet, or due after ``wait``."""
        return self.created is not None or self.pending or self.wait > 0


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
    queue: Any
    job_states: JobStates
    recreated_pods: RecreatedPods
    prevent_recreation: set[str]
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
    # A lookup that finds an object in the cache meets its creation expectation, as the add handler does.
    def owned(self, gvr: GroupVersionResource, job: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The cached objects of ``gvr`` whose controller is ``job`` (shared: do not modify)."""
        objs = self.owned_informers[gvr].informer().get_indexer().by_index(CONTROLLER_UID_INDEX, meta.uid(job))
        for obj in objs:
            self._observe_creation(gvr, obj)
        return objs

    def get_cached(self, gvr: GroupVersionResource, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            obj = self.owned_informers[gvr].lister().namespaced(namespace).get(name)
        except errors.NotFoundError:
            return None
        self._observe_creation(gvr, obj)
        return obj

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
        """The key of an object (or worker slot) in ``recreated_pods``: ``namespace/name`` for pods (DESIGN's
        ``recreated_pods``), ``resource:namespace/name`` for other resources."""
        return f"{namespace}/{name}" if gvr == PODS else f"{gvr.resource}:{namespace}/{name}"

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
        if job_key in self.prevent_recreation or not self.should_recreate(gvr, job, obj):
            return False
        if not self.job_is_live(job):
            self._log.info("owner is being deleted, not recreating", key=job_key, object=obj_key)
            return False
        recreation_key = self.recreation_key(gvr, ns, meta.name(obj))
        if not self.recreated_pods.try_mark(recreation_key, meta.uid(job)):
            self._log.info("recreated moments ago, not recreating again", key=job_key, object=obj_key)
            return False
        try:
            self.clientset.resource(gvr, ns).create(object_for_recreation(obj))
        except errors.AlreadyExistsError:
            return False
        except errors.ApiError as exc:
            self.recreated_pods.unmark(recreation_key)
            self._log.warning("recreation failed", key=job_key, object=obj_key, error=str(exc))
            return False
        self.expect_creation(job, gvr, meta.name(obj))
        self._log.info("recreated an object deleted from under its job", key=job_key, object=obj_key)
        self.recorder.event(job, NORMAL, "Recreated", f"recreated {lookup(gvr).kind} {meta.name(obj)} deleted from under it")
        return True

    def ensure_worker(
        self,
        job: Mapping[str, Any],
        gvr: GroupVersionResource,
        slot: str,
        build: Callable[[], dict[str, Any]],
        *,
        what: str = "",
        recreation: bool = False,
    ) -> WorkerCreation:
        """Create the worker of ``job`` that fills ``slot`` (a name for the worker's place in the job, stable across
        its re-creations: e.g. ``<job>-<worker type>``), built by ``build()`` only when it is created. The whole
        create-a-worker protocol, once. Guarantees:

        * an expected creation is not created twice: while a worker created for ``slot`` is not in the informer
          cache yet (and ``EXPECTATION_TIMEOUT`` has not passed), nothing is created (``pending``);
        * at most one new worker per slot per recreation TTL (5 s) after the first: a creation in a slot that had a
          worker before (``JobState.slots_created``, or ``recreation`` from the caller, e.g. the job has pods
          already) is a re-creation; it claims the slot in ``recreated_pods`` atomically (so the delete handler and
          a sync never both bring the same worker back), and a slot claimed less than the TTL ago is not created
          but the job is requeued for when it may be (``wait``);
        * never a re-creation while the job's workers are being replaced on purpose (``prevent_recreation``): a
          worker created then is the replacement, built from the new spec; it is neither limited nor counted;
        * never after the job is gone or while it is being deleted (``job_is_live``, asked from the API server);
        * a created worker is expected (``expect_creation``) and its slot remembered; ``create_owned``'s Events and
          log line; an API error is raised (the slot is not counted).
        """
        ns = meta.namespace(job)
        job_key, slot_key = f"{ns}/{meta.name(job)}", self.recreation_key(gvr, ns, slot)
        state = self.job_state(job)
        if self._slot_pending(state, gvr, slot_key):
            return WorkerCreation(pending=True)
        replacing = job_key in self.prevent_recreation
        recreation = not replacing and (recreation or slot_key in state.slots_created)
        if not replacing:
            wait = self.recreated_pods.remaining(slot_key)
            if wait <= 0 and recreation and not self.recreated_pods.try_mark(slot_key, state.uid):
                wait = self.recreated_pods.remaining(slot_key)  # claimed by the delete handler meanwhile
            if wait > 0:
                self._log.info("worker (re)created moments ago; not creating it again yet", key=job_key, slot=slot,
                               retry_in=round(wait, 3))
                self.queue.add_after(job_key, wait)
                return WorkerCreation(wait=wait, recreation=recreation)
        claimed = recreation
        try:
            if not self.job_is_live(job):
                self._log.info("job is gone or being deleted; no worker created", key=job_key, slot=slot)
                return WorkerCreation(recreation=recreation)
            created = self.create_owned(gvr, job, build(), what)
            if created is not None:
                claimed = False
        finally:
            if claimed:
                self.recreated_pods.unmark(slot_key)
        if created is None:
            return WorkerCreation(recreation=recreation)
        self.expect_creation(job, gvr, meta.name(created), slot_key)
        state.note_slot_created(slot_key)
        return WorkerCreation(created=created, recreation=recreation)

    def expect_creation(self, job: Mapping[str, Any], gvr: GroupVersionResource, name: str, slot_key: str = "") -> None:
        """Remember that ``name`` was just created for ``job`` (filling ``slot_key``): ``creations_pending`` is True
        until the informer has seen it (or ``EXPECTATION_TIMEOUT`` passed, as client-go's expectations)."""
        state, ns = self.job_state(job), meta.namespace(job)
        deadline = self.job_states.timer() + EXPECTATION_TIMEOUT
        state.expected[self.recreation_key(gvr, ns, name)] = ExpectedCreation(gvr.resource, ns, name, deadline, slot_key)

    def creations_pending(self, job: Mapping[str, Any], gvr: GroupVersionResource) -> int:
        """How many objects of ``gvr`` created for ``job`` the cache has not shown yet (seen ones are forgotten)."""
        return len(self._pending(self.job_state(job), gvr))

    def _slot_pending(self, state: JobState, gvr: GroupVersionResource, slot_key: str) -> bool:
        return any(expected.slot == slot_key for expected in self._pending(state, gvr))

    def _pending(self, state: JobState, gvr: GroupVersionResource) -> list[ExpectedCreation]:
        """The expectations of ``gvr`` still pending (lapsed and cache-seen ones are dropped)."""
        now, pending = self.job_states.timer(), []
        for key, expected in list(state.expected.items()):
            if expected.resource != gvr.resource:
                continue
            if expected.deadline <= now or self.get_cached(gvr, expected.namespace, expected.name) is not None:
                state.expected.pop(key, None)
            else:
                pending.append(expected)
        return pending

    def _observe_creation(self, gvr: GroupVersionResource, obj: Mapping[str, Any]) -> None:
        ref = meta.get_controller_of(obj)
        state = self.job_states.get(ref.get("uid", "")) if ref is not None else None
        if state is not None and state.expected:
            state.expected.pop(self.recreation_key(gvr, meta.namespace(obj), meta.name(obj)), None)

    def mark_recreated(self, job: Mapping[str, Any], gvr: GroupVersionResource, name: str) -> bool:
        """Count a (re)creation of ``name`` (an object or a worker slot of ``job``) against the recreation TTL, e.g.
        a delete handler claiming a worker's slot; False when it was counted less than the TTL ago."""
        return self.recreated_pods.try_mark(self.recreation_key(gvr, meta.namespace(job), name), meta.uid(job))

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
