"""The LC's websocket client to the GM (Go Sedna's ``gmclient``), with the extensions of docs/edge.md.

* Connects to ``ws(s)://<gm>/`` with ``Node-Name`` (and ``Authorization: Bearer`` with a token; a ``TokenFile`` is
  read again on each attempt when it changed, so a rotated token is picked up without a restart); reconnects forever
  with exponential backoff and full jitter from 0.5 s to 30 s (reset after a connection that lasted
  ``STABLE_CONNECTION_SECONDS``, so a GM that accepts and then drops the LC at once is not redialled in a tight loop).
  Keepalive pings every ``ping_interval``; a GM silent for another interval is dropped and redialled.
* Opens with ``hello`` offering ``ack`` and ``resync``; a GM that does not answer with ``hello`` within
  ``hello_timeout`` (Go Sedna's) is spoken to exactly as Go's LC does: no ids, reports sent once.
* Reports (``report``) go to the database outbox first. With ``ack`` they carry ``header.id`` =
  ``<database epoch>-<sequence>`` and stay until the GM acks them; after a reconnect every unacked report is sent
  again, in order. Without ``ack`` a report leaves the outbox once written to the socket. A report whose frame is
  over ``max_report_bytes`` (the GM's default ``websocket.maxFrameBytes``) is dropped with an error: the GM would close
  the connection on it, and resending it first on every connection would block every later report.
* Downstream frames are handed to ``on_frame`` in arrival order; ``resync`` to ``on_resync``.
"""

from __future__ import annotations

import random
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import orjson
import structlog
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from apis.edge import (
    ACK,
    FEATURE_ACK,
    FEATURES,
    HELLO,
    NODE_NAME_HEADER,
    RESYNC,
    STATUS,
    Frame,
    FrameError,
    Header,
    decode_frame,
    encode_frame,
    hello_frame,
    parse_features,
)
from apis.tokenfile import TokenFile

from .store import OutboxEntry, Store

__all__ = ["MAX_REPORT_BYTES", "STABLE_CONNECTION_SECONDS", "Backoff", "GMClient"]

log = structlog.get_logger("sedna-lc.gmclient")

BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 30.0
HELLO_TIMEOUT = 2.0
PING_INTERVAL = 20.0
STABLE_CONNECTION_SECONDS = 10.0
MAX_REPORT_BYTES = 16 * 1024 * 1024  # the GM's default websocket.maxFrameBytes
_SEND_BATCH = 256


class Backoff:
    """Exponential backoff with full jitter: the n-th delay is uniform in [initial·2^n / 2, initial·2^n], capped."""

    def __init__(self, initial: float = BACKOFF_INITIAL, maximum: float = BACKOFF_MAX,
                 rng: random.Random | None = None) -> None:
        self.initial = initial
        self.maximum = maximum
        self._attempt = 0
        self._rng = rng or random.Random()

    def next(self) -> float:
        ceiling = min(self.maximum, self.initial * 2 ** self._attempt)
        self._attempt = min(self._attempt + 1, 32)
        return self._rng.uniform(ceiling / 2, ceiling)

    def reset(self) -> None:
        self._attempt = 0


