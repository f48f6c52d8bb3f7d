"""``MessageLayer``: the GM's ``EdgeLink`` — per-node outgoing queues, connected sessions, upstream validation.

The websocket server (``server.py``) hands it sessions and frames; controllers use the ``EdgeLink`` methods.
Guarantees beyond ``EdgeLink``'s:
* A (re)connecting node gets what it missed and the full current state for it from the state sources (re-sent as
  ``insert``, coalesced with what waits); a second connection of the same node replaces (closes) the first.
* An upstream frame is accepted only if it decodes, is a ``status`` of a kind with a handler, about an object the
  node currently has routed to it (its latest queued message was insert/update), and applied only when the node is
  entitled to it (the handler raises ``NotEntitled`` otherwise). Anything else is counted in
  ``sedna_gm_edge_rejected_frames_total{reason}`` and dropped, the connection staying; it is logged with the node and
  the reason, at most once per node and reason per ``log_interval`` (the line says how many were not logged since),
  so a node sending bad frames in a loop cannot flood the log.
* With the ``ack`` extension a report id is applied at most once per node; it is acked once applied or refused.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import orjson
import structlog
from prometheus_client import CollectorRegistry

from apis.edge import (
    ACK,
    DELETE,
    DOWNSTREAM_OPERATIONS,
    FEATURE_ACK,
    FEATURE_RESYNC,
    HELLO,
    INSERT,
    RESYNC,
    STATUS,
    Frame,
    FrameError,
    Header,
    decode_frame,
    encode_frame,
    is_legacy_hello,
    object_frame,
)
from apis.logthrottle import DEFAULT_LOG_INTERVAL, LogThrottle
from globalmanager.runtime.edge import (
    IncompleteState,
    InvalidReport,
    NotEntitled,
    StateSource,
    UpstreamHandler,
    UpstreamMessage,
)

from .dispatcher import Outcome, Report, UpstreamDispatcher
from .metrics import EdgeMetrics
from .node import DEFAULT_MAX_SEEN_IDS, Node, ObjectKey, Outgoing, Wake
from .session import Session, run_writer

__all__ = ["DEFAULT_MAX_PENDING_REPORTS", "MessageLayer"]

log = structlog.get_logger("sedna-gm.edge")

DEFAULT_MAX_PENDING_REPORTS = 10_000
MAX_LOGGED_REFUSALS = 1024  # (node, reason) pairs tracked for refusal logs at once
OTHER_REFUSALS = ("(other nodes)", "(any reason)")
REFUSED_REASONS = (InvalidReport.reason, NotEntitled.reason)  # how a handler refuses a report
_KNOWN_OPERATIONS = frozenset((*DOWNSTREAM_OPERATIONS, STATUS, HELLO, ACK, RESYNC))


def _key_of(obj: Mapping[str, Any]) -> ObjectKey:
    md = obj.get("metadata") or {}
    return (obj.get("kind") or "").lower(), md.get("namespace") or "", md.get("name") or ""


class MessageLayer:
    """The GM's side of the edge link. ``start()`` starts the upstream workers; the server feeds it connections."""

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        *,
        upstream_workers: int = 4,
        max_pending_reports: int = DEFAULT_MAX_PENDING_REPORTS,
        max_seen_ids: int = DEFAULT_MAX_SEEN_IDS,
        log_interval: float = DEFAULT_LOG_INTERVAL,
    ) -> None:
        self.metrics = EdgeMetrics(registry if registry is not None else CollectorRegistry())
        self.max_pending_reports = max_pending_reports
        self._max_seen_ids = max_seen_ids
        self._lock = threading.Lock()
        self._nodes: dict[str, Node] = {}
        self._sources: dict[str, StateSource] = {}
        self._dispatcher = UpstreamDispatcher(self._report_finished, workers=upstream_workers)
        self.refusal_log: LogThrottle[tuple[str, str]] = LogThrottle(log_interval, max_keys=MAX_LOGGED_REFUSALS,
                                                                     overflow=OTHER_REFUSALS)

    # -- EdgeLink ---------------------------------------------------------------------------------------------------
    def send_to_edge(self, node: str, operation: str, obj: Mapping[str, Any]) -> None:
        if operation not in DOWNSTREAM_OPERATIONS:
            raise ValueError(f"unknown downstream operation {operation!r}; expected one of {DOWNSTREAM_OPERATIONS}")
        frame = object_frame(operation, obj)
        h = frame.header
        msg = Outgoing((h.resource_kind, h.namespace, h.resource_name), operation, encode_frame(frame))
        with self._lock:  # held so that an idle node is never forgotten between lookup and put
            target = self._node(node)
            target.put(msg)
            if operation == DELETE:
                self._forget_if_idle(target)

    def add_upstream_handler(self, kind: str, handler: UpstreamHandler) -> None:
        self._dispatcher.add_handler(kind, handler)

    def add_state_source(self, kind: str, source: StateSource) -> None:
        key = kind.lower()
        with self._lock:
            if key in self._sources:
                raise ValueError(f"a state source for kind {key!r} is already registered")
            self._sources[key] = source

    # -- lifecycle --------------------------------------------------------------------------------------------------
    def start(self) -> None:
        self._dispatcher.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._dispatcher.stop(timeout)

    def pending_reports(self) -> int:
        return self._dispatcher.pending()

    def overloaded(self) -> bool:
        """Too many reports wait: the server stops reading frames until they drain."""
        return self._dispatcher.pending() >= self.max_pending_reports

    def pending_messages(self, node: str) -> int:
        with self._lock:
            found = self._nodes.get(node)
        return found.pending() if found is not None else 0

    def connected_nodes(self) -> list[str]:
        with self._lock:
            return sorted(name for name, n in self._nodes.items() if n.session is not None)

    # -- sessions ---------------------------------------------------------------------------------------------------
    def attach(self, session: Session) -> Frame | None:
        """Make ``session`` the node's connection (closing an older one) and queue the node's full state.

        Returns the ``resync`` frame to send first when the session negotiated it. Call from a worker thread: state
        sources read caches and may call the API server.
        """
        with self._lock:
            node = self._node(session.node)
            with node.lock:
                old, node.session = node.session, session
            if old is None:
                self.metrics.connected_nodes.inc()
            sources = dict(self._sources)
        if old is not None:
            log.info("node connected again; closing its older connection", node=session.node)
            old.close(1000, "replaced by a newer connection of the same node")
            node.queue.add(Wake(old.id))
        objects: list[dict[str, str]] = []
        complete: list[str] = []  # the kinds whose source answered in full: only these may be resynced
        for kind, source in sources.items():
            try:
                state = list(source(session.node))
                complete.append(kind)
            except IncompleteState as partial:
                log.warning("state source answered in part; the node keeps what it holds of this kind",
                            node=session.node, kind=kind, sent=len(partial.objects), reason=str(partial))
                state = partial.objects
            except Exception:
                log.exception("state source failed; the node gets only the queued messages and keeps what it holds "
                              "of this kind", node=session.node, kind=kind)
                continue
            for obj in state:
                key = _key_of(obj)
                # the node may hold it from before (a GM restart forgets what was delivered): a delete queued from now
                # on must reach it, not just cancel this insert
                node.assume_held(key)
                self.send_to_edge(session.node, INSERT, obj)
                objects.append({"kind": key[0], "namespace": key[1], "name": key[2]})
        log.info("node connected", node=session.node, features=sorted(session.features), objects=len(objects),
                 pending=node.pending())
        if FEATURE_RESYNC not in session.features:
            return None
        body = {"kinds": sorted(complete), "objects": objects}
        return Frame(Header(operation=RESYNC), orjson.dumps(body))

    def start_writer(self, session: Session) -> None:
        with self._lock:
            node = self._node(session.node)
        threading.Thread(
            target=run_writer, args=(session, node, self._sent), name=f"edge-writer-{session.node}", daemon=True
        ).start()

    def detach(self, session: Session) -> None:
        session.closed.set()
        with self._lock:
            node = self._nodes.get(session.node)
            if node is None:
                return
            with node.lock:
                current = node.session is session
                if current:
                    node.session = None
            if current:
                self.metrics.connected_nodes.dec()
            node.queue.add(Wake(session.id))
            self._forget_if_idle(node)
        if current:
            log.info("node disconnected", node=session.node, pending=node.pending())

    # -- upstream ---------------------------------------------------------------------------------------------------
    def receive(self, session: Session, data: str | bytes) -> None:
        """Validate one frame from ``session`` and queue it for its handler; bad frames are logged and dropped."""
        try:
            frame = decode_frame(data)
        except FrameError as exc:
            self.reject(session, None, exc.reason, str(exc))
            return
        h = frame.header
        if is_legacy_hello(frame):  # Go's LC greets with an empty header
            self.metrics.frames.labels("up", HELLO).inc()
            return
        self.metrics.frames.labels("up", h.operation if h.operation in _KNOWN_OPERATIONS else "other").inc()
        if h.operation != STATUS:
            self.reject(session, frame, "unknown_operation", f"operation {h.operation!r} (only 'status' goes up)")
            return
        kind = h.resource_kind.lower()
        if not self._dispatcher.has_handler(kind):
            self.reject(session, frame, "unknown_kind", f"no handler for kind {h.resource_kind!r}")
            return
        key = (kind, h.namespace, h.resource_name)
        with self._lock:
            node = self._nodes.get(session.node)
        if node is None or not node.is_routed(key):
            self.reject(session, frame, "not_routed", "a report about an object this node was not sent")
            return
        try:
            content = frame.json()
        except FrameError as exc:
            self.reject(session, frame, exc.reason, str(exc))
            return
        if not isinstance(content, dict):
            self.reject(session, frame, "bad_content", "status content must be a JSON object")
            return
        report_id = h.id if FEATURE_ACK in session.features else ""
        if report_id:
            applied = node.first_sight(report_id)
            if applied:  # a resend of a report already applied: only ack it again
                self._ack(session.node, frame.header, None)
                return
            if applied is False:  # still being applied: its ack follows
                return
        message = UpstreamMessage(session.node, h.namespace, kind, h.resource_name, STATUS, content)
        self._dispatcher.submit(Report(message, report_id))

    def reject(self, session: Session, frame: Frame | None, reason: str, detail: str) -> None:
        """Count and log a dropped frame (acking it with the error when it carries an id)."""
        self.metrics.rejected_frames.labels(reason).inc()
        h = frame.header if frame is not None else Header()
        seen = self.refusal_log.admit((session.node, reason))
        if seen.due:
            log.warning("dropped a bad frame from a node", node=session.node, reason=reason, detail=detail,
                        kind=h.resource_kind, object=f"{h.namespace}/{h.resource_name}", operation=h.operation,
                        untold=seen.untold)
        if frame is not None and h.id and FEATURE_ACK in session.features:
            self._ack(session.node, h, f"{reason}: {detail}")

    def _report_finished(self, report: Report, outcome: Outcome) -> None:
        m = report.message
        if outcome.reason in REFUSED_REASONS:
            self.metrics.rejected_frames.labels(outcome.reason).inc()
            seen = self.refusal_log.admit((m.node, outcome.reason))
            if seen.due:
                log.warning("refused a report from a node", node=m.node, reason=outcome.reason, detail=outcome.error,
                            kind=m.kind, object=f"{m.namespace}/{m.name}", untold=seen.untold)
        if not report.id:
            return
        with self._lock:
            node = self._nodes.get(m.node)
        if node is not None:
            node.applied(report.id)
        self._ack(m.node, Header(m.namespace, m.kind, m.name, ACK, report.id), outcome.error)

    def flush_logs(self) -> None:
        """One line per node and reason whose refusals were not all logged in the last interval."""
        for (node, reason), untold in self.refusal_log.flush():
            log.warning("refusals not logged one by one", node=node, reason=reason, untold=untold,
                        interval_seconds=self.refusal_log.interval)

    def _ack(self, node_name: str, header: Header, error: str | None) -> None:
        with self._lock:
            node = self._nodes.get(node_name)
            session = node.session if node is not None else None
        if session is None or FEATURE_ACK not in session.features:
            return  # the LC resends after its next connection; the id is known by then
        ack = Header(header.namespace, header.resource_kind, header.resource_name, ACK, header.id)
        session.send_soon(encode_frame(Frame(ack, orjson.dumps({"error": error} if error else {}))))
        self.metrics.frames.labels("down", ACK).inc()

    # -- internals --------------------------------------------------------------------------------------------------
    def _node(self, name: str) -> Node:
        """The node's state, created on first use; call with ``_lock`` held."""
        node = self._nodes.get(name)
        if node is None:
            node = Node(name, self._set_pending, self._max_seen_ids)
            self._nodes[name] = node
        return node

    def _forget_if_idle(self, node: Node) -> None:
        """Drop an idle, disconnected node's state; call with ``_lock`` held."""
        if node.idle() and self._nodes.get(node.name) is node:
            del self._nodes[node.name]
            node.queue.shut_down()  # its retry timer thread, if one was started
            try:
                self.metrics.pending_messages.remove(node.name)
            except KeyError:
                pass

    def _set_pending(self, node: str, count: int) -> None:
        self.metrics.pending_messages.labels(node).set(count)

    def _sent(self, operation: str) -> None:
        self.metrics.frames.labels("down", operation).inc()
