"""Load generators of ``hack.bench_sandbox``'s throughput benchmark: a minimal HTTP/1.1 client on a raw socket (so
that the client costs far less than the server it measures), closed-loop request load on a few kept-alive
connections, and watch fan-out (W watchers, one writer).

The client understands exactly what the sandbox answers: a status line, headers, and a ``Content-Length`` body, or
a chunked watch stream, which it only scans for event markers."""

from __future__ import annotations

import itertools
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import orjson

__all__ = ["NS", "CM_PATH", "LoadResult", "RawConnection", "request_load", "seed", "watch_fanout"]

NS = "bench"
CM_PATH = f"/api/v1/namespaces/{NS}/configmaps"
MAX_RESPONSE_BYTES = 64 * 1024 * 1024  # a response bigger than this is a bug of the benchmark or the server
IO_TIMEOUT = 30.0


class BenchError(RuntimeError):
    """The server answered something the benchmark did not expect (an error status, a malformed response)."""


class RawConnection:
    """One kept-alive HTTP/1.1 connection; ``request`` sends one request and returns (status, body)."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.sock = socket.create_connection((host, port), timeout=IO_TIMEOUT)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buf = b""
        self._fixed = f"Host: {host}:{port}\r\nAuthorization: Bearer {token}\r\nAccept: application/json\r\n".encode()

    def close(self) -> None:
        self.sock.close()

    def send(self, method: str, path: str, body: bytes = b"", content_type: str = "") -> None:
        head = f"{method} {path} HTTP/1.1\r\n".encode() + self._fixed
        if body:
            head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n".encode()
        self.sock.sendall(head + b"\r\n" + body)

    def read_head(self) -> tuple[int, bytes]:
        """The status code and the raw header block of the next response (the body stays buffered)."""
        while b"\r\n\r\n" not in self._buf:
            self._recv()
        head, _, self._buf = self._buf.partition(b"\r\n\r\n")
        try:
            return int(head[9:12]), head
        except ValueError:
            raise BenchError(f"malformed status line {head[:80]!r}") from None

    def request(self, method: str, path: str, body: bytes = b"", content_type: str = "") -> tuple[int, bytes]:
        self.send(method, path, body, content_type)
        status, head = self.read_head()
        length = _content_length(head)
        while len(self._buf) < length:
            self._recv()
        data, self._buf = self._buf[:length], self._buf[length:]
        if status >= 300:
            raise BenchError(f"{method} {path}: {status} {data[:200]!r}")
        return status, data

    def _recv(self) -> bytes:
        data = self.sock.recv(262144)
        if not data:
            raise BenchError("the server closed the connection")
        if len(self._buf) + len(data) > MAX_RESPONSE_BYTES:
            raise BenchError("response larger than the benchmark accepts")
        self._buf += data
        return data

    def take_buffered(self) -> bytes:
        data, self._buf = self._buf, b""
        return data


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            return int(value.strip())
    raise BenchError(f"a response without Content-Length: {head[:200]!r}")


def config_map(i: int) -> dict[str, object]:
    """A ConfigMap of about 1 KiB (labels, annotations, 8 data keys), the size of a small real object."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"cm-{i}", "namespace": NS, "labels": {"app": "bench", "index": str(i)},
                         "annotations": {"bench.sedna.io/note": "x" * 200}},
            "data": {f"key-{k}": f"value {k} of config map {i} " * 3 for k in range(8)}}


def seed(conn: RawConnection, list_size: int) -> None:
    """The namespace and ``list_size`` ConfigMaps ``cm-0``…"""
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
    conn.request("POST", "/api/v1/namespaces", orjson.dumps(ns), "application/json")
    for i in range(list_size):
        conn.request("POST", CM_PATH, orjson.dumps(config_map(i)), "application/json")


_patch_values = itertools.count()  # every patch sets a new value (a patch that changes nothing is no write)


