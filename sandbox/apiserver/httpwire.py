"""The HTTP/1.1 request head as the sandbox API server reads it, without ``http.server``'s detour through the
``email`` package (which cost about a third of a GET): the request line's checks are http.server's, the header
block keeps its limits (a line of at most 65536 bytes, at most 100 header lines: 431 beyond), and a line that is
not ``Name: value`` is a 400, as Go's server answers (``email`` dropped it and every header after it).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

__all__ = ["MAX_HEADER_LINE", "MAX_HEADERS", "HeadError", "RequestHeaders", "RequestLine", "parse_request_line",
           "read_headers"]

MAX_HEADER_LINE = 65536  # http.client's _MAXLINE
MAX_HEADERS = 100  # http.client's _MAXHEADERS


class HeadError(Exception):
    """A request head the server refuses: ``code`` and the message of the Status it answers. ``version`` is the
    request's HTTP version when it was understood (the answer's status line uses it)."""

    def __init__(self, code: int, message: str, version: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.version = version


@dataclass(frozen=True)
class RequestLine:
    command: str
    path: str
    version: str  # "HTTP/0.9" when the line had none
    keep_alive: bool  # HTTP/1.1 or later: the connection stays open unless the client says otherwise


def parse_request_line(line: str, default_version: str = "HTTP/0.9") -> RequestLine:
    """``METHOD target HTTP/x.y``, checked as http.server's ``parse_request`` checks it (``HeadError`` with its
    codes and messages otherwise). A line without a version is returned as ``default_version`` (HTTP/0.9)."""
    words = line.split()
    version, keep_alive = default_version, False
    if len(words) >= 3:
        version = words[-1]
        try:
            if not version.startswith("HTTP/"):
                raise ValueError
            numbers = version.split("/", 1)[1].split(".")
            if len(numbers) != 2 or any(not n.isdigit() or len(n) > 10 for n in numbers):
                raise ValueError
            major, minor = int(numbers[0]), int(numbers[1])
        except (ValueError, IndexError):
            raise HeadError(400, f"Bad request version ({version!r})") from None
        if (major, minor) >= (2, 0):
            raise HeadError(505, f"Invalid HTTP version ({version.split('/', 1)[1]})", version)
        keep_alive = (major, minor) >= (1, 1)
    if not 2 <= len(words) <= 3:
        raise HeadError(400, f"Bad request syntax ({line!r})", version if len(words) >= 3 else None)
    command, path = words[0], words[1]
    if len(words) == 2:
        keep_alive = False
        if command != "GET":
            raise HeadError(400, f"Bad HTTP/0.9 request type ({command!r})")
    if path.startswith("//"):  # as http.server (gh-87389): never a scheme-relative URI
        path = "/" + path.lstrip("/")
    return RequestLine(command, path, version, keep_alive)


class RequestHeaders:
    """The request's header fields, looked up case-insensitively; ``get`` answers the first field of a name (as
    ``email.message.Message`` did), ``get_all`` every one."""

    __slots__ = ("_fields", "_first")

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        self._fields = fields
        self._first: dict[str, str] = {}
        for name, value in fields:
            self._first.setdefault(name.lower(), value)

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._first.get(name.lower(), default)

    def __getitem__(self, name: str) -> str | None:
        return self._first.get(name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._first

    def get_all(self, name: str, default: list[str] | None = None) -> list[str] | None:
        key = name.lower()
        found = [value for field, value in self._fields if field.lower() == key]
        return found or default

    def items(self) -> list[tuple[str, str]]:
        return list(self._fields)

    def keys(self) -> list[str]:
        return [name for name, _ in self._fields]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._fields)


class LineReader(Protocol):
    def readline(self, size: int = -1, /) -> bytes: ...


def read_headers(rfile: LineReader) -> RequestHeaders:
    """The header block up to its empty line (or the end of the stream). Obsolete line folding (a line starting
    with a space or tab) continues the previous field. A block that is already buffered whole, with CRLF line ends,
    is taken in one read; anything else line by line."""
    if isinstance(rfile, io.BufferedReader):
        buffered = rfile.peek(MAX_HEADER_LINE)
        if buffered.startswith(b"\r\n"):  # no header at all
            rfile.read(2)
            return RequestHeaders([])
        end = buffered.find(b"\r\n\r\n")  # with CRLF line ends only, the first empty line
        if end > 0 and buffered.count(b"\n", 0, end) == buffered.count(b"\r\n", 0, end):
            lines = rfile.read(end + 4)[:end].split(b"\r\n")
            if len(lines) + 1 > MAX_HEADERS:  # the empty line counts, as in http.client
                raise HeadError(431, "Too many headers")
            fields: list[tuple[str, str]] = []
            for raw in lines:
                if len(raw) + 2 > MAX_HEADER_LINE:
                    raise HeadError(431, "Line too long")
                _add_field(fields, raw.decode("iso-8859-1"))
            return RequestHeaders(fields)
    return _read_header_lines(rfile)


def _read_header_lines(rfile: LineReader) -> RequestHeaders:
    fields: list[tuple[str, str]] = []
    lines = 0
    while True:
        raw = rfile.readline(MAX_HEADER_LINE + 1)
        if len(raw) > MAX_HEADER_LINE:
            raise HeadError(431, "Line too long")
        lines += 1
        if lines > MAX_HEADERS:
            raise HeadError(431, "Too many headers")
        if raw in (b"\r\n", b"\n", b""):
            return RequestHeaders(fields)
        _add_field(fields, raw.decode("iso-8859-1").rstrip("\r\n"))


def _add_field(fields: list[tuple[str, str]], line: str) -> None:
    if line[:1] in (" ", "\t") and fields:
        name, value = fields[-1]
        fields[-1] = (name, value + line)
        return
    name, colon, value = line.partition(":")
    if not colon or not name or name != name.strip():
        raise HeadError(400, f"malformed header line {line[:80]!r}")
    fields.append((name, value.lstrip(" \t")))
