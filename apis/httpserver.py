"""The HTTP server of ``sedna-gm``'s and ``sedna-lc``'s endpoints: waitress (a well-kept, pure-Python, threaded WSGI
server) with the bounds our programs need.

* Framing (RFC 9112 §6): waitress answers a ``Content-Length`` that is not all ASCII digits (``²``, ``+2``, ``1,1``)
  or repeated with 400 and closes the connection. A request carrying both ``Transfer-Encoding`` and
  ``Content-Length`` is refused here with 400 and the connection closed (RFC 9112 §6.1 lets a server reject it; the
  bytes after it are never read as a second request, so nothing can be smuggled past a proxy that framed it by
  ``Content-Length``). A body over ``max_body_bytes`` is a 413.
* Bounds: ``connection_limit`` open connections (past it new ones wait in the listen backlog, ``backlog`` deep, and
  are accepted as others close: no reset), ``threads`` requests served at once, a connection idle for
  ``idle_timeout`` seconds between requests is closed. A trickling client holds no thread (waitress reads in its event
  loop and hands a request to a thread only once it is complete) and no slot for long:
* Deadlines (Go's ``ReadHeaderTimeout``): a request's headers must be complete ``header_deadline`` seconds after the
  connection was accepted (its first request) or after the request's first byte (a later one on a kept-alive
  connection), its body ``request_deadline`` seconds after the same start; else it is answered 408 and the connection
  closed. A connection that sends nothing within ``header_deadline`` is closed.
* At most ``per_client_connections`` connections at once from one client address (``apis.connlimit``): one more is
  answered 503 with ``Retry-After`` (best effort: it is written before its request is read) and closed at once, so
  one client cannot take every slot.
* Every refused request is logged: one line each for bad framing (client, status, reason); for the deadlines and the
  per-client limit at most one line per client a minute (``apis.logthrottle``: the next says how many were not), so
  a flood writes a few lines; waitress's own logger goes through the process's logging like every other library.
* ``stop()`` lets the requests in flight finish (up to 5 s), then the event loop's own thread closes every socket and
  the wake-up pipe: no descriptor is closed by two threads, nor written after its close.
* ``start()`` announces ``listening`` with ``server`` (the name given) and ``url`` (``apis.logs.announce_listening``):
  the address whoever started the program reads (with port 0 the only way to learn it).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser, ParsingError
from waitress.server import TcpWSGIServer
from waitress.utilities import Error

from apis.connlimit import MAX_LOGGED_CLIENTS, OTHER_CLIENTS, PerClientLimit
from apis.logs import announce_listening, get_logger
from apis.logthrottle import LogThrottle
from apis.netaddr import local_url

__all__ = ["HTTPLimits", "HTTPServer", "WSGIApp"]

log = get_logger(__name__)

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


@dataclass(frozen=True)
class HTTPLimits:
    max_body_bytes: int = 1024 * 1024
    connection_limit: int = 256
    backlog: int = 1024
    threads: int = 8
    idle_timeout: int = 30  # seconds (waitress's channel_timeout: whole seconds)
    request_deadline: float = 30.0  # seconds from a request's start (see the module doc) until it must be complete
    header_deadline: float = 5.0  # seconds from the same start until its headers must be complete
    per_client_connections: int = 64  # open connections from one client address (0: no limit)
    check_interval: int = 1  # seconds between deadline checks (waitress's cleanup_interval)


class RequestTimeout(Error):
    code = 408
    reason = "Request Timeout"


class _StrictParser(HTTPRequestParser):
    """waitress's parser, plus: TE and CL together are refused; errors logged."""

    def parse_header(self, header_plus: bytes) -> None:
        super().parse_header(header_plus)
        if self.chunked and "CONTENT_LENGTH" in self.headers:
            raise ParsingError("Transfer-Encoding and Content-Length together")

    def received(self, data: bytes) -> int:
        had_error = self.error is not None
        consumed = int(super().received(data))
        if self.error is not None and not had_error:
            log.warning("refused an HTTP request", status=self.error.code, reason=self.error.body,
                        path=getattr(self, "path", ""))
        return consumed


