"""A tiny raw-HTTP client for sandbox tests (http.client; watch streams read line by line)."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class RawClient:
    def __init__(self, url: str, timeout: float = 5.0) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.timeout = parts.hostname, parts.port, timeout

    def _conn(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def request(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json", **headers: str
    ) -> Reply:
        conn = self._conn()
        try:
            data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
            hdrs = {"Content-Type": content_type, **{k.replace("_", "-"): v for k, v in headers.items()}}
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
        finally:
            conn.close()

    def get(self, path: str, **headers: str) -> Reply:
        return self.request("GET", path, **headers)

    def stream(self, path: str, **headers: str) -> Iterator[tuple[http.client.HTTPResponse, dict[str, Any] | None]]:
        """Yield (response, event) per watch line; the event is None once when the stream ends cleanly."""
        conn = self._conn()
        try:
            conn.request("GET", path, headers={k.replace("_", "-"): v for k, v in headers.items()})
            resp = conn.getresponse()
            while True:
                line = resp.readline()
                if not line:
                    yield resp, None
                    return
                yield resp, json.loads(line)
        finally:
            conn.close()

    def watch_events(self, path: str, limit: int | None = None) -> list[dict[str, Any]]:
        """Every event of a watch until the server ends it (or ``limit`` events)."""
        events = []
        for _, event in self.stream(path):
            if event is None:
                break
            events.append(event)
            if limit is not None and len(events) >= limit:
                break
        return events


def raw_exchange(url: str, data: bytes, half_close: bool = True, timeout: float = 5.0) -> Reply:
    """Send ``data`` as is on a new connection (then half-close it unless told not to) and parse the one response
    (status line, headers, a Content-Length body); a connection closed without an answer is status 0."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server answered (and stopped reading) before the whole request was sent: read its answer
        reader = sock.makefile("rb")
        status_line = reader.readline(65537)
        if not status_line:
            return Reply(0, {}, b"")
        status = int(status_line.split(b" ", 2)[1])
        headers: dict[str, str] = {}
        while (line := reader.readline(65537)) not in (b"\r\n", b"\n", b""):
            key, _, value = line.decode("latin-1").partition(":")
            headers[key.strip().lower()] = value.strip()
        body = reader.read(int(headers.get("content-length", "0")))
        return Reply(status, headers, body)


def request_bytes(method: str, path: str, body: bytes = b"", content_type: str | None = "application/json",
                  **headers: str) -> bytes:
    """One HTTP/1.1 request as raw bytes (Content-Length set from ``body``; ``content_type`` None sends none)."""
    lines = [f"{method} {path} HTTP/1.1", "Host: sandbox"]
    if content_type is not None:
        lines.append(f"Content-Type: {content_type}")
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
