"""``EdgeTokens``: the bearer tokens the edge server accepts from LCs.

* No token: none is required (Go LCs send none).
* A fixed token (``EdgeTokens("s3cret")``): only that one.
* A ``TokenFile`` (``websocket.tokenFile``): the token now in the file, checked on every connection attempt (one
  ``stat``; read again only when the file changed), so a rotated Secret takes effect without a restart. For
  ``grace`` seconds after the GM first sees the token change, the previous one is accepted too: the LCs' copies of
  the Secret are updated by their kubelets a little earlier or later than the GM's. ``grace=0`` refuses it at once
  (a leaked token).

Tokens are compared in constant time and never logged.
"""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Callable

import structlog

from apis.tokenfile import TokenFile

__all__ = ["DEFAULT_TOKEN_GRACE_SECONDS", "EdgeTokens"]

log = structlog.get_logger("sedna-gm.edge")

DEFAULT_TOKEN_GRACE_SECONDS = 300.0


class EdgeTokens:
    def __init__(self, source: TokenFile | str = "", grace: float = DEFAULT_TOKEN_GRACE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._file = source if isinstance(source, TokenFile) else None
        self._fixed = source if isinstance(source, str) else ""
        self.grace = grace
        self._clock = clock
        self._lock = threading.Lock()
        self._current = self._file.current() if self._file is not None else self._fixed
        self._previous = ""
        self._previous_until = 0.0
        self._problem = ""

    @property
    def enabled(self) -> bool:
        return bool(self._current)

    def accepted(self) -> list[str]:
        """The tokens accepted now (the file checked first)."""
        with self._lock:
            if self._file is not None:
                self._refresh(self._file)
            tokens = [self._current]
            if self._previous and self._clock() < self._previous_until:
                tokens.append(self._previous)
            return tokens

    def accepts(self, authorization: str) -> bool:
        """Whether an ``Authorization`` header value carries an accepted token."""
        given = authorization.encode()
        return any(hmac.compare_digest(given, f"Bearer {token}".encode()) for token in self.accepted())

    def _refresh(self, source: TokenFile) -> None:
        token = source.current()
        if source.problem != self._problem:
            self._problem = source.problem
            if source.problem:
                log.warning("edge token file changed but cannot be read; the last token read stays in force",
                            path=source.path, problem=source.problem)
        if token == self._current:
            return
        self._previous, self._current = self._current, token
        self._previous_until = self._clock() + self.grace
        log.info("edge token changed: LCs must send the new one", path=source.path,
                 previous_accepted_for_seconds=self.grace)
