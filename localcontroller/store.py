"""The LC's SQLite database (stdlib ``sqlite3``, WAL): what the GM sent, the managers' state, the upstream outbox and
the worker reports kept for a job this node does not hold yet.

Tables carry an ``lc_`` prefix so that a database file left by Go Sedna's LC (table ``resources``) does not clash.
Every method is safe from any thread (one connection, one lock) and each write is its own committed transaction,
so a process killed at any point finds every completed call on restart.

The database holds S3 credentials (in the objects the GM sent): the file and its ``-wal``/``-shm`` are mode 0600
(SQLite gives the journal files the database's mode) and the directories the LC creates 0700; an existing database
found with looser modes, and its directory when ``private_dir`` is set (the default ``<rootfs>/var/lib/sedna``), are
tightened at open. Space freed by delivered reports is given back to the file system (``auto_vacuum=INCREMENTAL``,
set on an existing database too): when the outbox and the pending reports are empty, or ``COMPACT_BYTES`` are free.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import orjson
import structlog

__all__ = ["KeptReport", "OutboxEntry", "PendingEntry", "Store"]

log = structlog.get_logger("sedna-lc.store")

FILE_MODE = 0o600
DIR_MODE = 0o700
COMPACT_BYTES = 4 * 1024 * 1024  # free pages worth this much are given back at once

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS lc_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS lc_resources (kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, "
    "body BLOB NOT NULL, PRIMARY KEY (kind, namespace, name))",
    "CREATE TABLE IF NOT EXISTS lc_state (key TEXT PRIMARY KEY, value BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS lc_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, namespace TEXT NOT NULL, "
    "kind TEXT NOT NULL, name TEXT NOT NULL, content BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS lc_pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, owner_kind TEXT NOT NULL, "
    "namespace TEXT NOT NULL, name TEXT NOT NULL, received REAL NOT NULL, message BLOB NOT NULL, "
    "worker TEXT NOT NULL DEFAULT '', client TEXT NOT NULL DEFAULT '', sent INTEGER NOT NULL DEFAULT 1)",
)
# columns added to a table after its first release: (table, column, definition), added where missing; a row kept
# before gets the default (``sent`` 1: the bound it was kept under)
_ADDED_COLUMNS = (
    ("lc_pending", "worker", "TEXT NOT NULL DEFAULT ''"),
    ("lc_pending", "client", "TEXT NOT NULL DEFAULT ''"),
    ("lc_pending", "sent", "INTEGER NOT NULL DEFAULT 1"),
)


@dataclass(frozen=True)
class OutboxEntry:
    seq: int
    namespace: str
    kind: str
    name: str
    content: bytes  # the report's JSON


@dataclass(frozen=True)
class PendingEntry:
    """A worker report kept for a job this node does not hold yet."""

    seq: int
    owner_kind: str
    namespace: str
    name: str
    received: float  # wall-clock seconds
    message: bytes  # the worker message as JSON


@dataclass(frozen=True)
class KeptReport:
    """What the bounds of the kept reports look at: one of them, without its body."""

    seq: int
    owner_kind: str
    namespace: str
    name: str
    worker: str  # the worker name it was posted under
    client: str  # the address it came from
    sent: bool  # the GM had sent this node its job before (and taken it off since)
    received: float  # wall-clock seconds
    size: int  # bytes of the message

    @property
    def owner(self) -> tuple[str, str, str]:
        return self.owner_kind, self.namespace, self.name


class Store:
    """Open (creating it and its directory) the database at ``path``; raises ``sqlite3.Error``/``OSError``."""

    def __init__(self, path: str, private_dir: bool = False) -> None:
        parent = os.path.dirname(os.path.abspath(path))
        _make_private_dirs(parent)
        if private_dir:
            _tighten(parent, DIR_MODE)
        # created 0600 before SQLite opens it: SQLite then creates -wal and -shm with the same mode
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE))
        self.path = path
        self._lock = threading.Lock()
        self._handing_over = threading.local()  # .seq: the kept report this thread is handing to its manager
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10.0)
        if self._db.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
            self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")
            self._db.execute("VACUUM")  # an existing database takes the setting only when rebuilt
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        for name in (path, f"{path}-wal", f"{path}-shm"):
            _tighten(name, FILE_MODE)
        self._page_size = int(self._db.execute("PRAGMA page_size").fetchone()[0])
        with self._lock:
            for statement in _SCHEMA:
                self._db.execute(statement)
            for table, column, definition in _ADDED_COLUMNS:
                if column not in {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
            self._outbox_count, self._outbox_bytes = self._usage("lc_outbox", "content")
            self._pending_count, self._pending_bytes = self._usage("lc_pending", "message")
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

    def get_resource(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT body FROM lc_resources WHERE kind = ? AND namespace = ? AND name = ?",
                                   (kind, namespace, name)).fetchone()
        if row is None:
            return None
        body: dict[str, Any] = orjson.loads(row[0])  # only objects are stored (put_resource)
        return body

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
        ``state=(key, value)`` the manager state is written in the same transaction: both or neither survive. Inside
        ``handing_over(seq)`` the kept report ``seq`` leaves ``lc_pending`` in the same transaction too."""
        insert = ("INSERT INTO lc_outbox (namespace, kind, name, content) VALUES (?, ?, ?, ?)",
                  (namespace, kind, name, content))
        consumed = getattr(self._handing_over, "seq", None)
        if state is None and consumed is None:
            with self._lock:
                seq = int(self._db.execute(*insert).lastrowid or 0)
                self._outbox_count, self._outbox_bytes = self._outbox_count + 1, self._outbox_bytes + len(content)
                return seq
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                if state is not None:
                    self._db.execute("INSERT OR REPLACE INTO lc_state (key, value) VALUES (?, ?)",
                                     (state[0], orjson.dumps(state[1])))
                seq = int(self._db.execute(*insert).lastrowid or 0)
                row = (self._db.execute("DELETE FROM lc_pending WHERE seq = ? RETURNING length(message)",
                                        (consumed,)).fetchone() if consumed is not None else None)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._handing_over.seq = None  # one report per kept report
            self._outbox_count, self._outbox_bytes = self._outbox_count + 1, self._outbox_bytes + len(content)
            if row is not None:
                self._pending_count, self._pending_bytes = self._pending_count - 1, self._pending_bytes - int(row[0])
            return seq

    @contextmanager
    def handing_over(self, seq: int) -> Iterator[None]:
        """While kept report ``seq`` is handed to its manager (in this thread): the report the manager relays to the
        outbox and the removal of ``seq`` from ``lc_pending`` are one transaction, so a kill between them neither
        loses the report nor sends it twice after a restart. Remove ``seq`` after the block in any case (a manager
        may relay nothing); that is a no-op when it is gone already."""
        self._handing_over.seq = seq
        try:
            yield
        finally:
            self._handing_over.seq = None

    def reports_after(self, seq: int, limit: int = 256) -> list[OutboxEntry]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, namespace, kind, name, content FROM lc_outbox WHERE seq > ? ORDER BY seq LIMIT ?",
                (seq, limit),
            ).fetchall()
        return [OutboxEntry(int(s), ns, k, n, bytes(c)) for s, ns, k, n, c in rows]

    def remove_report(self, seq: int) -> None:
        with self._lock:
            row = self._db.execute("DELETE FROM lc_outbox WHERE seq = ? RETURNING length(content)", (seq,)).fetchone()
            if row is not None:
                self._outbox_count, self._outbox_bytes = self._outbox_count - 1, self._outbox_bytes - int(row[0])
                self._compact()

    def pending_reports(self) -> int:
        """Reports in the outbox (not yet acked by the GM)."""
        with self._lock:
            return self._outbox_count

    def outbox_usage(self) -> tuple[int, int]:
        """``(reports, content bytes)`` in the outbox."""
        with self._lock:
            return self._outbox_count, self._outbox_bytes

    def iter_reports(self) -> Iterator[OutboxEntry]:
        seq = 0
        while batch := self.reports_after(seq):
            yield from batch
            seq = batch[-1].seq

    # -- worker reports for a job this node does not hold yet ---------------------------------------------------
    def add_pending(self, owner_kind: str, namespace: str, name: str, received: float, message: bytes, *,
                    worker: str = "", client: str = "", sent: bool = True) -> int:
        with self._lock:
            seq = int(self._db.execute(
                "INSERT INTO lc_pending (owner_kind, namespace, name, received, message, worker, client, sent) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (owner_kind, namespace, name, received, message, worker, client, int(sent))).lastrowid or 0)
            self._pending_count, self._pending_bytes = self._pending_count + 1, self._pending_bytes + len(message)
            return seq

    def pending_for(self, namespace: str, name: str) -> list[PendingEntry]:
        """The kept reports about ``namespace/name`` (any owner kind), in arrival order."""
        with self._lock:
            rows = self._db.execute(f"SELECT {_PENDING_COLUMNS} FROM lc_pending WHERE namespace = ? AND name = ? "
                                    "ORDER BY seq", (namespace, name)).fetchall()
        return [_pending(row) for row in rows]

    def remove_pending(self, seqs: list[int]) -> None:
        with self._lock:
            for seq in seqs:
                row = self._db.execute("DELETE FROM lc_pending WHERE seq = ? RETURNING length(message)",
                                       (seq,)).fetchone()
                if row is not None:
                    self._pending_count, self._pending_bytes = self._pending_count - 1, self._pending_bytes - int(row[0])
            self._compact()

    def kept_reports(self) -> list[KeptReport]:
        """Every kept report without its body, in arrival order (what the bounds count)."""
        with self._lock:
            rows = self._db.execute("SELECT seq, owner_kind, namespace, name, worker, client, sent, received, "
                                    "length(message) FROM lc_pending ORDER BY seq").fetchall()
        return [KeptReport(int(seq), kind, ns, name, worker, client, bool(sent), float(received), int(size))
                for seq, kind, ns, name, worker, client, sent, received, size in rows]

    def pending_usage(self) -> tuple[int, int]:
        """``(reports, message bytes)`` kept for jobs this node does not hold yet."""
        with self._lock:
            return self._pending_count, self._pending_bytes

    # -- internals (called with the lock held) ------------------------------------------------------------------
    def _usage(self, table: str, column: str) -> tuple[int, int]:
        count, size = self._db.execute(f"SELECT COUNT(*), COALESCE(SUM(length({column})), 0) FROM {table}").fetchone()
        return int(count), int(size)

    def _compact(self) -> None:
        """Give free pages back to the file system once the queues are empty or much is free."""
        free = int(self._db.execute("PRAGMA freelist_count").fetchone()[0])
        drained = self._outbox_count == 0 and self._pending_count == 0
        if free == 0 or (not drained and free * self._page_size < COMPACT_BYTES):
            return
        self._db.executescript("PRAGMA incremental_vacuum")  # execute() would step it once: one page
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()  # the main file shrinks at the checkpoint
        log.debug("database compacted", db=self.path, freed_bytes=free * self._page_size)


_PENDING_COLUMNS = "seq, owner_kind, namespace, name, received, message"


def _pending(row: tuple[Any, ...]) -> PendingEntry:
    seq, owner_kind, namespace, name, received, message = row
    return PendingEntry(int(seq), owner_kind, namespace, name, float(received), bytes(message))


def _make_private_dirs(path: str) -> None:
    """Create ``path`` and every missing parent with mode 0700 (``os.makedirs`` applies a mode to the leaf only)."""
    missing: list[str] = []
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(directory, DIR_MODE)  # whatever the umask


def _tighten(path: str, mode: int) -> None:
    """Take group and other permissions off ``path`` (when it exists and has any), with a log line."""
    try:
        current = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    if current & 0o077:
        os.chmod(path, current & mode)
        log.info("tightened the mode of a path of the LC's database", path=path, mode=oct(current & mode),
                 was=oct(current))
