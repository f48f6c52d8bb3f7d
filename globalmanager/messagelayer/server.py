"""The websocket server LCs connect to (Go Sedna's ``messagelayer/ws``), on its own asyncio thread.

* Any path. The upgrade must name the node in ``Node-Name`` (a DNS-1123 subdomain, given once), else HTTP 400; with
  edge auth on, its credential must prove that node (``auth.EdgeAuth``: a client certificate, a per-node token or the
  shared token; token files are checked on every upgrade, so a rotation takes effect without a restart), else HTTP
  401 (403 for a certificate of another node). A refusal is counted in
  ``sedna_gm_edge_rejected_connections_total{reason}`` and logged with the claimed node and the reason: the first
  from a source (remote host) at once, then at most one line per source per ``refusal_log_interval`` saying how many
  were not logged since (``untold``); a source that went quiet gets one line with the rest. So a flood of refused
  upgrades writes a few lines, never one per refusal (``apis.logthrottle``). A connection admitted with a per-node
  token is closed (1008) once that token no longer proves the node (revoked, or rotated and past the grace): checked
  every ``credential_check_interval`` seconds.
* The LC's first frame may be a ``hello``: the features both sides speak are answered in a ``hello``, then (with
  ``resync``) the node's full state as a ``resync`` frame, then the queued messages. Any other first frame (Go's
  empty-header greeting) is handled as a normal frame and no extension is used.
* Keepalive: a ping every ``ping_interval`` seconds; a pong missing for another ``ping_interval`` closes the
  connection, so a dead peer is noticed within two intervals (and dropped at most 2 s later, when the closing
  handshake it never answers times out). A frame over ``max_frame_bytes`` closes only that
  connection (1009, counted as ``too_large``).
* Reading pauses while the upstream dispatcher holds ``max_pending_reports`` reports (bounded memory).
* Slow clients: the opening handshake (TLS included) must end within ``OPEN_TIMEOUT`` seconds, and one client address
  has at most ``HANDSHAKES_PER_CLIENT`` handshakes under way (``apis.connlimit``; one more is closed at once), so a
  client trickling connections holds few and briefly. Open connections are not limited per address (edge nodes behind
  one NAT share it); with edge auth on, each is an authenticated node, one per node.
* ``start()`` logs ``listening`` with ``server=edge`` and ``url`` (``ws://`` or ``wss://``; port 0 picks a free one).
"""

from __future__ import annotations

import asyncio
import http
import logging
import re
import ssl
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import structlog
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from apis.connlimit import PerClientLimit
from apis.edge import (
    FEATURES,
    HELLO,
    NODE_NAME_HEADER,
    RESYNC,
    FrameError,
    decode_frame,
    encode_frame,
    hello_frame,
    parse_features,
)
from apis.logs import announce_listening
from apis.logthrottle import LogThrottle
from apis.netaddr import local_url
from apis.tokenfile import TokenFile, read_token  # read_token: re-exported
from globalmanager.config import WebsocketConfig

from .auth import NONE, Credential, EdgeAuth, Verdict
from .layer import MessageLayer
from .session import Session
from .tokens import EdgeTokens, NodeTokens

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "DEFAULT_PING_INTERVAL",
    "EdgeServer",
    "edge_server_from_config",
    "read_token",
    "valid_node_name",
]

log = structlog.get_logger("sedna-gm.edge")

DEFAULT_PING_INTERVAL = 20.0
DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024  # an 8 MiB worker report, base64-encoded (docs/edge.md)
HELLO_TIMEOUT = 2.0
CREDENTIAL_CHECK_INTERVAL = 10.0
REFUSAL_LOG_INTERVAL = 60.0
MAX_LOGGED_SOURCES = 1024  # sources tracked for refusal logs at once; beyond them refusals count as "other sources"
OTHER_SOURCES = "(other sources)"
_MAX_LOGGED_NODE = 253
_BACKPRESSURE_POLL = 0.02
_CLOSE_TIMEOUT = 2.0  # a dead peer never completes the closing handshake
OPEN_TIMEOUT = 10.0  # websockets' default, stated: the TLS and HTTP opening handshake of one connection
HANDSHAKES_PER_CLIENT = 64

