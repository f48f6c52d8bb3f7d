"""``TokenFile``: the edge link's bearer token, read from a file that may be replaced while the program runs (a
Kubernetes Secret volume is updated in place, by a symlink swap, when its Secret changes). Shared by ``sedna-gm``
(the token it accepts) and ``sedna-lc`` (the token it sends).

Guarantees: ``current()`` costs one ``os.stat`` of the path (following symlinks); the file is read again only when
its identity (device, inode), size or modification time changed, and at most ``MAX_TOKEN_BYTES`` of it. A file that
cannot be read, or is empty, after a change keeps the last good token (``problem`` says why) and is tried again on
the next call, so a half-written file never locks anyone out. Thread-safe. Silent: the caller logs.
"""

from __future__ import annotations

import os
import threading

__all__ = ["MAX_TOKEN_BYTES", "TokenFile", "read_token"]

MAX_TOKEN_BYTES = 64 * 1024


def read_token(path: str) -> str:
    """The token in ``path`` (surrounding whitespace removed); ``OSError`` when it cannot be read, ``ValueError``
    when it is empty, too large or not UTF-8."""
    with open(path, "rb") as fh:
        data = fh.read(MAX_TOKEN_BYTES + 1)
    if len(data) > MAX_TOKEN_BYTES:
        raise ValueError(f"token file {path!r} is larger than {MAX_TOKEN_BYTES} bytes")
    try:
        token = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError(f"token file {path!r} is not UTF-8 text") from None
    if not token:
        raise ValueError(f"token file {path!r} is empty")
    return token


def _signature(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class TokenFile:
    """The token of ``path``, kept up to date; the constructor reads it (``OSError``/``ValueError`` as
    ``read_token``: a bad setting at start-up)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._signature = _signature(os.stat(path))
        self._token = read_token(path)
        self.problem = ""  # why the last change could not be read ("" when it could)

    def current(self) -> str:
        """The token now in the file (the last good one while a change cannot be read)."""
        try:
            signature = _signature(os.stat(self.path))
        except OSError as exc:
            with self._lock:
                self.problem = f"cannot stat {self.path!r}: {exc.strerror or exc}"
                return self._token
        with self._lock:
            if signature == self._signature:
                return self._token
            try:
                token = read_token(self.path)
            except (OSError, ValueError) as exc:
                self.problem = str(exc) if isinstance(exc, ValueError) else f"cannot read {self.path!r}: {exc}"
                return self._token  # the signature is kept: the next call tries again
            self._signature, self._token, self.problem = signature, token, ""
            return token