class _Channel(HTTPChannel):
    """waitress's channel, plus the times the deadlines count from and the release of its per-client slot."""

    parser_class = _StrictParser

    def __init__(self, server: _Server, sock: socket.socket, addr: Any, adj: Adjustments,
                 map: dict[int, Any] | None = None) -> None:  # noqa: A002 - waitress's signature
        self.accepted_at = self.request_started = time.monotonic()
        self.awaiting_first_byte = True
        self.client = _client_of(addr)
        self._slot_released = False
        super().__init__(server, sock, addr, adj, map)

    def received(self, data: bytes) -> bool:
        if data and self.request is None:
            # the first request's deadlines count from the accept (a client that connects and waits is as slow as
            # one that trickles), a later one's from its first byte (the wait before it is the idle timeout's)
            self.request_started = self.accepted_at if self.awaiting_first_byte else time.monotonic()
            self.awaiting_first_byte = False
        return bool(super().received(data))

    def del_channel(self, map: Mapping[int, socket.socket] | None = None) -> None:  # noqa: A002 - waitress's
        super().del_channel(map)
        if not self._slot_released:
            self._slot_released = True
            server: _Server = self.server  # type: ignore[assignment]  # types-waitress: BaseWSGIServer
            server.client_limit.release(self.client)


def _client_of(addr: Any) -> str:
    return str(addr[0]) if isinstance(addr, tuple) else str(addr)


_BUSY_BODY = b"too many connections from this client\n"
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
         b"Content-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY))


class _Server(TcpWSGIServer):
    channel_class = _Channel
    limits = HTTPLimits()
    client_limit = PerClientLimit(0, "http")
    refusal_log: LogThrottle[str] = LogThrottle(max_keys=MAX_LOGGED_CLIENTS, overflow=OTHER_CLIENTS)

    def handle_accept(self) -> None:
        # waitress's accept, with the per-client limit between the accept and the channel
        try:
            accepted = self.accept()
            if accepted is None:
                return
            conn, addr = accepted
            self.set_socket_options(conn)
        except OSError:  # the peer left before the accept completed
            return
        client = _client_of(addr)
        if not self.client_limit.admit(client):
            try:
                conn.setblocking(False)
                conn.send(_BUSY)
            except OSError:
                pass
            conn.close()
            return
        try:
            # _map: waitress's (absent from its stubs)
            self.channel_class(self, conn, addr, self.adj, map=self._map)  # type: ignore[attr-defined]
        except Exception:  # escaping, it would reach wasyncore's handler of the listener, which closes the server
            log.exception("cannot set up an HTTP connection; closed it", client=client)
            self.client_limit.release(client)
            conn.close()

    def handle_close(self) -> None:
        # wasyncore calls it for the listener only on an error of its socket (stop() closes through close()): the
        # server then no longer accepts anything, which its probes show; say why
        log.error("the HTTP server's listening socket failed: it accepts no more connections",
                  server=self.client_limit.server)
        super().handle_close()

    def maintenance(self, now: float) -> None:
        # deadlines first: an overdue request gets its 408 before the idle check could close its connection unanswered
        clock = time.monotonic()
        request_deadline = self.limits.request_deadline
        header_deadline = min(self.limits.header_deadline, request_deadline)
        timed_out: list[tuple[str, int, str]] = []  # (client, status answered (0: closed unanswered), reason)
        # types-waitress declares active_channels as one HTTPChannel; it is waitress's map of fd -> channel
        for channel in list(self.active_channels.values()):  # type: ignore[attr-defined]
            with channel.requests_lock:
                request = channel.request
                if channel.requests or channel.will_close or (request is not None and request.completed):
                    continue
                if request is None:  # between requests: only a connection that never sent a byte has a deadline
                    if channel.awaiting_first_byte and channel.accepted_at < clock - header_deadline:
                        channel.will_close = True
                        timed_out.append((channel.client, 0, f"no request within {header_deadline:g} s"))
                    continue
                if request.headers_finished:
                    deadline, reason = request_deadline, f"the request was not complete within {request_deadline:g} s"
                else:
                    deadline = header_deadline
                    reason = f"the request headers were not complete within {header_deadline:g} s"
                if channel.request_started >= clock - deadline:
                    continue
                request.error = RequestTimeout(reason)
                request.completed = True
                channel.request = None
                channel.requests.append(request)
                self.add_task(channel)
            timed_out.append((channel.client, 408, reason))
        for client, status, reason in timed_out:
            seen = self.refusal_log.admit(client)
            if seen.due and status:
                log.warning("refused an HTTP request", status=status, reason=reason, client=client, untold=seen.untold)
            elif seen.due:
                log.warning("closed a connection that sent no request", reason=reason, client=client,
                            untold=seen.untold)
        for client, untold in self.refusal_log.flush():
            log.warning("refused HTTP requests past their deadlines, not logged one by one", client=client,
                        untold=untold, interval_seconds=self.refusal_log.interval)
        self.client_limit.flush_logs()
        # types-waitress says int; waitress passes time.time()
        super().maintenance(now)  # type: ignore[arg-type]