_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def valid_node_name(name: str | None) -> bool:
    return bool(name) and len(name) <= 253 and _DNS1123_SUBDOMAIN.fullmatch(name) is not None  # type: ignore[arg-type]


class EdgeServer:
    """Serves ``layer`` to LCs on ``host:port`` (port 0 picks a free one). ``start()`` binds or raises ``OSError``."""

    def __init__(
        self,
        layer: MessageLayer,
        host: str,
        port: int,
        *,
        ping_interval: float = DEFAULT_PING_INTERVAL,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        token: str | EdgeTokens | EdgeAuth = "",
        ssl_context: ssl.SSLContext | None = None,
        features: Sequence[str] = FEATURES,
        hello_timeout: float = HELLO_TIMEOUT,
        credential_check_interval: float = CREDENTIAL_CHECK_INTERVAL,
        refusal_log_interval: float = REFUSAL_LOG_INTERVAL,
    ) -> None:
        self.layer = layer
        self.host = host
        self._port = port
        self.ping_interval = ping_interval
        self.max_frame_bytes = max_frame_bytes
        if isinstance(token, EdgeAuth):
            self._auth = token
        else:
            self._auth = EdgeAuth(token if isinstance(token, EdgeTokens) else EdgeTokens(token))
        self._credential_check_interval = credential_check_interval
        self.refusal_log: LogThrottle[str] = LogThrottle(refusal_log_interval, max_keys=MAX_LOGGED_SOURCES,
                                                         overflow=OTHER_SOURCES)
        self._flush_task: asyncio.Task[None] | None = None
        # between the handshake and _handle (loop thread); weak: a handshake may still fail after process_request
        self._admitted: weakref.WeakKeyDictionary[ServerConnection, Credential] = weakref.WeakKeyDictionary()
        self._live: dict[Session, Credential] = {}  # loop thread only
        self._recheck_task: asyncio.Task[None] | None = None
        self._ssl = ssl_context
        self._features = tuple(features)
        self._hello_timeout = hello_timeout
        self._handshakes = PerClientLimit(HANDSHAKES_PER_CLIENT, "edge")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("edge server not started")
        return int(self._server.sockets[0].getsockname()[1])

    def start(self) -> None:
        if not logging.getLogger().isEnabledFor(logging.DEBUG):  # one line per connection otherwise
            logging.getLogger("websockets").setLevel(logging.WARNING)
        loop = asyncio.new_event_loop()
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                self._server = loop.run_until_complete(self._serve())
            except BaseException as exc:
                failure.append(exc)
                started.set()
                loop.close()
                return
            started.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="edge-server", daemon=True)
        self._thread.start()
        started.wait()
        if failure:
            raise failure[0]
        scheme = "wss" if self._ssl is not None else "ws"
        announce_listening("edge", local_url(scheme, self.host, self.port), ping_interval=self.ping_interval,
                           max_frame_bytes=self.max_frame_bytes, auth=self._auth.mode)

    async def _serve(self) -> Server:
        self._flush_task = asyncio.get_running_loop().create_task(self._flush_logs_forever())
        if self._auth.nodes is not None:
            self._recheck_task = asyncio.get_running_loop().create_task(self._recheck_credentials_forever())
        return await serve(
            self._handle,
            self.host,
            self._port,
            process_request=self._check_request,
            ping_interval=self.ping_interval,
            ping_timeout=self.ping_interval,
            close_timeout=min(self.ping_interval, _CLOSE_TIMEOUT),
            max_size=self.max_frame_bytes,
            ssl=self._ssl,
            server_header=None,
            open_timeout=OPEN_TIMEOUT,
            create_connection=_handshake_limited(self._handshakes),
        )

    def stop(self, timeout: float = 5.0) -> None:
        loop, server = self._loop, self._server
        if loop is None or server is None or loop.is_closed():
            return

        async def shutdown() -> None:
            for task in (self._recheck_task, self._flush_task):
                if task is not None:
                    task.cancel()
            server.close()
            await server.wait_closed()

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout)
        except Exception as exc:
            log.warning("edge server did not close cleanly", error=str(exc))
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout)

    # -- handshake --------------------------------------------------------------------------------------------------
    def _check_request(self, conn: ServerConnection, request: Request) -> Response | None:
        remote = _remote(conn)
        claimed = ", ".join(request.headers.get_all(NODE_NAME_HEADER))[:_MAX_LOGGED_NODE]
        verdict = self._auth.check_headers(request.headers)
        if verdict.status:
            return self._refuse(conn, verdict, claimed, remote)
        node = request.headers.get(NODE_NAME_HEADER)
        if not valid_node_name(node):
            return self._refuse(conn, Verdict(http.HTTPStatus.BAD_REQUEST, "bad_node_name",
                                              "missing or invalid Node-Name header: it must be a DNS-1123 subdomain"),
                                claimed, remote)
        peercert = conn.transport.get_extra_info("peercert") if self._ssl is not None else None
        verdict = self._auth.authenticate(node, request.headers, peercert)  # type: ignore[arg-type]
        if verdict.status:
            return self._refuse(conn, verdict, claimed, remote)
        if verdict.credential is not None:
            self._admitted[conn] = verdict.credential
        return None

    def _refuse(self, conn: ServerConnection, verdict: Verdict, claimed: str, remote: str) -> Response:
        self.layer.metrics.rejected_connections.labels(verdict.reason).inc()
        seen = self.refusal_log.admit(remote.rpartition(":")[0] or remote)  # the host: each connection has its port
        if seen.due:
            log.warning("refused a connection", node=claimed, remote=remote, source=seen.key, status=int(verdict.status),
                        reason=verdict.reason, detail=verdict.detail, untold=seen.untold)
        response = conn.respond(verdict.status, f"{verdict.detail}\n")
        if verdict.status == http.HTTPStatus.UNAUTHORIZED:
            response.headers["WWW-Authenticate"] = "Bearer"
        return response

    async def _flush_logs_forever(self) -> None:
        while True:
            await asyncio.sleep(self.refusal_log.interval)
            self.flush_logs()

    def flush_logs(self) -> None:
        """One line per source whose refusals were not all logged in the last interval (and the layer's)."""
        for source, untold in self.refusal_log.flush():
            log.warning("refused connections not logged one by one", source=source, untold=untold,
                        interval_seconds=self.refusal_log.interval)
        self._handshakes.flush_logs()
        self.layer.flush_logs()

    async def _recheck_credentials_forever(self) -> None:
        while True:
            await asyncio.sleep(self._credential_check_interval)
            await self.recheck_credentials()

    async def recheck_credentials(self) -> None:
        """Close every connection whose credential no longer proves its node (run on the server's loop)."""
        live = list(self._live.items())
        problems = await asyncio.to_thread(  # one thread for all: each check is a stat, maybe a small read
            lambda: [(session, self._auth.still_valid(session.node, credential)) for session, credential in live])
        for session, problem in problems:
            if problem and session in self._live:
                self.layer.metrics.rejected_connections.labels("revoked").inc()
                log.warning("closing a connection: its credential no longer proves its node", node=session.node,
                            reason=problem)
                session.close(1008, "credential revoked")

    # -- connection -------------------------------------------------------------------------------------------------
    async def _handle(self, conn: ServerConnection) -> None:
        node = conn.request.headers[NODE_NAME_HEADER] if conn.request is not None else ""
        session = Session(node, conn, asyncio.get_running_loop(), frozenset(), send_timeout=2 * self.ping_interval)
        self._live[session] = self._admitted.pop(conn, Credential(NONE))
        try:
            await self._serve_session(conn, session, node)
        finally:
            del self._live[session]

    async def _serve_session(self, conn: ServerConnection, session: Session, node: str) -> None:
        try:
            first: Any = await asyncio.wait_for(conn.recv(), self._hello_timeout)
        except asyncio.TimeoutError:
            first = None
        except ConnectionClosed as exc:
            self._closed(node, exc)
            return
        greeted = False
        if first is not None:
            try:
                frame = decode_frame(first)
                if frame.header.operation == HELLO:
                    greeted, first = True, None
                    requested = set(parse_features(frame))
                    session.features = frozenset(f for f in self._features if f in requested)
            except FrameError as exc:
                first = None
                self.layer.reject(session, None, exc.reason, str(exc))
        try:
            # answered at once (the features do not depend on the node's state, which attach reads and which may take
            # longer than the LC waits for this answer), and even with no common feature
            if greeted:
                await conn.send(encode_frame(hello_frame(sorted(session.features))))
                self.layer.metrics.frames.labels("down", HELLO).inc()
            resync = await asyncio.to_thread(self.layer.attach, session)
            if resync is not None:
                await conn.send(encode_frame(resync))
                self.layer.metrics.frames.labels("down", RESYNC).inc()
            self.layer.start_writer(session)
            if first is not None:
                self.layer.receive(session, first)
            async for data in conn:
                self.layer.receive(session, data)
                while self.layer.overloaded():
                    await asyncio.sleep(_BACKPRESSURE_POLL)
        except ConnectionClosed as exc:
            self._closed(node, exc)
        finally:
            self.layer.detach(session)

    def _closed(self, node: str, exc: ConnectionClosed) -> None:
        code = exc.rcvd.code if exc.rcvd is not None else (exc.sent.code if exc.sent is not None else None)
        if code == 1009:
            self.layer.metrics.rejected_frames.labels("too_large").inc()
            log.warning("closed a connection: frame over the size limit", node=node, max_frame_bytes=self.max_frame_bytes)
        else:
            log.debug("connection closed", node=node, code=code)


