"""The HTTP server of ``sedna-gm``'s and ``sedna-lc``'s endpoints: waitress (a well-kept, pure-Python, threaded WSGI
server) with the bounds our programs need.

* Framing (RFC 9112 §6): waitress answers a ``Content-Length`` that is not all ASCII digits (``²``, ``+2``, ``1,1``)
  or repeated with 400 and closes the connection. A request carrying both ``Transfer-Encoding`` and
  ``Content-Length`` is refused here with 400 and the connection closed (RFC 9112 §6.1 lets a server reject it; the
  bytes after it are never read as a second request, so nothing can be smuggled past a proxy that framed it by
  ``Content-Length``). A body over ``max_body_bytes`` is a 413.
* Bounds: ``connection_limit`` open connections (past it new ones wait in the listen backlog, ``backlog`` deep, and
  are accepted as others close: no reset), ``threads`` requests served at once, a connection idle for
  ``idle_timeout`` seconds is closed, and a request whose headers and body have not all arrived ``request_deadline``
  seconds after its first byte is answered 408 and its connection closed (a trickling client holds no thread: waitress
  reads in its event loop and hands a request to a thread only once it is complete).
* Every refused request is logged (one line: client, status, reason); waitress's own logger goes through the
  process's logging like every other library.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser, ParsingError
from waitress.server import TcpWSGIServer
from waitress.utilities import Error

from apis.logs import get_logger

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
    request_deadline: float = 30.0  # seconds from a request's first byte until it must be complete
    check_interval: int = 1  # seconds between deadline checks (waitress's cleanup_interval)


class RequestTimeout(Error):
    code = 408
    reason = "Request Timeout"


class _StrictParser(HTTPRequestParser):
    """waitress's parser, plus: TE and CL together are refused; the time of the first byte is kept; errors logged."""

    def __init__(self, adj: Adjustments) -> None:
        super().__init__(adj)
        self.started = time.monotonic()

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
    parser_class = _StrictParser


class _Server(TcpWSGIServer):
    channel_class = _Channel
    request_deadline = 30.0

    def maintenance(self, now: float) -> None:
        # deadlines first: an overdue request gets its 408 before the idle check could close its connection unanswered
        cutoff = time.monotonic() - self.request_deadline
        # types-waitress declares active_channels as one HTTPChannel; it is waitress's map of fd -> channel
        for channel in list(self.active_channels.values()):  # type: ignore[attr-defined]
            with channel.requests_lock:
                request = channel.request
                if (request is None or request.completed or channel.requests or channel.will_close
                        or request.started > cutoff):
                    continue
                request.error = RequestTimeout(f"the request was not complete within {self.request_deadline:g} s")
                request.completed = True
                channel.request = None
                channel.requests.append(request)
                self.add_task(channel)
            log.warning("refused an HTTP request", status=408, reason=request.error.body,
                        client=f"{channel.addr[0]}:{channel.addr[1]}" if isinstance(channel.addr, tuple) else "")
        # types-waitress says int; waitress passes time.time()
        super().maintenance(now)  # type: ignore[arg-type]


class HTTPServer:
    """Serve ``app`` on ``host:port`` (port 0 picks a free one): ``start()`` binds (raises ``OSError``) and serves on
    a background thread; ``stop()`` closes every connection and waits for the threads."""

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

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        # set by waitress, absent from its stubs
        return int(self._httpd.effective_port)  # type: ignore[attr-defined]

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
        server.request_deadline = limits.request_deadline
        self._httpd = server
        self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        assert self._httpd is not None
        wasyncore.loop(timeout=self._httpd.adj.asyncore_loop_timeout, map=self._map, use_poll=True)

    def stop(self) -> None:
        """Close the listener and every connection; idempotent, and safe from several threads at once."""
        with self._stop_lock:
            server, self._httpd = self._httpd, None
        if server is None:
            return
        # closing the sockets from the loop's own thread: the trigger wakes the loop, which then finds its map empty
        # server.trigger is waitress's trigger (types-waitress types it int)
        try:
            server.trigger.pull_trigger(lambda: wasyncore.close_all(self._map))  # type: ignore[attr-defined]
        except OSError:
            # the wake-up pipe's descriptor was closed under it (seen once, EBADF, in a test process that closes many
            # descriptors): close the sockets from here instead; the loop (polling every second, over a copy of its
            # map) ends once the map is empty, and close_all skips what is closed already
            wasyncore.close_all(self._map)
        if self._thread is not None:
            self._thread.join(timeout=5)
        server.task_dispatcher.shutdown(timeout=5)
