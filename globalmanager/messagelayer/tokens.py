"""The bearer tokens the edge server accepts from LCs.

``EdgeTokens`` — one token for every node (``websocket.tokenFile``; any holder can act as any node):

* No token: none is required (Go LCs send none).
* A fixed token (``EdgeTokens("s3cret")``): only that one.
* A ``TokenFile``: the token now in the file, checked on every connection attempt (one ``stat``; read again only when
  the file changed), so a rotated Secret takes effect without a restart. For ``grace`` seconds after the GM first
  sees the token change, the previous one is accepted too: the LCs' copies of the Secret are updated by their
  kubelets a little earlier or later than the GM's. ``grace=0`` refuses it at once (a leaked token).

``NodeTokens`` — a token per node (``websocket.nodeTokensDir``): the file ``<dir>/<node name>`` holds the token that
proves that node's identity (a Secret volume: one key per node). Each node's file is an ``EdgeTokens`` over a
``TokenFile`` (so rotation and its grace work as above, per node); a node whose file is gone (deleted, or removed
from the Secret) is revoked at once, with no grace.

Tokens are compared in constant time and never logged.
"""

from __future__ import annotations

import hmac
import os
import threading
import time
from collections.abc import Callable

import structlog

from apis.tokenfile import TokenFile

__all__ = ["DEFAULT_TOKEN_GRACE_SECONDS", "EdgeTokens", "NodeTokens", "parse_bearer"]

log = structlog.get_logger("sedna-gm.edge")

DEFAULT_TOKEN_GRACE_SECONDS = 300.0


def parse_bearer(authorization: str) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` value (the scheme in any case, RFC 9110 §11.1); ``None``
    for another scheme or a malformed value."""
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or any(c.isspace() for c in token):
        return None
    return token


def _matches(given: str, tokens: list[str]) -> bool:
    presented = given.encode()
    found = False
    for token in tokens:  # every one compared: the time does not say which matched
        found |= hmac.compare_digest(presented, token.encode())
    return found


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

    def accepts(self, token: str) -> bool:
        """Whether ``token`` (the bearer token itself, see ``parse_bearer``) is accepted now."""
        return bool(token) and _matches(token, self.accepted())

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


class NodeTokens:
    """The per-node tokens of ``directory`` (file name = node name). ``check(node, token)`` costs one ``stat``."""

    def __init__(self, directory: str, grace: float = DEFAULT_TOKEN_GRACE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not os.path.isdir(directory):
            raise NotADirectoryError(f"node tokens directory {directory!r} does not exist")
        self.directory = directory
        self.grace = grace
        self._clock = clock
        self._lock = threading.Lock()
        self._nodes: dict[str, EdgeTokens] = {}  # only nodes that have a file (bounded by the directory)

    def check(self, node: str, token: str) -> str:
        """"" when ``token`` proves ``node`` now, else why not (for the log; never the token). ``node`` must be a
        valid node name (no path separators: the server checks it first)."""
        path = os.path.join(self.directory, node)
        with self._lock:
            if not os.path.isfile(path):
                if self._nodes.pop(node, None) is not None:
                    log.info("node token revoked: its file is gone", node=node, path=path)
                return "no token is issued for this node"
            tokens = self._nodes.get(node)
            if tokens is None:
                try:
                    tokens = EdgeTokens(TokenFile(path), self.grace, self._clock)
                except (OSError, ValueError) as exc:
                    return f"the node's token file cannot be read: {exc}"
                self._nodes[node] = tokens
        return "" if tokens.accepts(token) else "wrong token for this node"
