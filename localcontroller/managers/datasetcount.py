"""Counting a Dataset's samples in constant memory, slice by slice, and again only over what was appended.

The samples are what ``parse_samples`` (``dataset.py``) makes of the lines ``Storage.iter_lines`` yields, exactly:
lines split at ``\\n`` (one trailing ``\\r`` dropped, no empty last line), a line counts when ``str.strip`` leaves
something, csv drops the first such line (its header). No csv quoting: a quoted field spanning lines counts once per
line, as Go Sedna's LC and the learning jobs (which split the samples by line) see it. A line over
``MAX_LINE_BYTES`` or a file that is not UTF-8 cannot be counted, as it cannot be read.

Memory does not grow with the file: it is read in chunks of ``READ_CHUNK`` bytes, each chunk's complete lines are
counted with C-level string operations (``str.count`` and one regular expression for whitespace-only lines), and only
the partial last line is carried to the next chunk. A ``CountJob`` reads at most ``SLICE_BYTES`` per ``step``, so a
pool of a few threads can take turns between datasets: a big file never holds a thread for long.

What a finished count saw is an ``IndexState``: the file's version (size, identity, change tag), the counts up to the
end of its last complete line and a digest of the first and last ``FINGERPRINT_BYTES`` before that point. The next
count of the same version reads nothing (unless the file was modified within ``RACY_NS`` of the count: its mtime
cannot tell a later change then, so it is treated as possibly appended to); of the same local file grown (same device and inode, both digests equal), it
reads from the last complete line on; anything else (a replaced, shrunk or rewritten file, any new S3 object) is
counted in full.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from localcontroller.storage import MAX_LINE_BYTES, Storage, StorageError, parse_s3_url, url_scheme
from localcontroller.storage.urls import LOCAL_SCHEME

__all__ = [
    "FORMATS",
    "READ_CHUNK",
    "SLICE_BYTES",
    "CountError",
    "CountJob",
    "IndexChanged",
    "IndexFile",
    "IndexState",
    "IndexVersion",
    "LocalIndexFile",
    "S3IndexFile",
    "Tally",
    "count_index",
    "count_samples",
    "index_file",
    "parse_samples",
    "parse_samples_after",
    "read_samples",
]

FORMATS = ("txt", "csv")
READ_CHUNK = 1024 * 1024  # at most MAX_LINE_BYTES: then only a chunk's first line can be too long
SLICE_BYTES = 8 * 1024 * 1024  # over MAX_LINE_BYTES + 2, so that every slice ends at least one line
FINGERPRINT_BYTES = 4096
# file timestamps are coarse (a clock tick): a file modified this shortly before a count may change again unseen by
# its mtime, so its next count checks the fingerprint and reads the last line again instead of trusting the stat
RACY_NS = 2_000_000_000

# a whitespace-only line after a newline (the newline ending it not consumed: the next match starts there)
_BLANK_AFTER_NEWLINE = re.compile(r"\n[^\S\n]*(?=\n)")
_BLANK_FIRST = re.compile(r"[^\S\n]*\n")

# reasons the LC gives the GM (a Dataset condition's reason)
URL_NOT_FOUND = "URLNotFound"
URL_INVALID = "URLInvalid"
FORMAT_UNSUPPORTED = "FormatUnsupported"
CREDENTIAL_INVALID = "CredentialInvalid"
READ_FAILED = "ReadFailed"


class CountError(Exception):
    """The samples cannot be counted: ``reason`` (CamelCase, for the Dataset's condition) and ``message``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class IndexChanged(Exception):
    """The index file changed while a count read it (replaced or shrunk): count it again."""


@dataclass(frozen=True)
class IndexVersion:
    """What identifies an index file's content: ``file_id`` names the file (a local file's device and inode; ``""``
    for S3), ``change_tag`` its content (a local file's mtime and ctime; an object's ETag). ``appendable``: a grown
    file of the same ``file_id`` may be the old content plus appended bytes (local files; S3 objects never are)."""

    size: int
    file_id: str
    change_tag: str
    appendable: bool
    modified_ns: int = 0  # a local file's mtime


class IndexFile(Protocol):
    """An index file to count: its version now, and its bytes as they are in a version."""

    url: str

    def version(self) -> IndexVersion:
        """``CountError`` when it cannot be found or read."""

    def read(self, version: IndexVersion, start: int, end: int) -> Iterator[bytes]:
        """Bytes ``[start, end)`` of ``version`` in chunks of at most ``READ_CHUNK`` bytes; ``IndexChanged`` when the
        file is no longer that version (fewer bytes than asked also mean so), ``CountError`` when it cannot be read."""


@dataclass(frozen=True)
class Tally:
    """The complete lines from the start of a file to ``offset`` (the end of one of them): how many, and how many of
    them are not blank."""

    offset: int = 0
    lines: int = 0
    non_blank: int = 0


@dataclass(frozen=True)
class IndexState:
    """What a finished count saw: the version, the complete lines (``tally``), whether the partial last line (after
    ``tally.offset``) is a sample, and digests of the first and last ``FINGERPRINT_BYTES`` of ``[0, tally.offset)``."""

    version: IndexVersion
    tally: Tally
    tail_non_blank: bool
    fingerprint: bytes
    racy: bool = False  # modified too shortly before the count for its mtime to tell a later change of the same size

    def samples(self, fmt: str) -> int:
        non_blank = self.tally.non_blank + int(self.tail_non_blank)
        return max(non_blank - 1, 0) if fmt.lower() == "csv" else non_blank


def _decode(data: bytes, url: str, line_number: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        number = line_number + data.count(b"\n", 0, exc.start)
        raise CountError(READ_FAILED, f"{url}: line {number} is not UTF-8") from None


def _line_too_long(url: str) -> CountError:
    return CountError(READ_FAILED, f"{url}: a line is longer than {MAX_LINE_BYTES} bytes")


def scan_lines(block: bytes, tally: Tally, url: str) -> Tally:
    """``tally`` advanced over ``block``: complete lines (ending in ``\\n``) starting at ``tally.offset``, of which
    only the first may be longer than ``READ_CHUNK``."""
    first_end = block.find(b"\n")
    first_length = first_end - 1 if block[first_end - 1:first_end] == b"\r" else first_end
    if first_length > MAX_LINE_BYTES:
        raise _line_too_long(url)
    text = _decode(block, url, tally.lines + 1)
    lines = text.count("\n")
    blank = _BLANK_AFTER_NEWLINE.subn("", text)[1] + (1 if _BLANK_FIRST.match(text) else 0)
    return Tally(tally.offset + len(block), tally.lines + lines, tally.non_blank + lines - blank)


def tail_is_sample(tail: bytes, tally: Tally, url: str) -> bool:
    """Whether the bytes after the last newline (a last line without one) make a sample."""
    line = tail[:-1] if tail.endswith(b"\r") else tail
    if len(line) > MAX_LINE_BYTES:
        raise _line_too_long(url)
    return bool(_decode(tail, url, tally.lines + 1).strip())


def _fingerprint(index: IndexFile, version: IndexVersion, offset: int) -> bytes:
    digest = hashlib.blake2b(digest_size=16)
    digest.update(offset.to_bytes(8, "big"))
    for start, end in ((0, min(FINGERPRINT_BYTES, offset)), (max(0, offset - FINGERPRINT_BYTES), offset)):
        for chunk in index.read(version, start, end):
            digest.update(chunk)
    return digest.digest()


class CountJob:
    """One count of one index file in ``step``s of at most ``slice_bytes`` read; ``previous`` (the last count's
    state) lets it read nothing or only what was appended. Not thread-safe: one thread steps it at a time."""

    def __init__(self, index: IndexFile, fmt: str, previous: IndexState | None = None,
                 slice_bytes: int = SLICE_BYTES) -> None:
        if fmt.lower() not in FORMATS:
            raise CountError(FORMAT_UNSUPPORTED, f"format {fmt!r} is not supported (txt or csv)")
        self.index = index
        self.previous = previous
        self.slice_bytes = max(slice_bytes, MAX_LINE_BYTES + 2)
        self.version: IndexVersion | None = None
        self.tally = Tally()  # from the start, or from where ``previous`` left off when the file grew
        self._started_ns = 0

    def step(self) -> IndexState | None:
        """Read one slice; the final state when the count is done, else ``None``. ``CountError`` when the file
        cannot be counted, ``IndexChanged`` when it changed meanwhile (start a new job)."""
        if self.version is None:
            done = self._start()
            if done is not None:
                return done
        version = self.version
        assert version is not None
        end = min(version.size, self.tally.offset + self.slice_bytes)
        tally, tail, read = self.tally, b"", 0
        for chunk in self.index.read(version, self.tally.offset, end):
            read += len(chunk)
            buffer = tail + chunk if tail else chunk
            cut = buffer.rfind(b"\n") + 1
            if cut:
                tally = scan_lines(buffer[:cut], tally, self.index.url)
            tail = buffer[cut:]
            if len(tail) > MAX_LINE_BYTES + 1:
                raise _line_too_long(self.index.url)
        if read != end - self.tally.offset:
            raise IndexChanged(f"{self.index.url}: {read} bytes read of {end - self.tally.offset} expected")
        self.tally = tally
        if end < version.size:
            return None  # the partial line at the slice's end is read again by the next step
        tail_non_blank = tail_is_sample(tail, tally, self.index.url) if tail else False
        fingerprint = _fingerprint(self.index, version, tally.offset) if version.appendable else b""
        racy = version.appendable and version.modified_ns >= self._started_ns - RACY_NS
        return IndexState(version, tally, tail_non_blank, fingerprint, racy)

    def _start(self) -> IndexState | None:
        self._started_ns = time.time_ns()
        version = self.version = self.index.version()
        previous = self.previous
        if previous is None:
            return None
        if previous.version == version and not previous.racy:
            return previous
        old = previous.version
        if (version.appendable and old.appendable and version.file_id == old.file_id
                and version.size >= previous.tally.offset
                and _fingerprint(self.index, version, previous.tally.offset) == previous.fingerprint):
            self.tally = previous.tally
        return None

    def run(self) -> IndexState:
        """Every step at once."""
        while (state := self.step()) is None:
            pass
        return state


# -- index files --------------------------------------------------------------------------------------------------
class LocalIndexFile:
    """A host path below the rootfs, read with ``pread``; the device and inode tell a replaced file."""

    def __init__(self, storage: Storage, url: str) -> None:
        self.url = url
        try:
            self.path = storage.local_path(url)
        except StorageError as exc:
            raise CountError(URL_INVALID, str(exc)) from None

    def version(self) -> IndexVersion:
        try:
            info = os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            raise CountError(URL_NOT_FOUND, f"{self.url}: does not exist or is not a file") from None
        except OSError as exc:
            raise CountError(READ_FAILED, f"{self.url}: stat failed: {exc.strerror or exc}") from None
        if not stat.S_ISREG(info.st_mode):
            raise CountError(URL_NOT_FOUND, f"{self.url}: does not exist or is not a file")
        return IndexVersion(info.st_size, f"{info.st_dev}:{info.st_ino}", f"{info.st_mtime_ns}:{info.st_ctime_ns}",
                            appendable=True, modified_ns=info.st_mtime_ns)

    def read(self, version: IndexVersion, start: int, end: int) -> Iterator[bytes]:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            raise IndexChanged(f"{self.url}: removed while being counted") from None
        except OSError as exc:
            raise CountError(READ_FAILED, f"{self.url}: open failed: {exc.strerror or exc}") from None
        try:
            info = os.fstat(fd)
            if f"{info.st_dev}:{info.st_ino}" != version.file_id:
                raise IndexChanged(f"{self.url}: replaced while being counted")
            offset = start
            while offset < end:
                try:
                    chunk = os.pread(fd, min(READ_CHUNK, end - offset), offset)
                except OSError as exc:
                    raise CountError(READ_FAILED, f"{self.url}: read failed: {exc.strerror or exc}") from None
                if not chunk:
                    return  # shrunk: the caller sees fewer bytes than it asked for
                offset += len(chunk)
                yield chunk
        finally:
            os.close(fd)


class S3IndexFile:
    """An S3 object: ``HeadObject`` for its version, ranged ``GetObject`` with ``If-Match`` its ETag for its bytes."""

    def __init__(self, storage: Storage, url: str) -> None:
        self.url = url
        try:
            self.location = parse_s3_url(url)
            self.client = storage.s3_client(url)
        except StorageError as exc:
            reason = CREDENTIAL_INVALID if "credential" in exc.problem else URL_INVALID
            raise CountError(reason, str(exc)) from None

    def version(self) -> IndexVersion:
        try:
            head = self.client.stat(self.location)
        except StorageError as exc:
            raise CountError(URL_NOT_FOUND if exc.missing else READ_FAILED, str(exc)) from None
        return IndexVersion(head.size, "", head.etag, appendable=False)

    def read(self, version: IndexVersion, start: int, end: int) -> Iterator[bytes]:
        try:
            for chunk in self.client.iter_range(self.location, start, end, version.change_tag, READ_CHUNK):
                for piece in range(0, len(chunk), READ_CHUNK):
                    yield chunk[piece:piece + READ_CHUNK]
        except StorageError as exc:
            if exc.changed or exc.missing:
                raise IndexChanged(str(exc)) from None
            raise CountError(READ_FAILED, str(exc)) from None


def index_file(storage: Storage, url: str) -> IndexFile:
    """The index file at a Dataset's ``spec.url``; ``CountError`` for an empty, unsupported or escaping URL."""
    if not url:
        raise CountError(URL_INVALID, "spec.url is empty")
    try:
        local = url_scheme(url) == LOCAL_SCHEME
    except StorageError as exc:
        raise CountError(URL_INVALID, str(exc)) from None
    return LocalIndexFile(storage, url) if local else S3IndexFile(storage, url)


def count_index(index: IndexFile, fmt: str) -> int:
    """The samples of an index file, counted in full."""
    return CountJob(index, fmt).run().samples(fmt)


def parse_samples(lines: Iterable[str], fmt: str) -> tuple[str, list[str]]:
    """``(header, samples)`` of an index file's lines: the non-empty lines, the first one being the header for csv
    (``""`` for txt). ``ValueError`` for a format other than txt and csv."""
    header, samples, _ = parse_samples_after(lines, fmt, 0)
    return header, samples


def parse_samples_after(lines: Iterable[str], fmt: str, skip: int) -> tuple[str, list[str], int]:
    """``parse_samples`` without the first ``skip`` samples, which are passed over and never held (memory follows
    what is returned, not the file): ``(header, samples, how many were passed over)``."""
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is not supported (txt or csv)")
    header: str | None = None if fmt == "csv" else ""
    samples: list[str] = []
    passed = 0
    for line in lines:
        if not line.strip():
            continue
        if header is None:
            header = line.rstrip("\r\n")
        elif passed < skip:
            passed += 1
        else:
            samples.append(line.rstrip("\r\n"))
    return header or "", samples, passed


def read_samples(path: str, fmt: str) -> list[str]:
    """The samples of the index file at ``path`` (a path of the LC's filesystem)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return parse_samples(fh, fmt)[1]


def count_samples(path: str, fmt: str) -> int:
    """The samples of the index file at ``path`` (a path of the LC's filesystem), counted in constant memory."""
    if fmt.lower() not in FORMATS:
        raise ValueError(f"format {fmt!r} is not supported (txt or csv)")
    return count_index(index_file(Storage("/"), os.path.abspath(path)), fmt)
