"""The LC's dataset counting (issue 26 item 5): exact samples in constant memory, only the appended part of a grown
file read again, a rewrite counted in full, one Dataset's slow count never delaying another's first report, and a
count never reported for a spec (URL, uid) other than the one it read. Blocking fakes and events, no sleeps."""

from __future__ import annotations

import os
import random
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from testkit import wait_for

from localcontroller.config import LCConfig
from localcontroller.managers.base import ManagerContext
from localcontroller.managers.dataset import DatasetManager, count_samples, parse_samples
from localcontroller.managers.datasetcount import (
    FINGERPRINT_BYTES,
    READ_CHUNK,
    CountError,
    CountJob,
    IndexVersion,
    count_index,
    index_file,
)
from localcontroller.storage import MAX_LINE_BYTES, Storage
from localcontroller.store import Store
from workqueue import FakeClock

MiB = 1024 * 1024
NS = "default"


class FakeIndex:
    """An index file in memory, served in chunks of ``chunk`` bytes; ``before_read(call_number, start)`` runs
    before each read (a test blocks there)."""

    def __init__(self, data: bytes, chunk: int = READ_CHUNK, url: str = "/fake.txt", appendable: bool = True) -> None:
        self.data, self.chunk, self.url, self.appendable = data, chunk, url, appendable
        self.tag = 0
        self.reads = 0
        self.bytes_read = 0
        self.before_read = lambda call, start: None

    def version(self) -> IndexVersion:
        return IndexVersion(len(self.data), "fake", str(self.tag), self.appendable)

    def read(self, version: IndexVersion, start: int, end: int) -> Iterator[bytes]:
        self.reads += 1
        self.before_read(self.reads, start)
        for offset in range(start, min(end, len(self.data)), self.chunk):
            piece = self.data[offset:min(offset + self.chunk, end)]
            self.bytes_read += len(piece)
            yield piece


class CountingIndex:
    """A real index file, counting the bytes read through it."""

    def __init__(self, inner) -> None:
        self.inner, self.url, self.bytes_read = inner, inner.url, 0

    def version(self) -> IndexVersion:
        return self.inner.version()

    def read(self, version: IndexVersion, start: int, end: int) -> Iterator[bytes]:
        for chunk in self.inner.read(version, start, end):
            self.bytes_read += len(chunk)
            yield chunk


class Reports(list):
    def __call__(self, namespace: str, kind: str, name: str, content: dict) -> None:
        self.append((name, dict(content)))

    def of(self, name: str) -> list[dict]:
        return [content for n, content in list(self) if n == name]


def old_count(data: bytes, fmt: str, tmp: Path) -> int | str:
    """What the line-by-line implementation makes of ``data``: a count, or ``"error"``."""
    (tmp / "old.txt").write_bytes(data)
    try:
        return len(parse_samples(Storage(tmp).iter_lines("/old.txt"), fmt)[1])
    except Exception:
        return "error"


def new_count(data: bytes, fmt: str, chunk: int) -> int | str:
    try:
        return count_index(FakeIndex(data, chunk), fmt)
    except CountError:
        return "error"


def dataset(name: str = "d1", url: str = "/data/a.txt", uid: str = "uid-1", fmt: str = "txt") -> dict:
    return {"kind": "Dataset", "metadata": {"namespace": NS, "name": name, "uid": uid},
            "spec": {"url": url, "format": fmt, "nodeName": "edge-1"}}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    db = Store(str(tmp_path / "lc.db"))
    yield db
    db.close()


def manager_for(rootfs: Path, store: Store, reports: Reports, **options) -> DatasetManager:
    ctx = ManagerContext(LCConfig(rootfs=str(rootfs), dataset_check_period=3600), store, reports)
    return DatasetManager(ctx, **options)


@pytest.fixture
def running() -> Iterator[threading.Event]:
    stop = threading.Event()
    yield stop
    stop.set()


# -- what is counted ------------------------------------------------------------------------------------------------
PIECES = [b"a", b"sample-1.jpg", b" ", b"\t", b"\r", b"\x1c", b"\xc2\xa0", b"\xe3\x80\x80", b"\xc3\xa9", b"x y",
          b"\n", b"\n", b"\n", b"\r\n", b"\xff", b"\xef\xbb\xbf", b'"quoted\nfield"', b","]


@pytest.mark.parametrize("fmt", ["txt", "csv"])
def test_counts_exactly_what_the_line_reader_reads_at_any_chunk_boundary(tmp_path, fmt):
    rng = random.Random(26)
    for case in range(300):
        data = b"".join(rng.choice(PIECES[:-4] if case % 3 else PIECES) for _ in range(rng.randrange(0, 40)))
        expected = old_count(data, fmt, tmp_path)
        for chunk in (1, 3, 7, READ_CHUNK):
            assert new_count(data, fmt, chunk) == expected, (data, chunk)


