"""The LC's SQLite database (stdlib ``sqlite3``, WAL): what the GM sent, the managers' state, the upstream outbox.

Tables carry an ``lc_`` prefix so that a database file left by Go Sedna's LC (table ``resources``) does not clash.
Every method is safe from any thread (one connection, one lock) and each write is its own committed transaction,
so a process killed at any point finds every completed call on restart.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = ["OutboxEntry", "Store"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS lc_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS lc_resources (kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, "
    "body BLOB NOT NULL, PRIMARY KEY (kind, namespace, name))",
    "CREATE TABLE IF NOT EXISTS lc_state (key TEXT PRIMARY KEY, value BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS lc_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, namespace TEXT NOT NULL, "
    "kind TEXT NOT NULL, name TEXT NOT NULL, content BLOB NOT NULL)",
)


@dataclass(frozen=True)
class OutboxEntry:
    seq: int
    namespace: str
    kind: str
    name: str
    content: bytes  # the report's JSON


class Store:
    """Open (creating it and its directory) the database at ``path``; raises ``sqlite3.Error``/``OSError``."""

    def __init__(self, path: str) -> None:
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        with self._lock:
            for statement in _SCHEMA:
                self._db.execute(statement)
            row = self._db.execute("SELECT value FROM lc_meta WHERE key = 'epoch'").fetchone()
            if row is None:
                self.epoch = uuid.uuid4().hex[:12]
                self._db.execute("INSERT INTO lc_meta (key, value) VALUES ('epoch', ?)", (self.epoch,))
            else:
                self.epoch = row[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- resources the GM sent ------------------------------------------------------------------------------------
    def put_resource(self, kind: str, namespace: str, name: str, obj: Any) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO lc_resources (kind, namespace, name, body) VALUES (?, ?, ?, ?)",
                (kind, namespace, name, orjson.dumps(obj)),
            )

    def delete_resource(self, kind: str, namespace: str, name: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM lc_resources WHERE kind = ? AND namespace = ? AND name = ?",
                             (kind, namespace, name))

    def get_resource(self, kind: str, namespace: str, name: str) -> Any:
        with self._lock:
            row = self._db.execute("SELECT body FROM lc_resources WHERE kind = ? AND namespace = ? AND name = ?",
                                   (kind, namespace, name)).fetchone()
        return orjson.loads(row[0]) if row is not None else None

    def resources(self, kind: str | None = None) -> list[tuple[str, str, str, Any]]:
        """``(kind, namespace, name, object)`` of every stored resource (of ``kind``), in key order."""
        query = "SELECT kind, namespace, name, body FROM lc_resources"
        params: tuple[str, ...] = ()
        if kind is not None:
            query += " WHERE kind = ?"
            params = (kind,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY kind, namespace, name", params).fetchall()
        return [(k, ns, n, orjson.loads(body)) for k, ns, n, body in rows]

    # -- managers' state ------------------------------------------------------------------------------------------
    def put_state(self, key: str, value: Any) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO lc_state (key, value) VALUES (?, ?)", (key, orjson.dumps(value)))

    def get_state(self, key: str, default: Any = None) -> Any:
        with self._lock:
            row = self._db.execute("SELECT value FROM lc_state WHERE key = ?", (key,)).fetchone()
        return orjson.loads(row[0]) if row is not None else default

    def delete_state(self, key: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM lc_state WHERE key = ?", (key,))

    # -- upstream outbox ------------------------------------------------------------------------------------------
    def add_report(self, namespace: str, kind: str, name: str, content: bytes,
                   state: tuple[str, Any] | None = None) -> int:
        """Append a report to the outbox; returns its sequence number (never reused in this database). With
        ``state=(key, value)`` the manager state is written in the same transaction: both or neither survive."""
        insert = ("INSERT INTO lc_outbox (namespace, kind, name, content) VALUES (?, ?, ?, ?)",
                  (namespace, kind, name, content))
        if state is None:
            with self._lock:
                return int(self._db.execute(*insert).lastrowid or 0)
        key, value = state[0], orjson.dumps(state[1])
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("INSERT OR REPLACE INTO lc_state (key, value) VALUES (?, ?)", (key, value))
                seq = int(self._db.execute(*insert).lastrowid or 0)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            return seq

    def reports_after(self, seq: int, limit: int = 256) -> list[OutboxEntry]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, namespace, kind, name, content FROM lc_outbox WHERE seq > ? ORDER BY seq LIMIT ?",
                (seq, limit),
            ).fetchall()
        return [OutboxEntry(int(s), ns, k, n, bytes(c)) for s, ns, k, n, c in rows]

    def remove_report(self, seq: int) -> None:
        with self._lock:
            self._db.execute("DELETE FROM lc_outbox WHERE seq = ?", (seq,))

    def pending_reports(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM lc_outbox").fetchone()[0])

    def iter_reports(self) -> Iterator[OutboxEntry]:
        seq = 0
        while batch := self.reports_after(seq):
            yield from batch
            seq = batch[-1].seq