def _handshake_limited(limit: PerClientLimit) -> type[ServerConnection]:
    """A ``ServerConnection`` counted against its client's ``limit`` until its opening handshake ends (closed at once,
    before any byte is read, past it)."""

    class HandshakeLimited(ServerConnection):
        _client: str | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # schedules the handshake: on an aborted transport it just ends
            peer = transport.get_extra_info("peername")
            client = str(peer[0]) if isinstance(peer, tuple) else ""
            if limit.admit(client):
                self._client = client
            elif isinstance(transport, asyncio.Transport):
                transport.abort()

        async def handshake(self, *args: Any, **kwargs: Any) -> None:
            try:
                await super().handshake(*args, **kwargs)
            finally:
                self._release()

        def connection_lost(self, exc: Exception | None) -> None:
            self._release()
            super().connection_lost(exc)

        def _release(self) -> None:
            client, self._client = self._client, None
            if client is not None:
                limit.release(client)

    return HandshakeLimited


def edge_server_from_config(layer: MessageLayer, ws: WebsocketConfig) -> EdgeServer:
    """The server ``websocket.*`` describes; raises ``OSError``/``ValueError`` for an unreadable token, cert, key,
    CA or node tokens directory."""
    context = None
    if ws.cert_file:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(ws.cert_file, ws.key_file)
        if ws.client_ca_file:
            context.load_verify_locations(ws.client_ca_file)
            # a client without a certificate may still prove its node with a token, when one is configured
            token_auth = bool(ws.token_file or ws.node_tokens_dir)
            context.verify_mode = ssl.CERT_OPTIONAL if token_auth else ssl.CERT_REQUIRED
    shared = EdgeTokens(TokenFile(ws.token_file), ws.token_grace_seconds) if ws.token_file else EdgeTokens()
    nodes = NodeTokens(ws.node_tokens_dir, ws.token_grace_seconds) if ws.node_tokens_dir else None
    auth = EdgeAuth(shared, nodes, client_certs=bool(ws.client_ca_file))
    return EdgeServer(layer, ws.address, ws.port, ping_interval=ws.ping_interval_seconds,
                      max_frame_bytes=ws.max_frame_bytes, token=auth, ssl_context=context)


def _remote(conn: ServerConnection) -> str:
    try:
        host, port = conn.remote_address[:2]
        return f"{host}:{port}"
    except Exception:
        return ""
