"""``ConnectionPool``: keep-alive HTTP/1.1 connections to one API server over the standard library's ``http.client``,
for the transport's plain requests (watches and proxies go through urllib3).

A controller spends its CPU on small requests; urllib3's per-request machinery (URL parsing, retry and timeout
objects, its response wrapper) costs about as much as the request itself, and this pool does none of it.

Guarantees (the transport's, kept):
- Thread-safe and never blocking: a request takes an idle connection or opens a new one; at most ``maxsize`` idle
  connections are kept, the others are closed when their request ends.
- An idle connection the server has closed is replaced before anything is sent (any method). A request whose
  connection fails once it may have been sent is replayed once on a new connection only when its method is in
  ``REPLAYABLE_METHODS``, and never after a read timeout.
- Connecting is bounded by the connect timeout, every read by the read timeout, and both together by ``total`` when
  given. Failures raise the transport's ``ApiConnectionError`` kinds (refused, timeout, cannot connect).
- A ``gzip`` answer is decompressed. An answer sent before the whole body was read (a 413) is returned, not lost to
  the broken pipe.
"""

from __future__ import annotations

import gzip
import http.client
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from urllib3.util.wait import wait_for_read

from .http_errors import (
    REPLAYABLE_METHODS,
    ApiConnectionError,
    ApiConnectionRefusedError,
    ApiConnectionTimeoutError,
)

__all__ = ["ConnectionPool", "PooledAnswer", "tls_context"]

SocketOption = tuple[int, int, int]


@dataclass(frozen=True)
class PooledAnswer:
    """One answer: status, the headers the transport reads, the (decoded) body."""

    status: int
    retry_after: str | None
    body: bytes


def tls_context(*, verify: bool, ca_file: str | None, ca_data: str | bytes | None, cert_file: str | None,
                key_file: str | None) -> ssl.SSLContext:
    """The client TLS context of a configuration: the CA file or data (else the system's), an optional client
    certificate, no verification at all when ``verify`` is false."""
    context = ssl.create_default_context()
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif ca_file or ca_data:
        context.load_verify_locations(cafile=ca_file or None, cadata=ca_data or None)
    if cert_file:
        context.load_cert_chain(cert_file, key_file or None)
    return context


class _HTTPSConnection(http.client.HTTPSConnection):
    """Verifies the certificate against ``server_hostname`` (a kubeconfig's ``tls-server-name``) when set."""

    def __init__(self, host: str, port: int | None, *, context: ssl.SSLContext, server_hostname: str | None,
                 socket_options: Sequence[SocketOption]) -> None:
        super().__init__(host, port, context=context)
        self._server_hostname = server_hostname
        self._socket_options = socket_options
        self._tls = context  # http.client keeps it too, untyped

    def connect(self) -> None:
        sock = _open_socket(self.host, self.port, self.timeout, self._socket_options)
        try:
            self.sock = self._tls.wrap_socket(sock, server_hostname=self._server_hostname or self.host)
        except BaseException:
            sock.close()
            raise


class _HTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int | None, *, socket_options: Sequence[SocketOption]) -> None:
        super().__init__(host, port)
        self._socket_options = socket_options

    def connect(self) -> None:
        self.sock = _open_socket(self.host, self.port, self.timeout, self._socket_options)


def _open_socket(host: str, port: int, timeout: float | None, options: Sequence[SocketOption]) -> socket.socket:
    sock = socket.create_connection((host, port), timeout)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for level, name, value in options:
            sock.setsockopt(level, name, value)
    except BaseException:
        sock.close()
        raise
    return sock


