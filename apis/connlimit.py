"""``PerClientLimit``: at most N connections at once from one client address, for servers that face untrusted
clients (one client trickling many connections must not take every slot of a server)."""

from __future__ import annotations

import threading

from apis.logs import get_logger

__all__ = ["PerClientLimit"]

log = get_logger(__name__)


class PerClientLimit:
    """Counts the open connections per client address; ``admit`` refuses one past ``limit`` (0: no limit).

    Thread-safe; memory is bounded by the open connections (an address is forgotten when its last one closes). A
    client that reaches the limit is logged once; when it drops below it again, one line says how many connections
    were refused meanwhile (a flood makes two lines, not one per connection)."""

    def __init__(self, limit: int, server: str) -> None:
        if limit < 0:
            raise ValueError(f"the per-client connection limit must be >= 0, got {limit}")
        self.limit = limit
        self.server = server
        self._open: dict[str, int] = {}
        self._refused: dict[str, int] = {}  # clients at their limit → connections refused since they reached it
        self._lock = threading.Lock()

    def admit(self, client: str) -> bool:
        """Count a new connection from ``client``; ``False`` (nothing counted) when it already has ``limit`` open:
        the caller closes that connection."""
        with self._lock:
            count = self._open.get(client, 0)
            if self.limit and count >= self.limit:
                refused = self._refused.get(client, 0) + 1
                self._refused[client] = refused
            else:
                self._open[client] = count + 1
                return True
        if refused == 1:
            log.warning("refusing connections from a client at its connection limit", server=self.server,
                        client=client, limit=self.limit)
        return False

    def release(self, client: str) -> None:
        """One admitted connection of ``client`` closed."""
        with self._lock:
            count = self._open.get(client, 0) - 1
            if count > 0:
                self._open[client] = count
            else:
                self._open.pop(client, None)
            refused = self._refused.pop(client, 0) if count < self.limit else 0
        if refused:
            log.warning("a client is below its connection limit again", server=self.server, client=client,
                        limit=self.limit, refused=refused)

    def open_connections(self, client: str) -> int:
        with self._lock:
            return self._open.get(client, 0)
