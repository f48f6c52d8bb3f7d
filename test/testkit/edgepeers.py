"""Edge-link peers written from the protocol (JSON + base64, as Go Sedna marshals ``model.Message``), not from our
``apis.edge``: ``GoLC`` behaves like Go Sedna's LocalController, ``FakeGM`` like a GM (Go's or, with ``features``,
ours). Tests check each of our programs against them, so the wire format is verified independently."""

from __future__ import annotations

import base64
import json
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from websockets.sync.client import connect
from websockets.sync.server import ServerConnection, serve

__all__ = ["FakeGM", "GoLC", "make_frame", "parse_frame"]


def make_frame(namespace: str, kind: str, name: str, operation: str, content: Any = None,
               **header_extra: str) -> str:
    """A frame as Go's ``WriteJSON(&Message{...})`` writes it; ``content`` is JSON-encoded unless bytes."""
    if content is not None and not isinstance(content, bytes):
        content = json.dumps(content).encode()
    header = {"namespace": namespace, "resourceKind": kind, "resourceName": name, "operation": operation,
              **header_extra}
    return json.dumps({"header": header, "content": base64.b64encode(content).decode() if content is not None
                       else None})


def parse_frame(text: str | bytes) -> tuple[dict[str, Any], Any]:
    """``(header, content)`` of a frame, content JSON-decoded (``None`` when null)."""
    raw = json.loads(text)
    content = raw.get("content")
    return raw["header"], json.loads(base64.b64decode(content, validate=True)) if content is not None else None


class GoLC:
    """A websocket client that behaves like Go Sedna's LC: ``Node-Name`` header, a bare empty ``MessageHeader`` as
    greeting, base64 JSON content, never an id or an ack."""

    def __init__(self, url: str, node: str, headers: dict[str, str] | None = None, greet: bool = True) -> None:
        self.node = node
        # entered as a context manager: how websockets >= 17.1 wants a connection used (closed by close())
        self.conn = connect(url, additional_headers={"Node-Name": node, **(headers or {})}, open_timeout=10).__enter__()
        if greet:
            self.conn.send(json.dumps({"namespace": "", "resourceKind": "", "resourceName": "", "operation": ""}))

    def send_status(self, namespace: str, kind: str, name: str, content: Any, **header_extra: str) -> None:
        self.conn.send(make_frame(namespace, kind, name, "status", content, **header_extra))

    def send_raw(self, data: str | bytes) -> None:
        self.conn.send(data)

    def recv(self, timeout: float = 10.0) -> tuple[dict[str, Any], Any]:
        return parse_frame(self.conn.recv(timeout=timeout))

    def recv_until(self, pred: Callable[[dict[str, Any], Any], bool], timeout: float = 10.0) -> tuple[dict, Any]:
        """The first frame for which ``pred(header, content)`` holds; ``AssertionError`` after ``timeout``."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no matching frame within {timeout}s; saw {seen}")
            try:
                header, content = self.recv(remaining)
            except TimeoutError:
                continue
            if pred(header, content):
                return header, content
            seen.append(header)

    def record(self) -> None:
        """Read every frame from now on in a background thread into ``received`` (use ``wait_frame`` then, not
        ``recv``)."""
        self.received: list[tuple[dict[str, Any], Any]] = []
        self._received_lock = threading.Lock()

        def read() -> None:
            try:
                for data in self.conn:
                    frame = parse_frame(data)
                    with self._received_lock:
                        self.received.append(frame)
            except Exception:
                pass  # closed

        threading.Thread(target=read, name=f"golc-{self.node}", daemon=True).start()

    def frames(self, pred: Callable[[dict[str, Any], Any], bool] = lambda h, c: True) -> list[tuple[dict, Any]]:
        """The recorded frames for which ``pred(header, content)`` holds, in arrival order."""
        with self._received_lock:
            return [f for f in self.received if pred(*f)]

    def close(self) -> None:
        self.conn.close()


class FakeGM:
    """A GM on 127.0.0.1 written from the protocol. ``features=None`` behaves like Go's GM (never answers the hello,
    never acks); a list answers the LC's hello with it, and with ``"ack"`` acks every report carrying an id.
    ``frames`` holds ``(node, header, content)`` of every frame received; ``send`` writes to the latest connection."""

    def __init__(self, features: list[str] | None = None, status: int = 101, auto_ack: bool = True) -> None:
        self.features = features
        self.auto_ack = auto_ack  # with "ack" negotiated: answer every report with an id
        self.status = status  # anything but 101 refuses the upgrade with that HTTP status
        self.frames: queue.Queue[tuple[str, dict[str, Any], Any]] = queue.Queue()
        self.requests: list[dict[str, str]] = []
        self.acked: list[str] = []
        self.connected = threading.Event()
        self._conn: ServerConnection | None = None
        self._server = serve(self._handle, "127.0.0.1", 0, process_request=self._check)
        self.port = self._server.socket.getsockname()[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _check(self, conn: ServerConnection, request: Any) -> Any:
        self.requests.append(dict(request.headers.raw_items()))
        if self.status != 101:
            return conn.respond(self.status, "refused by the test\n")
        return None

    def _handle(self, conn: ServerConnection) -> None:
        node = conn.request.headers.get("Node-Name", "") if conn.request is not None else ""
        self._conn = conn
        self.connected.set()
        try:
            for data in conn:
                raw = json.loads(data)
                header = raw.get("header")
                if header is None:  # Go's greeting: a bare MessageHeader
                    self.frames.put((node, raw, None))
                    continue
                _, content = parse_frame(data)
                self.frames.put((node, header, content))
                if header.get("operation") == "hello" and self.features is not None:
                    conn.send(make_frame("", "", "", "hello", {"features": self.features}))
                elif header.get("id") and self.auto_ack and self.features is not None and "ack" in self.features:
                    self.acked.append(header["id"])
                    conn.send(make_frame(header["namespace"], header["resourceKind"], header["resourceName"], "ack",
                                         {}, id=header["id"]))
        except Exception:
            pass
        finally:
            self.connected.clear()

    def send(self, text: str) -> None:
        assert self._conn is not None, "no LC connected"
        self._conn.send(text)

    def next_frame(self, pred: Callable[[dict[str, Any], Any], bool] = lambda h, c: True,
                   timeout: float = 10.0) -> tuple[str, dict[str, Any], Any]:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no matching frame from the LC within {timeout}s")
            try:
                node, header, content = self.frames.get(timeout=remaining)
            except queue.Empty:
                continue
            if pred(header, content):
                return node, header, content

    def drop_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()

    def close(self) -> None:
        self._server.shutdown()
        self._thread.join(5)