class ConnectionPool:
    """Keep-alive connections to ``scheme://host:port`` (module doc)."""

    def __init__(self, scheme: str, host: str, port: int | None, *, maxsize: int,
                 tls: Callable[[], ssl.SSLContext] | None = None, server_hostname: str | None = None,
                 socket_options: Sequence[SocketOption] = ()) -> None:
        if scheme == "https" and tls is None:
            raise ValueError("an https pool needs a TLS context")
        self._scheme, self._host, self._port = scheme, host, port
        # made at the first connection, so that unreadable certificate files fail a request, not the construction
        self._make_tls = tls
        self._tls: ssl.SSLContext | None = None
        self._server_hostname, self._socket_options = server_hostname, tuple(socket_options)
        self._maxsize = maxsize
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self.connections_opened = 0
        self.requests_sent = 0

    def _new(self) -> http.client.HTTPConnection:
        with self._lock:
            self.connections_opened += 1
        if self._scheme == "https":
            if self._tls is None:
                assert self._make_tls is not None
                self._tls = self._make_tls()
            return _HTTPSConnection(self._host, self._port, context=self._tls, server_hostname=self._server_hostname,
                                    socket_options=self._socket_options)
        return _HTTPConnection(self._host, self._port, socket_options=self._socket_options)

    def _take(self) -> http.client.HTTPConnection | None:
        """An idle connection still open at the server's end, or ``None``."""
        while True:
            with self._lock:
                if not self._idle:
                    return None
                conn = self._idle.pop()
            sock = conn.sock
            # readable while idle: the server closed it (or sent garbage); either way it is not reusable
            if sock is not None and not wait_for_read(sock, timeout=0.0):
                return conn
            conn.close()

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < self._maxsize:
                self._idle.append(conn)
                return
        conn.close()

    def request(self, method: str, target: str, body: bytes | None, headers: Mapping[str, str], *,
                connect_timeout: float, read_timeout: float, total: float | None, url: str) -> PooledAnswer:
        """Send one request and read its whole answer; ``url`` names it in errors."""
        deadline = None if total is None else time.monotonic() + total
        replay = method in REPLAYABLE_METHODS
        while True:
            try:
                conn = self._take() or self._new()
            except (OSError, ValueError) as exc:  # the TLS context: certificate files
                raise _connect_error(method, url, exc) from exc
            try:
                return self._exchange(conn, method, target, body, headers, connect_timeout, read_timeout, deadline,
                                      url)
            except _SentAndLost as lost:
                if not replay or lost.timed_out:
                    raise lost.error from lost.__cause__
                replay = False  # once

    def _exchange(self, conn: http.client.HTTPConnection, method: str, target: str, body: bytes | None,
                  headers: Mapping[str, str], connect_timeout: float, read_timeout: float, deadline: float | None,
                  url: str) -> PooledAnswer:
        if conn.sock is None:
            conn.timeout = _bounded(connect_timeout, deadline)
            try:
                conn.connect()
            except (OSError, ValueError) as exc:
                conn.close()
                raise _connect_error(method, url, exc) from exc
        assert conn.sock is not None
        conn.sock.settimeout(_bounded(read_timeout, deadline))
        try:
            try:
                conn.request(method, target, body=body, headers=dict(headers))
            except (BrokenPipeError, ConnectionResetError):
                # the server may answer before it has read the whole body (a 413 for a body over its limit) and
                # close: its answer is read all the same (urllib3 does the same)
                pass
            with self._lock:
                self.requests_sent += 1
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            timed_out = isinstance(exc, TimeoutError)
            error: ApiConnectionError = (
                ApiConnectionTimeoutError(method, url, f"read timeout ({exc})") if timed_out
                else ApiConnectionError(method, url, f"{type(exc).__name__}: {exc}"))
            raise _SentAndLost(error, timed_out) from exc
        if resp.will_close:
            conn.close()
        else:
            self._give_back(conn)
        encoding = (resp.getheader("Content-Encoding") or "").lower()
        if encoding == "gzip" and data:
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError, zlib.error) as exc:
                raise ApiConnectionError(method, url, f"undecodable gzip answer: {exc}") from exc
        return PooledAnswer(resp.status, resp.getheader("Retry-After"), data)

    def close(self) -> None:
        """Close the idle connections (the pool stays usable: a later request opens a new one)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


class _SentAndLost(Exception):
    """The request may have reached the server, and no answer came back."""

    def __init__(self, error: ApiConnectionError, timed_out: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.timed_out = timed_out


def _bounded(timeout: float, deadline: float | None) -> float:
    if deadline is None:
        return timeout
    return max(0.001, min(timeout, deadline - time.monotonic()))


def _connect_error(method: str, url: str, exc: BaseException) -> ApiConnectionError:
    if isinstance(exc, ConnectionRefusedError):
        return ApiConnectionRefusedError(method, url, "connection refused")
    if isinstance(exc, TimeoutError):
        return ApiConnectionTimeoutError(method, url, f"connect timeout ({exc})")
    return ApiConnectionError(method, url, f"cannot connect: {type(exc).__name__}: {exc}")
