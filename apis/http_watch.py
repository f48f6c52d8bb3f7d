"""``HTTPWatch``: the events of one ``?watch=1`` HTTP stream, one JSON object per line.

Guarantees:
- Events are yielded whole and in order however the stream is cut into reads or chunks (an event split across
  chunks is reassembled; several events in one chunk are all yielded).
- Iteration ends without an exception when the server closes the stream, when no byte arrives for the read
  timeout (a dead socket), when the stream breaks, and soon after ``stop()``. A partial last line is dropped and
  logged, never yielded. The caller (the Reflector) then re-watches from its last resourceVersion.
- A malformed line (not JSON, or not ``{"type": str, "object": dict}``) is logged with the resource and ends the
  watch: the stream can no longer be trusted to be in step, and a re-watch resynchronises it.
- An ``ERROR`` event is yielded as ``WatchEvent("ERROR", status_dict)``; turning it into an error is the caller's
  job (``apis.errors.from_status``).
- ``stop()`` is thread-safe and idempotent; it unblocks a reader waiting for data by shutting the socket down.
- Memory is bounded: a line longer than ``max_event_bytes`` ends the watch.
"""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Protocol

import orjson
import urllib3
from urllib3.exceptions import ReadTimeoutError

from .chunked import ChunkedDecoder, ChunkedEncodingError
from .logs import get_logger
from .watch import WatchEvent

__all__ = ["HTTPWatch", "StreamResponse", "MAX_EVENT_BYTES", "READ_SIZE"]

log = get_logger(__name__)

_new_object = object.__new__
_set_type = WatchEvent.__dict__["type"].__set__  # the slots' own setters
_set_object = WatchEvent.__dict__["object"].__set__

MAX_EVENT_BYTES = 32 * 1024 * 1024
READ_SIZE = 64 * 1024


class StreamResponse(Protocol):
    """What ``HTTPWatch`` needs of a response (urllib3's ``HTTPResponse`` with ``preload_content=False``)."""

    def read1(self, amt: int | None = None) -> bytes: ...

    def close(self) -> None: ...

    def release_conn(self) -> None: ...


class _Malformed(Exception):
    pass


def parse_event(line: bytes | bytearray) -> WatchEvent:
    """Decode one stream line; raises ``_Malformed`` naming what is wrong."""
    try:
        raw = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise _Malformed(f"not JSON: {exc}") from None
    # orjson yields exact dicts and strs: class identity checks (no isinstance calls), once per event
    if raw.__class__ is not dict:
        raise _Malformed(f"expected a JSON object, got {type(raw).__name__}")
    typ, obj = raw.get("type"), raw.get("object")
    if typ.__class__ is not str or not typ:
        raise _Malformed("missing or non-string 'type'")
    if obj.__class__ is not dict:
        raise _Malformed(f"'object' of a {typ} event is not a JSON object")
    # WatchEvent(typ, obj) without the frozen dataclass's __init__ (two object.__setattr__ calls): once per event
    event = _new_object(WatchEvent)
    _set_type(event, typ)
    _set_object(event, obj)
    return event


def _chunked_body(response: StreamResponse) -> Callable[[int], bytes] | None:
    """The ``read1`` of the connection's buffered socket when nothing of ``response``'s chunked, unencoded body has
    been read yet: decoded by ``ChunkedDecoder``, a read then returns every event that arrived (``http.client`` reads
    one chunk per call, and the API server sends one event per chunk). ``None`` for any other response."""
    raw = getattr(response, "_fp", None)  # urllib3's HTTPResponse over http.client's
    if not isinstance(raw, http.client.HTTPResponse) or not raw.chunked or raw.chunk_left is not None:
        return None
    if (raw.getheader("Content-Encoding") or "identity").lower() != "identity":
        return None
    fp = raw.fp
    read1 = getattr(fp, "read1", None)
    return read1 if callable(read1) else None