def test_a_line_too_long_or_not_utf8_cannot_be_counted_as_it_cannot_be_read():
    long_line = b"x" * (MAX_LINE_BYTES + 1)
    for data in (long_line + b"\nok\n", b"ok\n" + long_line, b"ok\n" + long_line + b"\r\n", b"a\nb\n\xff\n"):
        with pytest.raises(CountError) as caught:
            count_index(FakeIndex(data, chunk=READ_CHUNK), "txt")
        assert caught.value.reason == "ReadFailed"
    with pytest.raises(CountError, match="line 3 is not UTF-8"):
        count_index(FakeIndex(b"a\nb\n\xff\n", chunk=1), "txt")
    assert count_index(FakeIndex(b"x" * MAX_LINE_BYTES + b"\r\n" + b"y\n"), "txt") == 2  # the \r is not counted


def test_counting_a_file_takes_memory_independent_of_its_size(tmp_path):
    path = tmp_path / "index.txt"
    line = b"images/train/sample-000000.jpg 3\n"
    with open(path, "wb") as fh:
        for _ in range(32):
            fh.write(line * (MiB // len(line)))
    size = path.stat().st_size
    tracemalloc.start()
    try:
        assert count_samples(str(path), "txt") == 32 * (MiB // len(line))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 * READ_CHUNK < size / 4  # a few chunks, whatever the file's size


# -- what is read again -----------------------------------------------------------------------------------------------
def test_a_grown_file_is_read_from_its_last_complete_line_and_an_unchanged_one_not_at_all(tmp_path, store):
    rootfs = tmp_path / "rootfs"
    (rootfs / "data").mkdir(parents=True)
    path = rootfs / "data/a.txt"
    path.write_bytes(b"".join(b"sample-%d.jpg\n" % i for i in range(200_000)))
    opened: list[CountingIndex] = []

    def open_index(url, credential):
        opened.append(CountingIndex(index_file(Storage(rootfs), url)))
        return opened[-1]

    reports = Reports()
    manager = manager_for(rootfs, store, reports, open_index=open_index)
    manager.insert(dataset())
    assert manager.check(f"{NS}/d1") == 200_000
    assert opened[-1].bytes_read >= path.stat().st_size

    appended = b"".join(b"new-%d.jpg\n" % i for i in range(100)) + b"partial"
    with open(path, "ab") as fh:
        fh.write(appended)
    assert manager.check(f"{NS}/d1") == 200_101
    assert opened[-1].bytes_read <= len(appended) + 4 * FINGERPRINT_BYTES

    with open(path, "ab") as fh:
        fh.write(b"-line\nlast\n")
    assert manager.check(f"{NS}/d1") == 200_102  # the partial line was completed, not counted twice
    assert opened[-1].bytes_read <= len(b"partial-line\nlast\n") + 4 * FINGERPRINT_BYTES

    past = path.stat().st_mtime_ns - 10**10
    os.utime(path, ns=(past, past))  # settled: its stat alone tells it is unchanged
    manager.check(f"{NS}/d1")
    assert manager.check(f"{NS}/d1") == 200_102 and opened[-1].bytes_read == 0
    assert [r["numberOfSamples"] for r in reports.of("d1")] == [200_000, 200_101, 200_102]


def test_a_rewritten_or_replaced_file_is_counted_in_full(tmp_path, store):
    rootfs = tmp_path / "rootfs"
    (rootfs / "data").mkdir(parents=True)
    path = rootfs / "data/a.txt"
    original = b"".join(b"sample-%d.jpg\n" % i for i in range(50_000))
    path.write_bytes(original)
    opened: list[CountingIndex] = []

    def open_index(url, credential):
        opened.append(CountingIndex(index_file(Storage(rootfs), url)))
        return opened[-1]

    manager = manager_for(rootfs, store, Reports(), open_index=open_index)
    manager.insert(dataset())
    assert manager.check(f"{NS}/d1") == 50_000

    with open(path, "r+b") as fh:  # rewritten in place, same inode, bigger, a different first line
        fh.write(b"\n" * len(b"sample-0.jpg\n") + original[len(b"sample-0.jpg\n"):] + b"more\n")
    assert manager.check(f"{NS}/d1") == 50_000  # the first line became blank ones, one appended
    assert opened[-1].bytes_read >= len(original)

    replacement = tmp_path / "rootfs/data/new.txt"  # renamed over it: looks appended, but is another file
    replacement.write_bytes(original + b"x\n")
    os.replace(replacement, path)
    assert manager.check(f"{NS}/d1") == 50_001
    assert opened[-1].bytes_read >= len(original)

    path.write_bytes(b"1\n2\n")  # shrunk
    assert manager.check(f"{NS}/d1") == 2


# -- one dataset never waits for another ------------------------------------------------------------------------------
def test_a_slow_count_never_delays_another_datasets_first_count(tmp_path, store, running):
    release, entered = threading.Event(), threading.Event()
    big, small = FakeIndex(b"b\n" * 10, url="/big.txt"), FakeIndex(b"1\n2\n3\n", url="/small.txt")

    def block(call, start):
        entered.set()
        assert release.wait(30), "never released"

    big.before_read = block
    files = {"/big.txt": big, "/small.txt": small}
    reports = Reports()
    manager = manager_for(tmp_path, store, reports, open_index=lambda url, credential: files[url])
    manager.start(running)
    manager.insert(dataset("big", "/big.txt"))
    assert entered.wait(10)
    manager.insert(dataset("small", "/small.txt"))
    wait_for("the small dataset's first count", lambda: reports.of("small"), check=lambda r: r)
    assert reports.of("small") == [{"numberOfSamples": 3}] and reports.of("big") == []  # big is still blocked
    release.set()
    wait_for("the big dataset's count", lambda: reports.of("big"), check=lambda r: r)
    assert reports.of("big") == [{"numberOfSamples": 10}]


def test_a_big_count_yields_its_thread_to_a_new_dataset_between_slices(tmp_path, store, running):
    small_inserted, small_reported = threading.Event(), threading.Event()
    waited_too_long: list[str] = []
    big = FakeIndex(b"x\n" * (3 * MiB // 2), url="/big.txt", appendable=False)  # three slices
    small = FakeIndex(b"1\n2\n3\n", url="/small.txt")

    def gate(call, start):
        if call == 1 and not small_inserted.wait(10):
            waited_too_long.append("small never inserted")
        if call == 2 and not small_reported.wait(10):  # a count that kept its thread would wait here for nothing
            waited_too_long.append("the small dataset waited for the whole big count")

    big.before_read = gate

    class Signalling(Reports):
        def __call__(self, namespace, kind, name, content):
            super().__call__(namespace, kind, name, content)
            if name == "small":
                small_reported.set()

    reports = Signalling()
    files = {"/big.txt": big, "/small.txt": small}
    manager = manager_for(tmp_path, store, reports, workers=1, slice_bytes=0,
                          open_index=lambda url, credential: files[url])
    manager.start(running)
    manager.insert(dataset("big", "/big.txt"))
    wait_for("the big count's first read", lambda: big.reads >= 1)
    manager.insert(dataset("small", "/small.txt"))
    small_inserted.set()
    wait_for("the big dataset's count", lambda: reports.of("big"), check=lambda r: r)
    assert waited_too_long == []
    assert [name for name, _ in reports] == ["small", "big"]
    assert reports.of("big") == [{"numberOfSamples": 3 * MiB // 2}] and big.reads >= 3


# -- a count belongs to the spec it read ------------------------------------------------------------------------------
@pytest.mark.parametrize("recreate", [True, False], ids=["deleted and re-created", "url changed"])
def test_a_count_in_flight_for_an_old_url_or_uid_is_never_reported(tmp_path, store, running, recreate):
    release, entered = threading.Event(), threading.Event()
    old = FakeIndex(b"s\n" * 8000, url="/old.txt")
    new = FakeIndex(b"1\n2\n3\n", url="/new.txt")

    def block(call, start):
        entered.set()
        assert release.wait(30), "never released"

    old.before_read = block
    files = {"/old.txt": old, "/new.txt": new}
    reports = Reports()
    manager = manager_for(tmp_path, store, reports, open_index=lambda url, credential: files[url])
    with structlog.testing.capture_logs() as logs:
        manager.start(running)
        manager.insert(dataset("d1", "/old.txt", uid="uid-1"))
        assert entered.wait(10)
        if recreate:
            manager.delete(dataset("d1", "/old.txt", uid="uid-1"))
            manager.insert(dataset("d1", "/new.txt", uid="uid-2"))
        else:
            manager.insert(dataset("d1", "/new.txt", uid="uid-1"))
        wait_for("the new URL's count", lambda: reports.of("d1"), check=lambda r: r)
        release.set()
        wait_for("the old count to end", lambda: [e for e in logs if e["event"].startswith("dataset count dropped")],
                 check=lambda dropped: dropped)
    assert reports.of("d1") == [{"numberOfSamples": 3}]
    assert manager.count(NS, "d1") == 3
    assert [e["url"] for e in logs if e["event"] == "dataset sample count changed"] == ["/new.txt"]


def test_the_check_period_counts_again_on_the_runners_clock(tmp_path, store, running):
    (tmp_path / "data").mkdir()
    (tmp_path / "data/a.txt").write_text("1\n2\n")
    clock, reports = FakeClock(), Reports()
    manager = manager_for(tmp_path, store, reports, workers=1, clock=clock)
    manager.start(running)
    manager.insert(dataset())
    wait_for("the first count", lambda: reports.of("d1"), check=lambda r: r == [{"numberOfSamples": 2}])
    (tmp_path / "data/a.txt").write_text("1\n2\n3\n")

    def an_hour_later() -> list[dict]:
        clock.step(3600)  # each poll: the recount is due however late its requeue was made
        return reports.of("d1")

    wait_for("the periodic count", an_hour_later, check=lambda r: r[-1:] == [{"numberOfSamples": 3}])


def test_a_dataset_re_created_while_its_delete_was_missed_gets_its_count_again(tmp_path, store):
    (tmp_path / "data").mkdir()
    (tmp_path / "data/a.txt").write_text("1\n2\n")
    reports = Reports()
    manager = manager_for(tmp_path, store, reports)
    manager.insert(dataset(uid="uid-1"))
    assert manager.check(f"{NS}/d1") == 2
    manager.insert(dataset(uid="uid-2"))  # e.g. the LC was offline: the GM's resync sends the new object
    assert manager.check(f"{NS}/d1") == 2
    assert reports.of("d1") == [{"numberOfSamples": 2}, {"numberOfSamples": 2}]


# -- errors -----------------------------------------------------------------------------------------------------------
def test_a_count_error_is_reported_once_per_change_and_cleared_once_even_across_a_restart(tmp_path, store):
    rootfs = tmp_path / "rootfs"
    (rootfs / "data").mkdir(parents=True)
    reports = Reports()
    manager = manager_for(rootfs, store, reports)
    manager.insert(dataset())
    for _ in range(2):
        assert manager.check(f"{NS}/d1") is None
    again = manager_for(rootfs, store, reports)  # a restart: the error was reported already
    again.insert(dataset())
    assert again.check(f"{NS}/d1") is None
    again.insert(dataset(fmt="json"))
    assert again.check(f"{NS}/d1") is None
    again.insert(dataset())
    (rootfs / "data/a.txt").write_text("a\nb\n")
    assert again.check(f"{NS}/d1") == 2
    assert again.check(f"{NS}/d1") == 2
    assert reports.of("d1") == [
        {"numberOfSamples": 0, "error": {"reason": "URLNotFound",
                                         "message": "/data/a.txt: does not exist or is not a file"}},
        {"numberOfSamples": 0, "error": {"reason": "FormatUnsupported",
                                         "message": "format 'json' is not supported (txt or csv)"}},
        {"numberOfSamples": 2, "error": None},
    ]
    (rootfs / "data/a.txt").unlink()
    assert again.check(f"{NS}/d1") is None  # the last count stays in the report
    assert reports.of("d1")[-1]["numberOfSamples"] == 2 and reports.of("d1")[-1]["error"]["reason"] == "URLNotFound"


# -- S3 ---------------------------------------------------------------------------------------------------------------
def test_an_s3_index_is_counted_by_ranges_and_read_again_only_when_its_etag_changes(rootfs, s3_server):
    client = s3_server.client()
    client.create_bucket(Bucket="data")
    client.put_object(Bucket="data", Key="index.csv", Body=b"header\n" + b"row\n" * 1000 + b"last")
    storage = Storage(rootfs, credential=s3_server.credential_json())
    index = CountingIndex(index_file(storage, "s3://data/index.csv"))
    first = CountJob(index, "csv", slice_bytes=0).run()
    assert first.samples("csv") == 1001 and index.bytes_read == len(b"header\n" + b"row\n" * 1000 + b"last")
    index.bytes_read = 0
    assert CountJob(index, "csv", first).run() is first and index.bytes_read == 0
    client.put_object(Bucket="data", Key="index.csv", Body=b"header\nrow\n")
    assert CountJob(index, "csv", first).run().samples("csv") == 1
    with pytest.raises(CountError) as missing:
        index_file(storage, "s3://data/nope.txt").version()
    assert missing.value.reason == "URLNotFound"
    with pytest.raises(CountError) as no_credential:
        index_file(Storage(rootfs), "s3://data/index.csv")
    assert no_credential.value.reason == "CredentialInvalid"
