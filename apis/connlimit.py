"""``PerClientLimit``: at most N connections at once from one client address, for servers that face untrusted
clients (one client trickling many connections must not take every slot of a server)."""

from __future__ import annotations

import threading

from apis.logs import get_logger
from apis.logthrottle import DEFAULT_LOG_INTERVAL, LogThrottle

__all__ = ["PerClientLimit"]

log = get_logger(__name__)

MAX_LOGGED_CLIENTS = 1024
OTHER_CLIENTS = "(other clients)"


class PerClientLimit:
    """Counts the open connections per client address; ``admit`` refuses one past ``limit`` (0: no limit).

    Thread-safe; memory is bounded by the open connections (an address is forgotten when its last one closes) and by
    ``MAX_LOGGED_CLIENTS`` for the log. A refusal is logged at most once per ``log_interval`` per client
    (``apis.logthrottle``: the next line says how many were not); ``flush_logs()``, called now and then, tells those
    of clients gone quiet."""

    def __init__(self, limit: int, server: str, log_interval: float = DEFAULT_LOG_INTERVAL) -> None:
        if limit < 0:
            raise ValueError(f"the per-client connection limit must be >= 0, got {limit}")
        self.limit = limit
        self.server = server
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()
        self.refusal_log: LogThrottle[str] = LogThrottle(log_interval, max_keys=MAX_LOGGED_CLIENTS,
                                                         overflow=OTHER_CLIENTS)

    def admit(self, client: str) -> bool:
        """Count a new connection from ``client``; ``False`` (nothing counted) when it already has ``limit`` open:
        the caller closes that connection."""
        with self._lock:
            count = self._open.get(client, 0)
            if not self.limit or count < self.limit:
                self._open[client] = count + 1
                return True
        seen = self.refusal_log.admit(client)
        if seen.due:
            log.warning("refused a connection: the client is at its connection limit", server=self.server,
                        client=client, limit=self.limit, untold=seen.untold)
        return False

    def release(self, client: str) -> None:
        """One admitted connection of ``client`` closed."""
        with self._lock:
            count = self._open.get(client, 0) - 1
            if count > 0:
                self._open[client] = count
            else:
                self._open.pop(client, None)

    def open_connections(self, client: str) -> int:
        with self._lock:
            return self._open.get(client, 0)

    def flush_logs(self) -> None:
        """One line per client whose refusals were not all logged in the last interval."""
        for client, untold in self.refusal_log.flush():
            log.warning("refused connections at the client's limit, not logged one by one", server=self.server,
                        client=client, limit=self.limit, untold=untold, interval_seconds=self.refusal_log.interval)
