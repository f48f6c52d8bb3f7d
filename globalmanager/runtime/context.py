"""``KindContext``: everything a kind's rules may use, and nothing else (no queue, no informers, no handlers).

* the job: ``get_job``, ``job_state`` (per-job memory between syncs, dropped when the job goes), ``update_job_status``
  (the status subresource, re-applied on conflict), ``job_is_live`` (asked from the API server);
* owned objects: ``owned(resource, job)`` (by the ``controller-uid`` index, never a namespace scan), ``get_cached``,
  ``ensure_worker`` (the whole create/expect/recreate protocol), ``create_owned``/``update_owned``/``delete_object``
  (with the Events and log lines every kind wants);
* referenced objects: ``lister(resource)``, ``nodes`` (the node check);
* the edge: ``send_to_edge``, ``edge``; timing: ``requeue_after``, ``now``; ``events``, ``log``, ``metrics``.

Self-healing structures (DESIGN): ``recreated_pods`` (objects and worker slots (re)created in the last 5 s, per job)
and ``prevent_recreation`` (keys of the jobs whose workers are being replaced on purpose).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import structlog

from apis import errors, meta
from apis.client import ClientsetBase, ResourceClient
from apis.meta import Obj
from apis.record import NORMAL, WARNING, EventRecorder
from apis.resources import PODS, GroupVersionResource, lookup
from informers import split_meta_namespace_key
from informers.factory import GenericInformer
from informers.listers import Lister
from workqueue import RateLimitingQueue

from .edge import EdgeLink, UpstreamMessage
from .indexes import CONTROLLER_UID_INDEX
from .jobstate import ExpectedCreation, JobState, JobStates
from .kind import Kind
from .metrics import ControllerMetrics
from .references import NodeCheck
from .selfheal import RecreatedPods, object_for_recreation
from .status import Mutation, update_status

__all__ = ["EXPECTATION_TIMEOUT", "KindContext", "WorkerCreation", "recreation_key"]

S = TypeVar("S")

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


def recreation_key(gvr: GroupVersionResource, namespace: str, name: str) -> str:
    """The key of an object (or worker slot) in ``recreated_pods``: ``namespace/name`` for pods (DESIGN's
    ``recreated_pods``), ``resource:namespace/name`` for other resources."""
    return f"{namespace}/{name}" if gvr == PODS else f"{gvr.resource}:{namespace}/{name}"


MAX_CREATED_NAMED = 10  # objects named in one SuccessfulCreate Event: its message stays bounded


def created_message(created: list[str]) -> str:
    """``created pod a, service b and pod c`` (the first ``MAX_CREATED_NAMED``, then how many more)."""
    named = created[:MAX_CREATED_NAMED]
    if len(created) > len(named):
        return f"created {', '.join(named)} and {len(created) - len(named)} more"
    return "created " + (f"{', '.join(named[:-1])} and {named[-1]}" if len(named) > 1 else named[0])


class KindContext(Generic[S]):
    """The narrow context of one kind's rules; built by ``JobController``. ``state`` is the kind's own state."""

    state: S

    def __init__(
        self,
        kind: Kind[S],
        *,
        clientset: ClientsetBase,
        job_lister: Lister,
        owned_informers: Mapping[GroupVersionResource, GenericInformer],
        listers: Mapping[GroupVersionResource, Lister],
        nodes: NodeCheck | None,
        job_states: JobStates,
        queue: RateLimitingQueue,
        recorder: EventRecorder,
        metrics: ControllerMetrics,
        edge: EdgeLink | None,
        now: Callable[[], str],
        lc_server: str,
        kb_server: str,
    ) -> None:
        self.name = kind.name
        self.resource = kind.resource
        self.gvk = lookup(kind.resource).gvk
        self.kind = self.gvk.kind
        self.clientset = clientset
        self.job_lister = job_lister
        self._owned = owned_informers
        self._listers = listers
        self.nodes = nodes
        self.job_states = job_states
        self.recreated_pods: RecreatedPods = job_states.recreated_pods
        self.prevent_recreation: set[str] = job_states.prevent_recreation
        self._queue = queue
        self.events = recorder
        self.metrics = metrics
        self.edge = edge
        self.now = now
        self.lc_server = lc_server
        self.kb_server = kb_server
        self.log = structlog.get_logger("globalmanager.controllers").bind(controller=kind.name)
        self._should_recreate = kind.should_recreate
        # per worker thread: the current sync's live UIDs, its creations, and the owned objects it has seen
        self._sync_scope = threading.local()

    # -- the job --------------------------------------------------------------------------------------------------
    def typed(self, obj: Obj) -> dict[str, Any]:
        """A shallow copy of ``obj`` with ``apiVersion``/``kind`` set (list items from some servers lack them)."""
        out = dict(obj)
        out.setdefault("apiVersion", self.gvk.api_version)
        out.setdefault("kind", self.kind)
        return out

    def get_job(self, key: str) -> dict[str, Any] | None:
        """The cached job ``namespace/name`` with ``apiVersion``/``kind`` (shared: do not modify), or ``None``."""
        ns, name = split_meta_namespace_key(key)
        try:
            return self.typed(self.job_lister.namespaced(ns).get(name))
        except errors.NotFoundError:
            return None

    def job_client(self, namespace: str) -> ResourceClient:
        return self.clientset.resource(self.resource, namespace)

    def job_state(self, job: Obj) -> JobState:
        """Everything remembered about ``job`` between syncs (one record per job UID)."""
        return self.job_states.for_job(job)

    def forget_job(self, key: str, uid: str = "") -> None:
        """Drop all per-job state of ``key``: its ``JobState``, its ``recreated_pods`` entries, its
        ``prevent_recreation`` mark."""
        self.job_states.forget(key, uid)

    def update_job_status(self, job: Obj, mutate: Mutation) -> dict[str, Any] | None:
        """Write the status through the subresource; ``mutate`` changes only the fields this writer owns and is
        applied again to a fresh copy on conflict (see ``status.update_status``)."""
        written = update_status(self.job_client(meta.namespace(job)), job, mutate)
        if written is not None:
            self.job_state(job).status_written_rv = meta.resource_version(written)
        return written

    def job_is_live(self, job: Obj) -> bool:
        """Ask the API server (not the cache) whether ``job`` still exists, with the same UID, and is not being
        deleted. Used before (re)creating workers: the cache may not have seen the job's deletion yet (Sedna #466).
        Within one sync (``sync_scope``) a job found live is asked once: the sync's creations are one decision, and
        what it creates after a deletion it could not see is owned, so the garbage collector removes it."""
        confirmed: set[str] | None = getattr(self._sync_scope, "live", None)
        uid = meta.uid(job)
        if confirmed is not None and uid in confirmed:
            return True
        try:
            live = self.job_client(meta.namespace(job)).get(meta.name(job))
        except errors.NotFoundError:
            return False
        alive = meta.uid(live) == uid and meta.deletion_timestamp(live) is None
        if alive and confirmed is not None:
            confirmed.add(uid)
        return alive

    @contextmanager
    def sync_scope(self, job: Obj) -> Iterator[None]:
        """One sync of ``job`` on this thread (``JobController`` wraps each sync in it): its liveness answer is
        reused, what it creates is told in one ``SuccessfulCreate`` Event at its end, and its expectations are met
        only by the owned objects it has seen (``owned``, ``get_cached``): an object the informer delivers after the
        sync listed the job's objects is still pending for that sync, never missing from both (client-go checks its
        expectations before it lists, for the same reason)."""
        scope = self._sync_scope
        scope.live, scope.created, scope.seen, scope.expected_before = set(), [], {}, {}
        try:
            yield
        finally:
            created: list[str] = scope.created
            scope.live, scope.created, scope.seen, scope.expected_before = None, None, None, None
            if created:
                self.events.event(job, NORMAL, "SuccessfulCreate", created_message(created))

    def resolve_controller_ref(self, namespace: str, ref: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """The job the controller reference points to, if it is of our kind, cached, and has the same UID."""
        if ref is None or ref.get("kind") != self.kind:
            return None
        try:
            job = self.job_lister.namespaced(namespace).get(ref.get("name", ""))
        except errors.NotFoundError:
            return None
        if meta.uid(job) != ref.get("uid"):
            return None
        return self.typed(job)

    def requeue_after(self, key: str, delay: float) -> None:
        """Sync ``key`` again after ``delay`` seconds (a deadline, a grace period), whatever else happens."""
        self._queue.add_after(key, delay)

    # -- referenced objects ---------------------------------------------------------------------------------------
    def lister(self, gvr: GroupVersionResource) -> Lister:
        """The lister of a resource the kind references (``Kind.references``)."""
        return self._listers[gvr]

    # -- owned objects --------------------------------------------------------------------------------------------
    # A lookup that finds an object in the cache meets its creation expectation, as the add handler does.
    def owned(self, gvr: GroupVersionResource, job: Obj) -> list[dict[str, Any]]:
        """The cached objects of ``gvr`` whose controller is ``job`` (shared: do not modify)."""
        seen = self._seen(gvr)
        if seen is not None:  # the expectations as they were before the list (the add handler may meet them after)
            state = self.job_states.get(meta.uid(job))
            if state is not None and state.expected:
                before = self._sync_scope.expected_before.setdefault((state.uid, gvr.resource), {})
                for key, expected in list(state.expected.items()):
                    if expected.resource == gvr.resource:
                        before.setdefault(key, expected)
        objs: list[dict[str, Any]] = self.indexer(gvr).by_index(CONTROLLER_UID_INDEX, meta.uid(job))
        for obj in objs:
            self.observe_creation(gvr, obj)
            if seen is not None:
                seen.add((meta.namespace(obj), meta.name(obj)))
        return objs

    def _seen(self, gvr: GroupVersionResource) -> set[tuple[str, str]] | None:
        """The objects of ``gvr`` the current sync has seen (``None`` outside a sync)."""
        seen: dict[str, set[tuple[str, str]]] | None = getattr(self._sync_scope, "seen", None)
        return None if seen is None else seen.setdefault(gvr.resource, set())

    def indexer(self, gvr: GroupVersionResource) -> Any:
        """The informer cache of an owned resource, for the kind's own indexes (``by_index``)."""
        return self._owned[gvr].informer().get_indexer()

    def get_cached(self, gvr: GroupVersionResource, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            obj: dict[str, Any] = self._owned[gvr].lister().namespaced(namespace).get(name)
        except errors.NotFoundError:
            return None
        self.observe_creation(gvr, obj)
        seen = self._seen(gvr)
        if seen is not None:
            seen.add((namespace, name))
        return obj

    def ensure_worker(
        self,
        job: Obj,
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
        job_key, slot_key = f"{ns}/{meta.name(job)}", recreation_key(gvr, ns, slot)
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
                self.log.info("worker (re)created moments ago; not creating it again yet", key=job_key, slot=slot,
                              retry_in=round(wait, 3))
                self._queue.add_after(job_key, wait)
                return WorkerCreation(wait=wait, recreation=recreation)
        claimed = recreation
        try:
            if not self.job_is_live(job):
                self.log.info("job is gone or being deleted; no worker created", key=job_key, slot=slot)
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

    def expect_creation(self, job: Obj, gvr: GroupVersionResource, name: str, slot_key: str = "") -> None:
        """Remember that ``name`` was just created for ``job`` (filling ``slot_key``): ``creations_pending`` is True
        until the informer has seen it (or ``EXPECTATION_TIMEOUT`` passed, as client-go's expectations)."""
        state, ns = self.job_state(job), meta.namespace(job)
        deadline = self.job_states.timer() + EXPECTATION_TIMEOUT
        state.expected[recreation_key(gvr, ns, name)] = ExpectedCreation(gvr.resource, ns, name, deadline, slot_key)

    def creations_pending(self, job: Obj, gvr: GroupVersionResource) -> int:
        """How many objects of ``gvr`` created for ``job`` the cache has not shown yet (seen ones are forgotten)."""
        return len(self._pending(self.job_state(job), gvr))

    def _slot_pending(self, state: JobState, gvr: GroupVersionResource, slot_key: str) -> bool:
        return any(expected.slot == slot_key for expected in self._pending(state, gvr))

    def _pending(self, state: JobState, gvr: GroupVersionResource) -> list[ExpectedCreation]:
        """The expectations of ``gvr`` still pending (lapsed and seen ones are dropped). Within a sync that has
        listed or looked up objects of ``gvr``, seen means seen by that sync (``sync_scope``); otherwise in the cache."""
        now, pending = self.job_states.timer(), []
        seen = getattr(self._sync_scope, "seen", None)
        seen_by_sync = None if seen is None else seen.get(gvr.resource)
        candidates = {key: e for key, e in list(state.expected.items()) if e.resource == gvr.resource}
        if seen_by_sync is not None:
            for key, expected in self._sync_scope.expected_before.get((state.uid, gvr.resource), {}).items():
                candidates.setdefault(key, expected)  # met by the add handler after this sync listed
        for key, expected in candidates.items():
            if seen_by_sync is not None:
                met = (expected.namespace, expected.name) in seen_by_sync
            else:
                met = self.get_cached(gvr, expected.namespace, expected.name) is not None
            if met or expected.deadline <= now:
                state.expected.pop(key, None)
            else:
                pending.append(expected)
        return pending

    def observe_creation(self, gvr: GroupVersionResource, obj: Obj) -> None:
        """The cache shows ``obj``: its creation expectation (if any) is met."""
        ref = meta.get_controller_of(obj)
        state = self.job_states.get(ref.get("uid", "")) if ref is not None else None
        if state is not None and state.expected:
            state.expected.pop(recreation_key(gvr, meta.namespace(obj), meta.name(obj)), None)

    def mark_recreated(self, job: Obj, gvr: GroupVersionResource, name: str) -> bool:
        """Count a (re)creation of ``name`` (an object or a worker slot of ``job``) against the recreation TTL, e.g.
        a delete handler claiming a worker's slot; False when it was counted less than the TTL ago."""
        return self.recreated_pods.try_mark(recreation_key(gvr, meta.namespace(job), name), meta.uid(job))

    def recreate_deleted(self, gvr: GroupVersionResource, obj: Obj) -> bool:
        """The delete handler's self-healing: create ``obj`` (deleted from under its job) again unless its job is
        gone or being deleted (asked from the API server), its workers are being replaced on purpose, the kind's
        ``should_recreate`` says no, or it was recreated less than the TTL ago. True when created."""
        ref = meta.get_controller_of(obj)
        if ref is None or ref.get("kind") != self.kind:
            return False
        ns = meta.namespace(obj)
        job_key, obj_key = f"{ns}/{ref.get('name')}", f"{gvr.resource}/{ns}/{meta.name(obj)}"
        job = self.resolve_controller_ref(ns, ref)
        if job is None:
            self.log.info("owner gone, not recreating", key=job_key, object=obj_key)
            return False
        if job_key in self.prevent_recreation:
            return False
        if self._should_recreate is not None and not self._should_recreate(self, gvr, job, obj):
            return False
        if not self.job_is_live(job):
            self.log.info("owner is being deleted, not recreating", key=job_key, object=obj_key)
            return False
        slot_key = recreation_key(gvr, ns, meta.name(obj))
        if not self.recreated_pods.try_mark(slot_key, meta.uid(job)):
            self.log.info("recreated moments ago, not recreating again", key=job_key, object=obj_key)
            return False
        try:
            self.clientset.resource(gvr, ns).create(object_for_recreation(obj))
        except errors.AlreadyExistsError:
            return False
        except errors.ApiError as exc:
            self.recreated_pods.unmark(slot_key)
            self.log.warning("recreation failed", key=job_key, object=obj_key, error=str(exc))
            return False
        self.expect_creation(job, gvr, meta.name(obj))
        self.log.info("recreated an object deleted from under its job", key=job_key, object=obj_key)
        self.events.event(job, NORMAL, "Recreated", f"recreated {lookup(gvr).kind} {meta.name(obj)} deleted from under it")
        return True

    def create_owned(self, gvr: GroupVersionResource, job: Obj, obj: dict[str, Any], what: str = "") -> dict[str, Any] | None:
        """Create ``obj`` for ``job``; Event ``SuccessfulCreate`` (one per sync, at its end: ``sync_scope``) and the
        created object, ``None`` when it exists already (our cache is behind), or Event ``FailedCreate`` and the
        error raised."""
        what = what or lookup(gvr).kind
        name = meta.name(obj) or meta.generate_name(obj)
        key = f"{meta.namespace(job)}/{meta.name(job)}"
        try:
            created = self.clientset.resource(gvr, meta.namespace(job)).create(obj)
        except errors.AlreadyExistsError:
            self.log.info(f"{what} exists already", key=key, name=name)
            return None
        except errors.ApiError as exc:
            self.events.event(job, WARNING, "FailedCreate", f"error creating {what} {name}: {exc.message}")
            raise
        self.log.info(f"created {what}", key=key, name=meta.name(created))
        told_later: list[str] | None = getattr(self._sync_scope, "created", None)
        if told_later is not None:
            told_later.append(f"{what} {meta.name(created)}")
        else:
            self.events.event(job, NORMAL, "SuccessfulCreate", created_message([f"{what} {meta.name(created)}"]))
        return created

    def update_owned(self, gvr: GroupVersionResource, job: Obj, obj: dict[str, Any], what: str = "") -> dict[str, Any]:
        """Update ``obj`` (spec, not status); Event ``SuccessfulUpdate``, or ``FailedUpdate`` and the error raised."""
        what = what or lookup(gvr).kind
        try:
            updated = self.clientset.resource(gvr, meta.namespace(obj)).update(obj)
        except errors.ApiError as exc:
            self.events.event(job, WARNING, "FailedUpdate", f"error updating {what} {meta.name(obj)}: {exc.message}")
            raise
        self.log.info(f"updated {what}", key=f"{meta.namespace(job)}/{meta.name(job)}", name=meta.name(obj))
        self.events.event(job, NORMAL, "SuccessfulUpdate", f"updated {what} {meta.name(obj)}")
        return updated

    def delete_object(self, gvr: GroupVersionResource, namespace: str, name: str) -> bool:
        """Delete ``namespace/name``; False when it was already gone."""
        try:
            self.clientset.resource(gvr, namespace).delete(name)
        except errors.NotFoundError:
            return False
        return True

    # -- the edge -------------------------------------------------------------------------------------------------
    def send_to_edge(self, node: str, operation: str, obj: Obj) -> None:
        """Queue ``operation`` of ``obj`` (kind set) for ``node``; nothing without an edge link or a node."""
        if self.edge is None or not node:
            return
        self.edge.send_to_edge(node, operation, self.typed(obj))

    def log_edge_skip(self, obj: Obj, why: str) -> None:
        self.log.warning("not sent to the edge", key=f"{meta.namespace(obj)}/{meta.name(obj)}", reason=why)

    def log_report_dropped(self, msg: UpstreamMessage, why: str) -> None:
        self.log.warning("edge report dropped", key=f"{msg.namespace}/{msg.name}", node=msg.node, reason=why)
