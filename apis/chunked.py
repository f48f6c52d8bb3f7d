"""``ChunkedDecoder``: the body of an HTTP/1.1 ``Transfer-Encoding: chunked`` stream, from reads cut anywhere.

A watch reads its stream with it straight from the connection's buffered socket, one ``recv`` for every event that
has arrived, where ``http.client`` takes at least one read call per chunk (the API server sends an event per chunk).

Guarantees:
- ``feed`` returns the chunk data of the bytes given, in order, whatever the cut (a size line, the data or its CRLF
  split across reads); chunk extensions (``;name=value``) are ignored.
- After the last chunk (size 0) ``done`` is true and further bytes (trailers) are ignored.
- A malformed size line, a size line longer than ``MAX_SIZE_LINE_BYTES`` or chunk data not followed by CRLF raises
  ``ChunkedEncodingError``: the stream is out of step and cannot be trusted.
"""

from __future__ import annotations

__all__ = ["ChunkedDecoder", "ChunkedEncodingError", "MAX_SIZE_LINE_BYTES"]

MAX_SIZE_LINE_BYTES = 4096
_HEX = frozenset(b"0123456789abcdefABCDEF")


class ChunkedEncodingError(ValueError):
    """The stream is not valid chunked encoding."""


class ChunkedDecoder:
    """Decodes one chunked body (module doc); not thread-safe: one reader feeds it."""

    __slots__ = ("_left", "_crlf", "_line", "done")

    def __init__(self) -> None:
        self._left = 0  # data bytes of the current chunk still to come
        self._crlf = b""  # what is still due of the CRLF after the current chunk's data
        self._line = b""  # a size line cut by the end of a read
        self.done = False

    def feed(self, data: bytes) -> bytes:
        """The chunk data in ``data`` (possibly empty); raises ``ChunkedEncodingError``."""
        out: list[bytes] = []
        pos, end = 0, len(data)
        while pos < end and not self.done:
            if self._left:
                take = min(self._left, end - pos)
                out.append(data[pos:pos + take])
                pos += take
                self._left -= take
                if not self._left:
                    self._crlf = b"\r\n"
            elif self._crlf:
                take = min(len(self._crlf), end - pos)
                if data[pos:pos + take] != self._crlf[:take]:
                    raise ChunkedEncodingError("chunk data is not followed by CRLF")
                self._crlf = self._crlf[take:]
                pos += take
            else:
                nl = data.find(b"\n", pos)
                if nl < 0:
                    self._line += data[pos:]
                    if len(self._line) > MAX_SIZE_LINE_BYTES:
                        raise ChunkedEncodingError(f"chunk size line longer than {MAX_SIZE_LINE_BYTES} bytes")
                    break
                line, self._line = self._line + data[pos:nl], b""
                pos = nl + 1
                self._start_chunk(line)
        return b"".join(out)

    def _start_chunk(self, line: bytes) -> None:
        if len(line) > MAX_SIZE_LINE_BYTES:
            raise ChunkedEncodingError(f"chunk size line longer than {MAX_SIZE_LINE_BYTES} bytes")
        size = line.split(b";", 1)[0].strip()
        if not size or not _HEX.issuperset(size):
            raise ChunkedEncodingError(f"invalid chunk size line {line[:64]!r}")
        self._left = int(size, 16)
        if not self._left:
            self.done = True
