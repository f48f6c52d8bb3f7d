"""One job's or dataset's storage (Go ``pkg/localcontroller/storage.Storage``): host paths under the rootfs and
``s3://bucket/key`` with the credential from the ``sedna.io/credential`` annotation.

Arguments named ``url`` are storage URLs: a host path (``/data/train.txt``, read at ``<rootfs>/data/train.txt``) or an
S3 URL. Arguments named ``local_path`` are paths of the LC's own filesystem (a temporary file, say), used as they are.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath

import structlog

from .errors import StorageError
from .local import RootFS, copy_file_atomically
from .s3 import DEFAULT_PART_SIZE, S3Client, parse_credential
from .urls import LOCAL_SCHEME, S3_SCHEME, S3Location, is_local_url, parse_s3_url, url_scheme

__all__ = ["MAX_LINE_BYTES", "MAX_TEXT_BYTES", "Storage"]

log = structlog.get_logger(__name__)

MAX_LINE_BYTES = 1024 * 1024
MAX_TEXT_BYTES = 16 * 1024 * 1024
_CHUNK = 256 * 1024


class Storage:
    """Reads, copies and writes files by URL. Safe to share between threads; ``set_credential`` swaps the S3
    client atomically. Every failure is a ``StorageError`` naming the URL."""

    def __init__(self, rootfs: str | os.PathLike[str] = "/", credential: str | None = None,
                 part_size: int = DEFAULT_PART_SIZE) -> None:
        self.rootfs = RootFS(rootfs)
        self._part_size = part_size
        self._s3: S3Client | None = None
        if credential is not None:
            self.set_credential(credential)

    def __repr__(self) -> str:
        return f"Storage(rootfs={str(self.rootfs.root)!r}, s3={self._s3!r})"

    def set_credential(self, credential: str) -> None:
        """Use the S3 endpoint and keys of a ``sedna.io/credential`` value (Go ``SetCredential``); ``ValueError``
        names a missing or bad key."""
        self._s3 = S3Client(parse_credential(credential), part_size=self._part_size)

    @staticmethod
    def is_local_url(url: str) -> bool:
        return is_local_url(url)

    def local_path(self, url: str) -> Path:
        """Where the LC finds the host path ``url`` (``<rootfs>/<url>``); refuses one that escapes the rootfs."""
        return self.rootfs.resolve(url)

    def download(self, url: str, local_path: str | os.PathLike[str] | None = None) -> Path:
        """Make the file at ``url`` available at ``local_path`` and return that path. Without ``local_path`` a host
        path is returned where it is (no copy) and an S3 object goes to a new temporary directory, which the caller
        removes."""
        if url_scheme(url) == LOCAL_SCHEME:
            src = self._existing_file(url)
            if local_path is None:
                return src
            dst = Path(local_path)
            self._copy_local(src, dst, url)
            return dst
        location = parse_s3_url(url)
        if local_path is not None:
            dst = Path(local_path)
            self._download_s3(location, dst)
            return dst
        tmp = Path(tempfile.mkdtemp(prefix="sedna-lc-"))
        try:
            dst = tmp / (PurePosixPath(location.key).name or "object")
            self._download_s3(location, dst)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return dst

    def upload(self, src: str | os.PathLike[str], url: str) -> None:
        """Put ``src`` at the S3 URL ``url`` (Go ``Upload``): ``src`` is a local path of the LC's filesystem, or an
        S3 URL to copy server-side."""
        if url_scheme(url) != S3_SCHEME:
            raise StorageError(url, "upload needs an s3:// URL")
        dst = parse_s3_url(url)
        source = os.fspath(src)
        if url_scheme(source) == S3_SCHEME:
            self._client(url).copy(parse_s3_url(source), dst)
        else:
            path = Path(source)
            if not path.is_file():
                raise StorageError(source, "does not exist or is not a file")
            self._client(url).upload(path, dst)
        log.debug("uploaded", src=source, dst=url)

    def copy_file(self, src_url: str, dst_url: str) -> None:
        """Copy between any two storage URLs (Go ``CopyFile``): host path ↔ host path, host path ↔ S3, S3 → S3
        (server-side). A host-path destination is replaced atomically."""
        src_scheme, dst_scheme = url_scheme(src_url), url_scheme(dst_url)
        if dst_scheme == LOCAL_SCHEME:
            dst = self.rootfs.resolve(dst_url)
            if src_scheme == LOCAL_SCHEME:
                self._copy_local(self._existing_file(src_url), dst, src_url)
            else:
                self._download_s3(parse_s3_url(src_url), dst)
        elif src_scheme == LOCAL_SCHEME:
            self._client(dst_url).upload(self._existing_file(src_url), parse_s3_url(dst_url))
        else:
            self._client(dst_url).copy(parse_s3_url(src_url), parse_s3_url(dst_url))
        log.debug("copied", src=src_url, dst=dst_url)

    def exists(self, url: str) -> bool:
        if url_scheme(url) == LOCAL_SCHEME:
            return self.rootfs.resolve(url).exists()
        return self._client(url).exists(parse_s3_url(url))

    def iter_lines(self, url: str) -> Iterator[str]:
        """The file's lines, streamed, as Go's ``bufio.Scanner`` splits them: at ``\\n``, one trailing ``\\r``
        dropped, no empty last line. ``StorageError`` at once for a bad URL; while iterating for a missing file, a
        line over ``MAX_LINE_BYTES`` or one that is not UTF-8. The file is opened at the first line and released when
        the iterator is exhausted or closed."""
        self._check(url)
        return self._lines(url)

    def _lines(self, url: str) -> Iterator[str]:
        for number, line in enumerate(_split_lines(self._chunks(url), url), 1):
            try:
                yield line.decode("utf-8")
            except UnicodeDecodeError:
                raise StorageError(url, f"line {number} is not UTF-8") from None

    def read_text(self, url: str, max_bytes: int = MAX_TEXT_BYTES) -> str:
        """The whole file as UTF-8 text; ``StorageError`` when it is larger than ``max_bytes``."""
        data = bytearray()
        for chunk in self._chunks(url):
            data += chunk
            if len(data) > max_bytes:
                raise StorageError(url, f"larger than {max_bytes} bytes")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise StorageError(url, "is not UTF-8 text") from None

    def _check(self, url: str) -> None:
        if url_scheme(url) == S3_SCHEME:
            parse_s3_url(url)
        else:
            self.rootfs.resolve(url)

    def _client(self, url: str) -> S3Client:
        client = self._s3
        if client is None:
            raise StorageError(url, "no S3 credential (the sedna.io/credential annotation) is set")
        return client

    def s3_client(self, url: str) -> S3Client:
        """The S3 client of this storage's credential; ``StorageError`` naming ``url`` when none is set."""
        return self._client(url)

    def _existing_file(self, url: str) -> Path:
        path = self.rootfs.resolve(url)
        if not path.is_file():
            raise StorageError(url, "does not exist or is not a file", missing=True)
        return path

    def _copy_local(self, src: Path, dst: Path, url: str) -> None:
        try:
            copy_file_atomically(src, dst)
        except OSError as exc:
            raise StorageError(url, f"copy to {dst} failed: {exc.strerror or exc}") from None

    def _download_s3(self, location: S3Location, dst: Path) -> None:
        client = self._client(str(location))
        try:
            dst.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(str(location), f"cannot create {dst.parent}: {exc.strerror or exc}") from None
        client.download(location, dst)

    def _chunks(self, url: str) -> Iterator[bytes]:
        if url_scheme(url) == S3_SCHEME:
            yield from self._client(url).iter_chunks(parse_s3_url(url), _CHUNK)
            return
        path = self._existing_file(url)
        try:
            with open(path, "rb") as file:
                while chunk := file.read(_CHUNK):
                    yield chunk
        except OSError as exc:
            raise StorageError(url, f"read failed: {exc.strerror or exc}") from None


def _split_lines(chunks: Iterable[bytes], url: str) -> Iterator[bytes]:
    pending = b""
    for chunk in chunks:
        buffer = pending + chunk
        start = 0
        while (end := buffer.find(b"\n", start)) != -1:
            yield _line(buffer[start:end], url)
            start = end + 1
        pending = buffer[start:]
        if len(pending) > MAX_LINE_BYTES + 1:
            raise StorageError(url, f"a line is longer than {MAX_LINE_BYTES} bytes")
    if pending:
        yield _line(pending, url)


def _line(raw: bytes, url: str) -> bytes:
    line = raw[:-1] if raw.endswith(b"\r") else raw
    if len(line) > MAX_LINE_BYTES:
        raise StorageError(url, f"a line is longer than {MAX_LINE_BYTES} bytes")
    return line