class GMClient:
    def __init__(
        self,
        url: str,
        node: str,
        store: Store,
        on_frame: Callable[[Frame], None],
        on_resync: Callable[[Any], Any],
        *,
        token: str | TokenFile = "",
        ssl_context: ssl.SSLContext | None = None,
        ping_interval: float = PING_INTERVAL,
        hello_timeout: float = HELLO_TIMEOUT,
        on_connection_change: Callable[[bool], None] | None = None,
        backoff: Backoff | None = None,
        max_report_bytes: int = MAX_REPORT_BYTES,
    ) -> None:
        self.url = url
        self.node = node
        self.store = store
        self.connected = threading.Event()
        self.features: frozenset[str] = frozenset()
        self._on_frame = on_frame
        self._on_resync = on_resync
        self._token = token
        self._ssl = ssl_context
        self._ping_interval = ping_interval
        self._hello_timeout = hello_timeout
        self._on_connection_change = on_connection_change or (lambda up: None)
        self._backoff = backoff or Backoff()
        self._max_report_bytes = max_report_bytes
        self._outbox = threading.Condition()
        self._conn: ClientConnection | None = None
        self._thread: threading.Thread | None = None

    # -- upstream ---------------------------------------------------------------------------------------------------
    def report(self, namespace: str, kind: str, name: str, content: Mapping[str, Any], *,
               state: tuple[str, Any] | None = None) -> None:
        """Queue a ``status`` report durably; it is sent when (and as soon as) the GM is connected. ``state=(key,
        value)`` is stored with it in one transaction (``Store.add_report``)."""
        self.store.add_report(namespace, kind, name, orjson.dumps(content), state=state)
        with self._outbox:
            self._outbox.notify_all()

    # -- lifecycle --------------------------------------------------------------------------------------------------
    def start(self, stop: threading.Event) -> None:
        self._thread = threading.Thread(target=self._run, args=(stop,), name="gm-client", daemon=True)
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        with self._outbox:
            self._outbox.notify_all()
        conn = self._conn
        if conn is not None:
            conn.close()
        if self._thread is not None:
            self._thread.join(timeout)

    def _headers(self) -> dict[str, str]:
        """The upgrade's headers; a ``TokenFile`` is checked on every attempt (a rotated token is picked up)."""
        headers = {NODE_NAME_HEADER: self.node}
        token = self._token.current() if isinstance(self._token, TokenFile) else self._token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    def _run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            opened: float | None = None
            try:
                with connect(self.url, additional_headers=self._headers(), ssl=self._ssl, open_timeout=10,
                             ping_interval=self._ping_interval, ping_timeout=self._ping_interval,
                             max_size=None, close_timeout=2) as conn:
                    opened = time.monotonic()
                    self._serve(conn, stop)
            except InvalidStatus as exc:
                log.error("the GM refused the connection", gm=self.url, status=exc.response.status_code,
                          reason=exc.response.body.decode(errors="replace").strip() if exc.response.body else "")
            except (OSError, InvalidHandshake, ConnectionClosed, TimeoutError) as exc:
                log.warning("connection to the GM failed or ended", gm=self.url, error=str(exc) or type(exc).__name__)
            except Exception:
                log.exception("GM client failed", gm=self.url)
            if opened is not None and time.monotonic() - opened >= STABLE_CONNECTION_SECONDS:
                self._backoff.reset()
            delay = self._backoff.next()
            if not stop.is_set():
                log.info("reconnecting to the GM", gm=self.url, delay=round(delay, 2))
            stop.wait(delay)

    def _serve(self, conn: ClientConnection, stop: threading.Event) -> None:
        conn.send(encode_frame(hello_frame(FEATURES)))
        first = self._negotiate(conn)
        self._conn = conn
        self.connected.set()
        self._on_connection_change(True)
        log.info("connected to the GM", gm=self.url, features=sorted(self.features))
        session_over = threading.Event()
        sender = threading.Thread(target=self._send_reports, args=(conn, stop, session_over), name="gm-sender",
                                  daemon=True)
        sender.start()
        try:
            if stop.is_set():  # join() may have missed this connection
                return
            if first is not None:
                self._dispatch(first)
            for data in conn:
                try:
                    frame = decode_frame(data)
                except FrameError as exc:
                    log.error("dropped a frame from the GM", reason=exc.reason, error=str(exc))
                    continue
                self._dispatch(frame)
        finally:
            session_over.set()
            self._conn = None
            self.connected.clear()
            self._on_connection_change(False)
            with self._outbox:
                self._outbox.notify_all()
            sender.join(5)

    def _negotiate(self, conn: ClientConnection) -> Frame | None:
        """Wait for the GM's ``hello``; returns a first frame that was something else (a Go GM)."""
        self.features = frozenset()
        try:
            data = conn.recv(timeout=self._hello_timeout)
        except TimeoutError:
            return None
        try:
            frame = decode_frame(data)
        except FrameError as exc:
            log.error("dropped a frame from the GM", reason=exc.reason, error=str(exc))
            return None
        if frame.header.operation != HELLO:
            return frame
        try:
            self.features = frozenset(f for f in parse_features(frame) if f in FEATURES)
        except FrameError as exc:
            log.error("the GM's hello is malformed; using no extension", error=str(exc))
        return None

    def _dispatch(self, frame: Frame) -> None:
        op = frame.header.operation
        if op == ACK:
            self._acked(frame)
        elif op == RESYNC:
            try:
                self._on_resync(frame.json())
            except FrameError as exc:
                log.error("dropped a resync frame", error=str(exc))
        elif op == HELLO:
            log.debug("ignored a late hello")
        else:
            self._on_frame(frame)

    def _acked(self, frame: Frame) -> None:
        epoch, _, seq = frame.header.id.rpartition("-")
        if epoch != self.store.epoch or not seq.isdigit():
            log.warning("ack for an unknown report id", id=frame.header.id)
            return
        try:
            body = frame.json()
        except FrameError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        if error:
            h = frame.header
            log.warning("the GM refused a report; dropping it", kind=h.resource_kind,
                        object=f"{h.namespace}/{h.resource_name}", error=error)
        self.store.remove_report(int(seq))

    def _send_reports(self, conn: ClientConnection, stop: threading.Event, session_over: threading.Event) -> None:
        """Send the outbox in order; resent from the start on every connection (unacked reports)."""
        acked = FEATURE_ACK in self.features
        last = 0
        while not stop.is_set() and not session_over.is_set():
            batch = self.store.reports_after(last, _SEND_BATCH)
            if not batch:
                with self._outbox:
                    if not self.store.reports_after(last, 1):
                        self._outbox.wait(1.0)
                continue
            for entry in batch:
                text = encode_frame(self._report_frame(entry, acked))
                if len(text) > self._max_report_bytes:  # ASCII: names are DNS labels, the content base64
                    log.error("dropped a report larger than the GM accepts", kind=entry.kind,
                              object=f"{entry.namespace}/{entry.name}", frame_bytes=len(text),
                              max_report_bytes=self._max_report_bytes)
                    self.store.remove_report(entry.seq)
                    last = entry.seq
                    continue
                try:
                    conn.send(text)
                except (ConnectionClosed, OSError) as exc:
                    log.info("sending reports paused until the GM is back", error=str(exc) or type(exc).__name__)
                    return
                last = entry.seq
                if not acked:
                    self.store.remove_report(entry.seq)

    def _report_frame(self, entry: OutboxEntry, acked: bool) -> Frame:
        report_id = f"{self.store.epoch}-{entry.seq}" if acked else ""
        return Frame(Header(entry.namespace, entry.kind, entry.name, STATUS, report_id), entry.content)
