"""Pod-lifecycle simulator: plays the scheduler, the kubelets and the Deployment and ReplicaSet controllers on an
ObjectTracker.

A new pod is bound to ``default_node`` when it has no ``spec.nodeName``, stays Pending for
``sandbox.sedna.io/start-delay-seconds`` (default ``start_delay``, 0), then runs (phase Running, IPs, startTime, conditions
PodScheduled/Initialized/ContainersReady/Ready, one running containerStatus per container). With
``sandbox.sedna.io/run-seconds: "N"`` it exits after N seconds with ``sandbox.sedna.io/exit-code`` (default 0):
Succeeded for 0, Failed otherwise. Annotation values may be fractions (``"0.2"``).

Guarantees: the simulator never overwrites a terminal phase (Succeeded/Failed) and acts only on transitions it
owns, so a client may always set pod status through ``pods/status``. Status writes go through the status
subresource and are retried on conflict from a fresh read. Pods on a NotReady node do not start, and running pods
lose readiness while their node is NotReady. A pod bound to a node that does not exist registers that node
(Ready), so that pods pinned to edge nodes run without setup (and so does a custom resource naming one); with
``strict_nodes`` only ``nodes`` and ``default_node`` exist, and such a pod stays Pending (``PodScheduled`` False, a
``FailedScheduling`` Event). The scheduler's and kubelet's Events are written (``pod_events``). With
``sandbox.sedna.io/crash-loop: "true"`` a pod runs but its containers keep crashing (CrashLoopBackOff, restarts counted with the kubelet's back-off, never
ready). Its parts: the kubelets' in ``sandbox.kubelet`` (``nodes``, pod ``status``, ``timers``, ``pod_events``), the
steering annotations in ``sandbox.steering``, the Deployment and ReplicaSet controllers in ``sandbox.controllers``.

Threads: one pump per watched resource (pods, replica sets, deployments, nodes) blocking on the tracker watch, and
one worker that blocks on its queue until the next item or the next due timer (a heap); no polling.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from apis import meta
from apis.errors import ApiError, is_conflict, is_not_found
from apis.fake.tracker.watch import GATHER_SECONDS
from apis.logs import get_logger
from apis.resources import DEPLOYMENTS, NODES, PODS, REPLICA_SETS, GroupVersionResource, ResourceInfo
from apis.watch import BOOKMARK, DELETED, ERROR, ListOptions, Watch
from sandbox.controllers.deployments import DeploymentSimulator
from sandbox.controllers.replicasets import TERMINAL_PHASES, ReplicaSetSimulator, pod_is_ready
from sandbox.kubelet.nodes import SimulatedNodes
from sandbox.kubelet.pod_events import PodEvents
from sandbox.kubelet.status import (
    crash_loop_status,
    pending_status,
    running_status,
    terminated_status,
    unschedulable_status,
    with_readiness,
)
from sandbox.kubelet.timers import Timers

from .steering import (
    ANNOTATION_CRASH_LOOP,
    ANNOTATION_EXIT_CODE,
    ANNOTATION_RUN_SECONDS,
    ANNOTATION_START_DELAY,
    steering_of,
)
from .tracker_api import TrackerAPI

__all__ = [
    "PodSimulator",
    "ANNOTATION_START_DELAY",
    "ANNOTATION_RUN_SECONDS",
    "ANNOTATION_EXIT_CODE",
    "ANNOTATION_CRASH_LOOP",
    "DEFAULT_NODE",
]

log = get_logger(__name__)

DEFAULT_NODE = "sandbox-node"
_MAX_CONFLICT_RETRIES = 10
_MAX_WAIT = 3600.0  # the worker wakes at least hourly, whatever its timers say
_REWATCH_DELAY = 0.5  # after a watch could not be started
_BACK_OFF_SECONDS, _MAX_BACK_OFF_SECONDS = 10.0, 300.0  # the kubelet's container restart back-off


@dataclass
class _PodState:
    uid: str
    first_seen: float
    started_at: float | None = None
    node_ready_applied: bool | None = None
    restarts: int = 0
    next_restart: float = 0.0
    unschedulable_reported: bool = False


def _stored_events(watch: Watch) -> Iterator[Any]:
    """The watch's events with the stored objects themselves (read here, never changed), every queued one at once
    (a few at a time when they come fast); a watch of another tracker-like store is just iterated."""
    if not hasattr(watch, "next_events"):
        yield from watch
        return
    while True:
        try:
            events = watch.next_events(None, copy=False, gather=GATHER_SECONDS)
        except StopIteration:
            return
        yield from events


class PodSimulator:
    """See the module doc. ``clock`` (monotonic seconds) is injectable; ``tick`` coalesces timers due together: they
    are handled at most ``tick`` seconds after they are due, never before."""

    def __init__(
        self,
        tracker: TrackerAPI,
        default_node: str = DEFAULT_NODE,
        tick: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
        auto_register_nodes: bool = True,
        strict_nodes: bool = False,
        nodes: Sequence[str] = (),
        start_delay: float = 0.0,
    ) -> None:
        self.tracker = tracker
        self.default_node = default_node
        self.tick = tick
        self.clock = clock
        self.strict_nodes = strict_nodes or not auto_register_nodes
        self.initial_nodes = tuple(nodes)
        self.start_delay = start_delay
        self.nodes = SimulatedNodes(tracker, not self.strict_nodes)
        self.events = PodEvents(tracker)
        self.deployments = DeploymentSimulator(tracker)
        self.replicasets = ReplicaSetSimulator(tracker)
        self._queue: queue.Queue[tuple[str, str, str] | None] = queue.Queue()
        self._pending: set[tuple[str, str, str]] = set()
        self._timers: Timers[tuple[str, str, str]] = Timers()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._watches: set[Any] = set()
        self._pods: dict[tuple[str, str], _PodState] = {}
        self._written: dict[tuple[str, str], int] = {}  # pod → resourceVersion of this simulator's last write
        self._ips = itertools.count(2)

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def start(self) -> PodSimulator:
        """Register the default node (Ready) if absent and start the threads; returns self."""
        if self._threads:
            raise RuntimeError("PodSimulator already started")
        self._stop.clear()
        try:
            self.tracker.get(NODES, "", self.default_node)
        except ApiError as err:
            if not is_not_found(err):
                raise
            self.add_node(self.default_node)
        for name in self.initial_nodes:
            if self.tracker.peek(NODES, "", name) is None:
                self.add_node(name)
        observers = getattr(self.tracker, "custom_write_observers", None)
        if not self.strict_nodes and observers is not None:
            observers.append(self._register_named_nodes)
        self._threads = [threading.Thread(target=self._work, name="sandbox-kubelet", daemon=True)]
        for gvr in (PODS, REPLICA_SETS, DEPLOYMENTS, NODES):
            self._threads.append(
                threading.Thread(target=self._pump, args=(gvr,), name=f"sandbox-kubelet-{gvr.resource}", daemon=True)
            )
        for thread in self._threads:
            thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the watches and join every thread. Idempotent."""
        self._stop.set()
        observers = getattr(self.tracker, "custom_write_observers", None)
        if observers is not None and self._register_named_nodes in observers:
            observers.remove(self._register_named_nodes)
        with self._lock:
            watches = list(self._watches)
        for watch in watches:
            watch.stop()
        self._queue.put(None)
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []

    # -- nodes ----------------------------------------------------------------------------------------------------
    def add_node(self, name: str, ready: bool = True) -> dict[str, Any]:
        """Register a node (or set the readiness of an existing one); returns the stored node."""
        return self.nodes.add(name, ready)

    def _register_named_nodes(self, info: ResourceInfo, obj: dict[str, Any]) -> None:
        """Lenient nodes: a custom resource's nodes (a Sedna job's workers, a Dataset) exist before it is stored, as
        a pod's node is registered when the pod is bound to it."""
        try:
            self.nodes.register_named(obj)
        except Exception:  # never fails the write that named them
            log.exception("sandbox kubelet could not register a named node", key=f"{meta.namespace(obj)}/{meta.name(obj)}")

    def set_node_ready(self, name: str, ready: bool) -> dict[str, Any]:
        """Set the node's Ready condition (status subresource); raises NotFoundError for an unknown node."""
        return self.nodes.set_ready(name, ready)

    # -- threads --------------------------------------------------------------------------------------------------
    def _pump(self, gvr: GroupVersionResource) -> None:
        """Feed watch events of ``gvr`` to the worker; re-watch when the tracker ends the stream."""
        resource_version: str | None = None
        while not self._stop.is_set():
            try:
                watch = self.tracker.watch(gvr, "", ListOptions(resource_version=resource_version))
            except Exception:
                log.exception("sandbox kubelet could not watch; retrying from a fresh list", resource=gvr.resource)
                resource_version = None
                self._stop.wait(_REWATCH_DELAY)
                continue
            with self._lock:
                self._watches.add(watch)
            if self._stop.is_set():
                watch.stop()
            try:
                for event in _stored_events(watch):
                    if event.type == ERROR:  # history expired: start over from a full initial list
                        resource_version = None
                        break
                    resource_version = meta.resource_version(event.object) or resource_version
                    if event.type != BOOKMARK:
                        self._on_event_logged(gvr, event.type, event.object)
            finally:
                watch.stop()
                with self._lock:
                    self._watches.discard(watch)
            self._stop.wait(0.05)  # a closed (slow) watcher resumes shortly from its last resourceVersion

    def _on_event_logged(self, gvr: GroupVersionResource, event_type: str, obj: Mapping[str, Any]) -> None:
        """``_on_event``; an object it cannot handle is logged and skipped, the pump goes on."""
        try:
            self._on_event(gvr, event_type, obj)
        except Exception:
            key = f"{meta.namespace(obj)}/{meta.name(obj)}"
            log.exception("sandbox kubelet skipped an event", resource=gvr.resource, key=key, event_type=event_type)

    def _on_event(self, gvr: GroupVersionResource, event_type: str, obj: Mapping[str, Any]) -> None:
        ns, name = meta.namespace(obj), meta.name(obj)
        if gvr == PODS:
            if event_type == DELETED:
                with self._lock:
                    state = self._pods.pop((ns, name), None)
                    self._written.pop((ns, name), None)
                    self._timers.cancel(("pod", ns, name))
                if state is not None and state.started_at is not None:
                    self.events.killing(obj, (obj.get("spec") or {}).get("nodeName") or "")
            elif not self._is_own_write(ns, name, obj):
                self._enqueue(("pod", ns, name))
            self._enqueue_controller(obj, event_type, "ReplicaSet", REPLICA_SETS)
        elif gvr == REPLICA_SETS:
            if event_type != DELETED:
                self._enqueue(("replicaset", ns, name))
            self._enqueue_controller(obj, event_type, "Deployment", DEPLOYMENTS)
        elif gvr == DEPLOYMENTS:
            if event_type != DELETED:
                self._enqueue(("deployment", ns, name))
        elif gvr == NODES:
            if event_type == DELETED:
                self.nodes.forget(name)
            self._enqueue(("node", "", name))

    def _enqueue_controller(
        self, obj: Mapping[str, Any], event_type: str, owner_kind: str, owner_gvr: GroupVersionResource
    ) -> None:
        """Enqueue the controller of ``obj`` if it is of ``owner_kind``, or, for an orphan that could be adopted,
        every such controller in its namespace whose selector matches it."""
        ns = meta.namespace(obj)
        owner = meta.get_controller_of(obj)
        if owner is not None:
            if owner.get("kind") == owner_kind:
                self._enqueue((owner_kind.lower(), ns, owner.get("name", "")))
            return
        if event_type == DELETED or meta.deletion_timestamp(obj) or not meta.labels(obj):
            return
        for candidate in self.tracker.list(owner_gvr, ns)["items"]:
            try:
                selector = meta.selector_from_label_selector((candidate.get("spec") or {}).get("selector"))
            except ValueError:
                continue
            if not selector.empty() and selector.matches(meta.labels(obj)):
                self._enqueue((owner_kind.lower(), ns, meta.name(candidate)))

    def _enqueue(self, item: tuple[str, str, str]) -> None:
        with self._lock:
            if item in self._pending:
                return
            self._pending.add(item)
        self._queue.put(item)

    def _schedule(self, due: float, item: tuple[str, str, str]) -> None:
        with self._lock:
            changed = self._timers.schedule(item, due)
        if changed:
            self._queue.put(None)  # wake the worker so it recomputes its wait

    def _work(self) -> None:
        """The worker loop: no object can end it (``_sync`` logs per-object failures, anything else is logged)."""
        while not self._stop.is_set():
            try:
                self._work_once()
            except Exception:
                log.exception("sandbox kubelet worker error; continuing")

    def _work_once(self) -> None:
        with self._lock:
            due = self._timers.next_due()
        # wake a tick after the earliest timer: the timers due within that tick are handled in one wake-up, and none
        # before it is due (a timer taken early would find its pod not due yet and be set again, over and over)
        wait = min(max(due + self.tick - self.clock(), 0.0), _MAX_WAIT) if due is not None else _MAX_WAIT
        try:
            item = self._queue.get(timeout=wait)
        except queue.Empty:
            item = None
        if self._stop.is_set():
            return
        items: list[tuple[str, str, str]] = []
        if item is not None:
            with self._lock:
                self._pending.discard(item)
            items.append(item)
        with self._lock:
            for due_item in self._timers.pop_due(self.clock()):
                if due_item not in items:
                    items.append(due_item)
        for it in items:
            self._sync(it)

    def _sync(self, item: tuple[str, str, str]) -> None:
        kind, ns, name = item
        for _ in range(_MAX_CONFLICT_RETRIES):
            try:
                recheck = None
                if kind == "pod":
                    self._sync_pod(ns, name)
                elif kind == "replicaset":
                    recheck = self.replicasets.sync(ns, name)
                elif kind == "deployment":
                    recheck = self.deployments.sync(ns, name)
                else:
                    self._sync_node(name)
                if recheck is not None:
                    self._schedule(self.clock() + recheck, item)
                return
            except ApiError as err:
                if is_conflict(err):
                    continue  # somebody wrote in between: redo from a fresh read
                if not is_not_found(err):
                    log.warning("sandbox kubelet sync failed", key=f"{ns}/{name}", kind=kind, error=str(err))
                return
            except Exception:
                log.exception("sandbox kubelet sync crashed", key=f"{ns}/{name}", kind=kind)
                return
        log.warning("sandbox kubelet gave up after conflicts", key=f"{ns}/{name}", kind=kind)

    # -- pods -----------------------------------------------------------------------------------------------------
    def _sync_node(self, name: str) -> None:
        for pod in self.tracker.list(PODS, "")["items"]:
            if (pod.get("spec") or {}).get("nodeName") == name:
                self._enqueue(("pod", meta.namespace(pod), meta.name(pod)))

    def _sync_pod(self, ns: str, name: str) -> None:
        pod = self.tracker.peek(PODS, ns, name)  # the stored pod: read, never changed
        if pod is None:  # gone, its DELETED event possibly missed (a relist after an ERROR)
            with self._lock:
                self._pods.pop((ns, name), None)
                self._written.pop((ns, name), None)
            return
        if meta.deletion_timestamp(pod):
            return
        phase = (pod.get("status") or {}).get("phase") or "Pending"
        if phase in TERMINAL_PHASES:
            with self._lock:
                self._pods.pop((ns, name), None)
                self._timers.cancel(("pod", ns, name))
            return
        now = self.clock()
        with self._lock:
            state = self._pods.get((ns, name))
            if state is None or state.uid != meta.uid(pod):
                state = self._pods[(ns, name)] = _PodState(meta.uid(pod), first_seen=now)
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:  # the scheduler's part: bind it (spec.nodeName never changes through an update)
            node = self.default_node
            pod = self._wrote(self.tracker.bind(ns, name, node))
            self.events.scheduled(pod, node)
        node_ready = self.nodes.ready(node)
        steering = steering_of(pod, self.start_delay)
        crash_loop = meta.annotations(pod).get(ANNOTATION_CRASH_LOOP, "").lower() == "true"
        if phase == "Pending" and state.started_at is None:
            if node_ready is None and not state.unschedulable_reported:  # strict nodes: no such node
                self._report_unschedulable(pod, node)
                state.unschedulable_reported = True
            if not node_ready:
                return  # no kubelet to start it; a node event re-enqueues the pod
            due = state.first_seen + steering.start_delay
            if now < due:
                self._schedule(due, ("pod", ns, name))
                if not (pod.get("status") or {}).get("containerStatuses"):  # containers not reported as creating yet
                    self._write_status(pod, pending_status(pod))
                return
            if crash_loop:
                state.started_at, phase = now, "Running"
            else:
                pod = self._write_status(pod, running_status(pod, self._next_pod_ip(), self.nodes.ip(node)))
                state.started_at, state.node_ready_applied, phase = now, True, "Running"
            self.events.started(pod, node)
        if phase != "Running":
            return
        if state.started_at is None:  # a client moved it to Running: its run time counts from now
            state.started_at = now
        if crash_loop:
            if now >= state.next_restart:
                self._crash(pod, state, node, now, steering.exit_code or 1)
            self._schedule(state.next_restart, ("pod", ns, name))
            return
        if steering.run_seconds is not None:
            due = state.started_at + steering.run_seconds
            if now >= due:
                self._write_status(pod, terminated_status(pod, steering.exit_code))
                with self._lock:
                    self._pods.pop((ns, name), None)
                return
            self._schedule(due, ("pod", ns, name))
        if state.node_ready_applied is not None and bool(node_ready) != state.node_ready_applied:
            self._write_status(pod, with_readiness(pod, bool(node_ready)))
            state.node_ready_applied = bool(node_ready)
        elif state.node_ready_applied is None:
            state.node_ready_applied = pod_is_ready(pod)

    def _crash(self, pod: Mapping[str, Any], state: _PodState, node: str, now: float, exit_code: int) -> None:
        """Its containers crashed (again): one more restart, the next one after the kubelet's back-off."""
        state.restarts += 1
        back_off = min(_BACK_OFF_SECONDS * 2 ** (state.restarts - 1), _MAX_BACK_OFF_SECONDS)
        minutes, seconds = divmod(int(back_off), 60)
        shown = f"{minutes}m{seconds}s" if minutes else f"{seconds}s"
        self._write_status(pod, crash_loop_status(pod, self._next_pod_ip(), self.nodes.ip(node), state.restarts,
                                                  exit_code, shown))
        self.events.back_off(pod, node)
        state.next_restart = now + back_off

    def _report_unschedulable(self, pod: Mapping[str, Any], node: str) -> None:
        """A pod bound to a node that does not exist stays Pending: PodScheduled False and a FailedScheduling
        Event say why (strict nodes)."""
        known = len(self.tracker.list(NODES, "")["items"])
        log.warning("sandbox kubelet: pod bound to an unknown node stays Pending",
                    key=f"{meta.namespace(pod)}/{meta.name(pod)}", node=node)
        self._write_status(pod, unschedulable_status(pod, f'node "{node}" not found'))
        self.events.failed_scheduling(pod, node, known)

    def _next_pod_ip(self) -> str:
        with self._lock:
            n = next(self._ips)
        return f"10.244.{n // 250 % 256}.{n % 250 + 2}"

    def _write_status(self, pod: Mapping[str, Any], status: dict[str, Any]) -> dict[str, Any]:
        # a status write takes only the status (a new dict, never changed afterwards): the rest is the stored pod's,
        # with metadata of its own (the tracker may set its namespace); the answer is the stored pod, only read
        updated = {**pod, "metadata": dict(pod["metadata"]), "status": status}
        return self._wrote(self.tracker.update(PODS, updated, meta.namespace(pod), subresource="status", copy=False,
                                               trusted=True))

    def _wrote(self, pod: dict[str, Any]) -> dict[str, Any]:
        """Remember the resourceVersion of a pod this simulator just wrote (its own watch event needs no sync)."""
        rv = meta.resource_version(pod)
        if rv.isdigit():
            with self._lock:
                self._written[(meta.namespace(pod), meta.name(pod))] = int(rv)
        return pod

    def _is_own_write(self, ns: str, name: str, pod: Mapping[str, Any]) -> bool:
        """The event shows the pod as this simulator last wrote it (or older): nothing new to react to."""
        rv = meta.resource_version(pod)
        with self._lock:
            written = self._written.get((ns, name))
        return written is not None and rv.isdigit() and int(rv) <= written
