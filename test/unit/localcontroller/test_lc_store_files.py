"""The LC's database on disk (issue 26 items 2 and 5): files 0600 in 0700 directories (looser ones found are
tightened), and the space of delivered reports given back to the file system, on a new and on an existing database."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from localcontroller.app import LocalController
from localcontroller.config import LCConfig
from localcontroller.store import Store


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    previous = os.umask(0o022)  # what most hosts run with: files 0644, directories 0755 unless asked otherwise
    yield
    os.umask(previous)


def test_a_new_database_is_0600_in_0700_directories(tmp_path):
    rootfs = tmp_path / "rootfs"
    rootfs.mkdir()
    cfg = LCConfig(gm_url="ws://127.0.0.1:9/", node_name="edge-1", rootfs=str(rootfs),
                   db_path=str(rootfs / "var/lib/sedna/database.db"))
    lc = LocalController(cfg)
    try:
        lc.store.put_resource("dataset", "default", "d", {"secret": "x"})  # a write: the WAL exists now
        db = rootfs / "var/lib/sedna/database.db"
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            assert path.exists() and mode(path) == 0o600, path
        for directory in (rootfs / "var", rootfs / "var/lib", rootfs / "var/lib/sedna"):
            assert mode(directory) == 0o700, directory
    finally:
        lc.store.close()


def test_an_existing_database_and_its_directory_found_with_looser_modes_are_tightened(tmp_path):
    directory = tmp_path / "sedna"
    directory.mkdir(mode=0o755)
    db = directory / "database.db"
    old = sqlite3.connect(db)
    old.execute("PRAGMA journal_mode=WAL")
    old.execute("CREATE TABLE resources (key TEXT)")  # Go Sedna's LC's table
    os.chmod(db, 0o644)
    store = Store(str(db), private_dir=True)
    try:
        assert mode(db) == 0o600 and mode(Path(f"{db}-wal")) == 0o600 and mode(directory) == 0o700
    finally:
        store.close()
        old.close()


def test_a_custom_databases_directory_is_left_as_it_is(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    store = Store(str(shared / "lc.db"))
    try:
        assert mode(shared) == 0o755 and mode(shared / "lc.db") == 0o600
    finally:
        store.close()


def on_disk(db: Path) -> int:
    return sum(os.path.getsize(p) for p in (db, Path(f"{db}-wal")) if p.exists())


def test_the_file_shrinks_after_the_outbox_drains(tmp_path):
    db = tmp_path / "lc.db"
    store = Store(str(db))
    try:
        for _ in range(40):
            store.add_report("default", "Dataset", "d", b"x" * (256 * 1024))
        assert store.outbox_usage() == (40, 40 * 256 * 1024)
        full = on_disk(db)
        assert full > 10 * 1024 * 1024
        for entry in list(store.iter_reports()):
            store.remove_report(entry.seq)
        assert store.outbox_usage() == (0, 0)
        assert on_disk(db) < full // 10
    finally:
        store.close()


def test_an_existing_database_without_auto_vacuum_gets_it(tmp_path):
    db = tmp_path / "lc.db"
    old = sqlite3.connect(db)
    old.execute("CREATE TABLE lc_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, namespace TEXT NOT NULL, "
                "kind TEXT NOT NULL, name TEXT NOT NULL, content BLOB NOT NULL)")
    old.execute("INSERT INTO lc_outbox (namespace, kind, name, content) VALUES ('default', 'Dataset', 'd', x'00')")
    old.commit()
    assert old.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    old.close()
    store = Store(str(db))
    try:
        assert store.outbox_usage() == (1, 1)  # kept across the rebuild
        assert store._db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    finally:
        store.close()
