"""What a ``sync(key)`` may raise to tell the runner how to retry (controller-runtime's ``TerminalError``, kopf's
``TemporaryError(delay=)``/``PermanentError``). Any other exception is retried with rate limiting."""

from __future__ import annotations

__all__ = ["RetryableError", "TerminalError"]


class RetryableError(Exception):
    """An expected, temporary failure: the key is synced again after ``delay`` seconds, or after its rate-limited
    delay when ``delay`` is None. Logged without a traceback."""

    def __init__(self, message: str, delay: float | None = None) -> None:
        if delay is not None and delay < 0:
            raise ValueError(f"delay must be >= 0, got {delay}")
        super().__init__(message)
        self.message = message
        self.delay = delay


class TerminalError(Exception):
    """A failure that retrying cannot fix (an invalid spec): logged once, the key's history forgotten, never retried
    (until something enqueues the key again)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