class HTTPServer:
    """Serve ``app`` on ``host:port`` (port 0 picks a free one): ``start()`` binds (raises ``OSError``), serves on
    a background thread and announces ``listening`` (``server=name``, ``url``); ``stop()`` closes every connection and
    waits for the threads."""

    def __init__(self, host: str, port: int, app: WSGIApp, limits: HTTPLimits | None = None,
                 name: str = "http") -> None:
        self.host = host
        self._requested_port = port
        self._app = app
        self.limits = limits or HTTPLimits()
        self._name = name
        self._httpd: _Server | None = None
        self._map: dict[int, Any] = {}
        self._thread: threading.Thread | None = None
        self._stop_lock = threading.Lock()
        self._closing = threading.Event()
        self._wake_lock = threading.Lock()
        self._loop_ended = False

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        # set by waitress, absent from its stubs
        return int(self._httpd.effective_port)  # type: ignore[attr-defined]

    @property
    def url(self) -> str:
        """``http://host:port`` of the bound server as a client on this machine reaches it."""
        return local_url("http", self.host, self.port)

    def start(self) -> None:
        limits = self.limits
        adj = Adjustments(
            host=self.host, port=self._requested_port, ipv6=":" in self.host, ipv4=":" not in self.host,
            # waitress counts its listening socket and its wake-up pipe as connections too
            threads=limits.threads, connection_limit=limits.connection_limit + 2, backlog=limits.backlog,
            channel_timeout=limits.idle_timeout, cleanup_interval=limits.check_interval,
            # waitress refuses a body of exactly max_request_body_size: one more lets max_body_bytes itself through
            max_request_body_size=limits.max_body_bytes + 1,
            asyncore_use_poll=True, clear_untrusted_proxy_headers=False, ident="sedna",
        )
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # types-waitress declares listen as list[str]; waitress fills it with socket.getaddrinfo tuples
        listen: list[Any] = adj.listen
        sockinfo = next((info for info in listen if info[0] == family), listen[0])
        server = _Server(self._app, map=self._map, adj=adj, sockinfo=sockinfo)
        server.limits = limits
        server.client_limit = PerClientLimit(limits.per_client_connections, self._name)
        server.refusal_log = LogThrottle(max_keys=MAX_LOGGED_CLIENTS, overflow=OTHER_CLIENTS)
        self._closing, self._loop_ended = threading.Event(), False
        self._httpd = server
        self._thread = threading.Thread(target=self._loop, args=(server,), name=self._name, daemon=True)
        self._thread.start()
        announce_listening(self._name, self.url)

    def _loop(self, server: _Server) -> None:
        # every socket and the wake-up pipe are closed here, by the loop's own thread, once stop() asked for it: never
        # by two threads at once (waitress's descriptor wrappers are not thread-safe: a second close of the same
        # number closes whatever reused it)
        timeout = server.adj.asyncore_loop_timeout
        try:
            while self._map and not self._closing.is_set():
                wasyncore.loop(timeout=timeout, map=self._map, use_poll=True, count=1)
        finally:
            with self._wake_lock:  # stop() never writes to the wake-up pipe once it is closed
                self._loop_ended = True
                wasyncore.close_all(self._map)

    def stop(self) -> None:
        """Let the requests in flight finish (up to 5 s), then close the listener and every connection; idempotent,
        and safe from several threads at once."""
        with self._stop_lock:
            server, self._httpd = self._httpd, None
        if server is None:
            return
        # first the requests: a request thread that still ran after the close would wake the loop through a
        # wake-up pipe already closed, whose descriptor number may belong to something else by then
        server.task_dispatcher.shutdown(timeout=5)
        # then the loop, woken at once through the pipe: it closes everything and ends
        with self._wake_lock:
            self._closing.set()
            if not self._loop_ended:
                try:
                    server.trigger.pull_trigger()  # type: ignore[attr-defined]  # waitress's trigger
                except OSError:  # the loop sees the flag within its poll timeout (1 s)
                    log.warning("cannot wake the HTTP server's loop; it stops within a second", server=self._name)
        if self._thread is not None:
            self._thread.join(timeout=5)
