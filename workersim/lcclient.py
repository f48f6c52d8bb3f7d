"""``LCClient.send`` of Sedna's SDK (``sedna.service.client.http_request``): ``POST {lc}/sedna/workers/{worker}/info``
with the report as JSON, tried ``attempts`` times ``retry_wait`` seconds apart until the LC answers 200 (the SDK: 5
tries, 3 s apart; any other answer, 2xx included, a 200 whose body is not JSON, and any connection error count as a
failure). The SDK sets no
request timeout: neither does ``LCClient`` unless given one, so an LC that accepts a connection and never answers
holds the worker, as it holds a real one. ``abort(stop)`` ends the requests of a worker being stopped (their sockets
are shut down), so that stopping the simulator never waits on an LC."""

from __future__ import annotations

import http.client
import socket
import threading
from typing import Any
from urllib.parse import quote, urlsplit

import orjson

from apis.logs import get_logger

__all__ = ["LCClient", "worker_info_url"]

log = get_logger(__name__)

_MAX_ANSWER = 64 * 1024


def _json(answer: bytes) -> bool:
    """The SDK decodes a 200's body with ``response.json()``; a body that is not JSON is retried."""
    try:
        orjson.loads(answer)
    except orjson.JSONDecodeError:
        return False
    return True


def worker_info_url(lc_server: str, worker_name: str) -> str:
    return f"{lc_server.rstrip('/')}/sedna/workers/{quote(worker_name, safe='')}/info"


class LCClient:
    """Thread-safe. ``timeout`` None (the SDK's): no limit on a request."""

    def __init__(self, attempts: int = 5, retry_wait: float = 3.0, timeout: float | None = None) -> None:
        if attempts < 1 or retry_wait < 0 or (timeout is not None and timeout <= 0):
            raise ValueError("attempts must be ≥ 1, retry_wait ≥ 0 and timeout > 0 (or None)")
        self.attempts = attempts
        self.retry_wait = retry_wait
        self.timeout = timeout
        self._lock = threading.Lock()
        self._open: dict[int, tuple[threading.Event, set[http.client.HTTPConnection]]] = {}

    def send(self, lc_server: str, worker_name: str, message: dict[str, Any],
             stop: threading.Event | None = None, pod: str = "") -> bool:
        """True once the LC answered 200; False after the last attempt or when ``stop`` is set (``abort``)."""
        stop = stop if stop is not None else threading.Event()
        url = worker_info_url(lc_server, worker_name)
        body = orjson.dumps(message)
        for attempt in range(1, self.attempts + 1):
            if stop.is_set():
                return False
            try:
                status, answer = self._post(url, body, stop)
                if status == 200 and _json(answer):
                    return True
                log.warning("the LC refused a worker report", pod=pod, url=url, status=status,
                            answer=answer[:500].decode(errors="replace"), attempt=attempt)
            except (OSError, ValueError, http.client.HTTPException) as exc:
                if stop.is_set():
                    return False
                log.warning("cannot reach the LC", pod=pod, url=url, error=str(exc) or type(exc).__name__,
                            attempt=attempt)
            if attempt < self.attempts and stop.wait(self.retry_wait):
                return False
        log.error("gave up sending a worker report", pod=pod, url=url, attempts=self.attempts)
        return False

    def in_flight(self) -> int:
        """Requests under way now (sent, not yet answered)."""
        with self._lock:
            return sum(len(conns) for _, conns in self._open.values())

    def abort(self, stop: threading.Event) -> None:
        """Shut down the open requests sent with ``stop`` (set it first: ``send`` then returns False)."""
        with self._lock:
            entry = self._open.get(id(stop))
            conns = list(entry[1]) if entry else []
        for conn in conns:
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _post(self, url: str, body: bytes, stop: threading.Event) -> tuple[int, bytes]:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url}")
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.hostname, parts.port, timeout=self.timeout)
        self._track(stop, conn, add=True)
        try:
            conn.connect()
            # stop is set before abort() looks at the sockets: one not connected yet when it looked is caught here
            if stop.is_set():
                raise OSError("worker stopped")
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            return resp.status, resp.read(_MAX_ANSWER)
        finally:
            self._track(stop, conn, add=False)
            conn.close()

    def _track(self, stop: threading.Event, conn: http.client.HTTPConnection, add: bool) -> None:
        with self._lock:
            if add:
                self._open.setdefault(id(stop), (stop, set()))[1].add(conn)
                return
            entry = self._open.get(id(stop))
            if entry is not None:
                entry[1].discard(conn)
                if not entry[1]:
                    del self._open[id(stop)]