def _patch(conn: RawConnection) -> object:
    body = b'{"data":{"n":"%d"}}' % next(_patch_values)
    return conn.request("PATCH", f"{CM_PATH}/cm-0", body, "application/merge-patch+json")


OPERATIONS: dict[str, Callable[[RawConnection], object]] = {
    "get": lambda c: c.request("GET", f"{CM_PATH}/cm-0"),
    "list": lambda c: c.request("GET", CM_PATH),
    "patch": _patch,
}


@dataclass
class LoadResult:
    """What one measurement did: ``count`` requests (or delivered events) in ``seconds`` of wall time."""

    count: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.count / self.seconds if self.seconds > 0 else 0.0


def request_load(host: str, port: int, token: str, op: str, seconds: float, connections: int) -> LoadResult:
    """``connections`` clients, each sending ``op`` requests one after the other on its own kept-alive connection
    for ``seconds``; the requests all answered in that time."""
    call = OPERATIONS[op]
    conns = [RawConnection(host, port, token) for _ in range(connections)]
    counts = [0] * connections
    errors: list[BaseException] = []
    start = threading.Barrier(connections + 1)
    deadline = [0.0]

    def run(k: int) -> None:
        conn, n = conns[k], 0
        try:
            start.wait()
            while time.perf_counter() < deadline[0]:
                call(conn)
                n += 1
        except BaseException as exc:  # reported by the caller
            errors.append(exc)
        counts[k] = n

    threads = [threading.Thread(target=run, args=(k,), name=f"bench-{op}-{k}") for k in range(connections)]
    for t in threads:
        t.start()
    t0 = time.perf_counter()
    deadline[0] = t0 + seconds
    start.wait()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    for conn in conns:
        conn.close()
    if errors:
        raise BenchError(f"{op} load failed: {errors[0]!r}")
    return LoadResult(sum(counts), elapsed)


MODIFIED_MARKER = b'{"type":"MODIFIED"'


def watch_fanout(host: str, port: int, token: str, watchers: int, events: int) -> LoadResult:
    """``watchers`` watch streams on the benchmark namespace's ConfigMaps (from the current resourceVersion), then
    ``events`` patches of one ConfigMap as fast as one connection sends them; the result is every MODIFIED event
    delivered to every watcher, timed from the first patch to the last event received."""
    writer = RawConnection(host, port, token)
    _, listed = writer.request("GET", f"{CM_PATH}?limit=1")
    rv = orjson.loads(listed)["metadata"]["resourceVersion"]
    streams = [RawConnection(host, port, token) for _ in range(watchers)]
    for conn in streams:
        conn.send("GET", f"{CM_PATH}?watch=1&resourceVersion={rv}&allowWatchBookmarks=false")
    for conn in streams:  # the server registers the watch before it sends the headers
        status, _ = conn.read_head()
        if status != 200:
            raise BenchError(f"watch answered {status}")
    received = [0] * watchers
    errors: list[BaseException] = []

    def read(k: int) -> None:
        conn, tail, n = streams[k], b"", 0
        try:
            data = conn.take_buffered()
            while True:
                chunk = tail + data
                n += chunk.count(MODIFIED_MARKER)
                if n >= events:
                    break
                tail = chunk[-(len(MODIFIED_MARKER) - 1):]
                data = conn.sock.recv(262144)
                if not data:
                    raise BenchError(f"watch {k} ended after {n} of {events} events")
        except BaseException as exc:  # reported by the caller
            errors.append(exc)
        received[k] = n

    readers = [threading.Thread(target=read, args=(k,), name=f"bench-watch-{k}") for k in range(watchers)]
    for t in readers:
        t.start()
    t0 = time.perf_counter()
    for _ in range(events):
        _patch(writer)
    for t in readers:
        t.join()
    elapsed = time.perf_counter() - t0
    for conn in [writer, *streams]:
        conn.close()
    if errors:
        raise BenchError(f"watch fan-out failed: {errors[0]!r}")
    return LoadResult(sum(received), elapsed)