def _shutdown_socket(response: StreamResponse) -> None:
    """Wake a thread blocked reading ``response``: shut its socket down (closing alone does not unblock recv)."""
    try:
        # urllib3's HTTPResponse has shutdown(), other responses may not
        response.shutdown()  # type: ignore[attr-defined]
        return
    except Exception:  # noqa: BLE001 - not supported by this response, or already released/closed
        pass
    sock = getattr(getattr(response, "connection", None), "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class HTTPWatch:
    """Iterate once over the events of a watch response; ``stop()`` from any thread ends the iteration."""

    def __init__(
        self,
        response: StreamResponse,
        log_fields: dict[str, str] | None = None,
        *,
        max_event_bytes: int = MAX_EVENT_BYTES,
        read_size: int = READ_SIZE,
    ) -> None:
        self._response = response
        self._fields = dict(log_fields or {})
        self._max = max_event_bytes
        self._read_size = read_size
        self._lock = threading.Lock()
        self._stopped = False
        self._started = False
        self._reading = False
        self._closed = False
        self.end_reason = ""  # why iteration ended: "closed", "stopped", "timeout", "broken", "malformed", "too-large"

    @property
    def stopped(self) -> bool:
        return self._stopped

    def stop(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            reading = self._reading
        if reading:
            _shutdown_socket(self._response)  # the reader sees EOF and closes the response itself
        else:
            self._close()

    def __enter__(self) -> HTTPWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __iter__(self) -> Iterator[WatchEvent]:
        with self._lock:
            if self._started:
                raise RuntimeError("a watch can be iterated only once")
            self._started = True
        return self._events()

    def _close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._response.close()
            self._response.release_conn()
        except Exception as exc:  # noqa: BLE001 - closing a broken stream must never raise into the caller
            log.debug("watch close failed", error=str(exc), **self._fields)

    def _end(self, reason: str, buffered: bytearray, **extra: object) -> None:
        self.end_reason = reason
        if reason == "stopped":
            return
        if buffered.strip():
            log.warning("watch stream ended mid-event; partial event dropped",
                        partial_bytes=len(buffered), reason=reason, **self._fields, **extra)
        elif reason != "closed":
            log.warning("watch stream ended", reason=reason, **self._fields, **extra)

    def _events(self) -> Iterator[WatchEvent]:
        with self._lock:
            if self._stopped:
                self.end_reason = "stopped"
                return
            self._reading = True
        buf = bytearray()
        read_raw = _chunked_body(self._response)
        read = self._response.read1 if read_raw is None else read_raw
        decoder = None if read_raw is None else ChunkedDecoder()
        try:
            while True:
                try:
                    data = read(self._read_size)
                    if decoder is None:
                        ended = not data
                    elif data:
                        data = decoder.feed(data)  # may be empty: only framing arrived
                        ended = decoder.done
                    else:
                        raise ChunkedEncodingError("the connection closed before the last chunk")
                except (urllib3.exceptions.HTTPError, OSError, http.client.HTTPException, ValueError) as exc:
                    if self._stopped:
                        self._end("stopped", buf)
                    elif isinstance(exc, (ReadTimeoutError, TimeoutError)) or isinstance(
                            getattr(exc, "__context__", None), TimeoutError):
                        self._end("timeout", buf, error=str(exc))
                    else:
                        self._end("broken", buf, error=f"{type(exc).__name__}: {exc}")
                    return
                if self._stopped:
                    self._end("stopped", buf)
                    return
                buf += data
                start = 0
                while (nl := buf.find(b"\n", start)) >= 0:
                    line = buf[start:nl]
                    start = nl + 1
                    if not line.strip():
                        continue
                    try:
                        event = parse_event(line)
                    except _Malformed as exc:
                        self.end_reason = "malformed"
                        log.warning("malformed watch event; ending the watch", problem=str(exc),
                                    line=bytes(line[:200]).decode("utf-8", "replace"), **self._fields)
                        return
                    yield event
                    if self._stopped:
                        self.end_reason = "stopped"
                        return
                del buf[:start]
                if ended:  # the server closed the stream, or sent its last chunk
                    self._end("closed", buf)
                    return
                if len(buf) > self._max:
                    self.end_reason = "too-large"
                    log.error("watch event larger than the limit; ending the watch",
                              limit_bytes=self._max, buffered_bytes=len(buf), **self._fields)
                    return
        finally:
            with self._lock:
                self._reading = False
            self._close()
