"""The transport's connection errors (no HTTP answer) and which requests may be replayed after one."""

from __future__ import annotations

__all__ = [
    "ApiConnectionError",
    "ApiConnectionRefusedError",
    "ApiConnectionTimeoutError",
    "ConnectionRefusedApiError",
    "REPLAYABLE_METHODS",
]


class ApiConnectionError(ConnectionError):
    """The request got no HTTP answer (DNS, TLS, reset, refused, timeout…)."""

    def __init__(self, method: str, url: str, detail: str) -> None:
        super().__init__(f"{method} {url}: {detail}")
        self.method = method
        self.url = url
        self.detail = detail


class ApiConnectionRefusedError(ApiConnectionError, ConnectionRefusedError):
    """The API server refused the connection (retriable: the server may be restarting)."""


ConnectionRefusedApiError = ApiConnectionRefusedError


class ApiConnectionTimeoutError(ApiConnectionError, TimeoutError):
    """Connecting or waiting for the answer took longer than the configured timeout."""


# Only these are replayed after a failure once the request may have been sent (Go's net/http replays only
# idempotent requests; PUT/DELETE/POST/PATCH may already have been acted on).
REPLAYABLE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
