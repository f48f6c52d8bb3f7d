"""localcontroller.storage with host paths: URLs, the rootfs boundary, copies, lines as Go's bufio.Scanner."""

from __future__ import annotations

import os
import stat
import tracemalloc
from pathlib import Path

import pytest
import structlog

from localcontroller.storage import (
    MAX_LINE_BYTES,
    RootFS,
    S3Location,
    Storage,
    StorageError,
    is_local_url,
    parse_s3_url,
    url_scheme,
)


@pytest.fixture
def storage(rootfs: Path) -> Storage:
    return Storage(rootfs)


@pytest.fixture(autouse=True)
def quiet_logs():
    with structlog.testing.capture_logs() as logs:
        yield logs


# --- URLs -----------------------------------------------------------------------------------------------------

def test_schemes() -> None:
    assert is_local_url("/data/a.txt") and is_local_url("data/a.txt")
    assert not is_local_url("s3://bucket/a.txt") and not is_local_url("S3://bucket/a.txt")
    assert url_scheme("s3://bucket/a.txt") == "s3"
    for url, scheme in (("http://host/a.txt", "http"), ("file:///a.txt", "file"), ("gs://b/k", "gs")):
        with pytest.raises(StorageError, match=f"unsupported scheme '{scheme}'") as caught:
            url_scheme(url)
        assert caught.value.url == url
    with pytest.raises(StorageError, match="empty URL"):
        is_local_url("")


def test_s3_urls() -> None:
    assert parse_s3_url("s3://models/il/deploy/model.pb") == S3Location("models", "il/deploy/model.pb")
    assert parse_s3_url("s3://models/a%20b.txt").key == "a b.txt"
    assert str(S3Location("models", "x/y")) == "s3://models/x/y"
    with pytest.raises(StorageError, match="no object key"):
        parse_s3_url("s3://models/")
    with pytest.raises(StorageError, match="no bucket"):
        parse_s3_url("s3:///key")
    with pytest.raises(StorageError, match="not an s3:// URL"):
        parse_s3_url("/local/path")


# --- the rootfs boundary --------------------------------------------------------------------------------------

def test_host_paths_are_read_under_the_rootfs(rootfs: Path) -> None:
    root = RootFS(rootfs)
    assert root.resolve("/a/b.txt") == rootfs / "a" / "b.txt"
    assert root.resolve("a/b.txt") == rootfs / "a" / "b.txt"
    assert root.resolve("/a/../b.txt") == rootfs / "b.txt"
    assert root.resolve("/") == rootfs
    assert root.to_url(rootfs / "a" / "b.txt") == "/a/b.txt"
    assert root.to_url(rootfs) == "/"


@pytest.mark.parametrize("url", ["/../etc/passwd", "/a/../../x", "../x", "/a/b/../../../x"])
def test_dot_dot_cannot_escape(storage: Storage, url: str) -> None:
    with pytest.raises(StorageError, match="resolves outside the rootfs"):
        storage.local_path(url)
    with pytest.raises(StorageError, match="resolves outside the rootfs"):
        storage.copy_file("/inside.txt", url)


def test_symlinks_cannot_escape(storage: Storage, rootfs: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not for workers")
    (rootfs / "link").symlink_to(outside)
    (rootfs / "file-link").symlink_to(outside / "secret.txt")
    for url in ("/link/secret.txt", "/file-link", "/link/new.txt"):
        with pytest.raises(StorageError, match=f"^{url}: resolves outside the rootfs"):
            storage.download(url) if url != "/link/new.txt" else storage.copy_file("/x", url)
    with pytest.raises(StorageError, match="resolves outside"):
        list(storage.iter_lines("/file-link"))
    assert not (outside / "new.txt").exists()


def test_symlinks_inside_the_rootfs_are_followed(storage: Storage, rootfs: Path) -> None:
    (rootfs / "real").mkdir()
    (rootfs / "real" / "a.txt").write_text("x\n")
    (rootfs / "alias").symlink_to(rootfs / "real")
    assert storage.download("/alias/a.txt") == rootfs / "real" / "a.txt"


# --- copies ---------------------------------------------------------------------------------------------------

def test_download_of_a_host_path(storage: Storage, rootfs: Path, tmp_path: Path) -> None:
    (rootfs / "data").mkdir()
    (rootfs / "data" / "train.txt").write_text("a\n")
    assert storage.download("/data/train.txt") == rootfs / "data" / "train.txt"  # no copy without a target
    target = tmp_path / "work" / "copy.txt"
    assert storage.download("/data/train.txt", target) == target
    assert target.read_text() == "a\n"
    with pytest.raises(StorageError, match="^/data/missing.txt: does not exist"):
        storage.download("/data/missing.txt")
    with pytest.raises(StorageError, match="^/data: does not exist or is not a file"):
        storage.download("/data")


def test_copy_between_host_paths_is_atomic_and_keeps_the_mode(storage: Storage, rootfs: Path) -> None:
    source = rootfs / "train" / "1" / "model.pb"
    source.parent.mkdir(parents=True)
    source.write_bytes(b"new weights")
    source.chmod(0o644)
    deployed = rootfs / "deploy" / "model.pb"
    deployed.parent.mkdir()
    deployed.write_bytes(b"old weights")
    inode = deployed.stat().st_ino
    storage.copy_file("/train/1/model.pb", "/deploy/model.pb")
    assert deployed.read_bytes() == b"new weights"
    assert deployed.stat().st_ino != inode, "replaced by rename, not rewritten in place"
    assert stat.S_IMODE(deployed.stat().st_mode) == 0o644
    assert [p.name for p in deployed.parent.iterdir()] == ["model.pb"], "no temporary file left"
    storage.copy_file("/train/1/model.pb", "/new/dirs/model.pb")
    assert (rootfs / "new" / "dirs" / "model.pb").read_bytes() == b"new weights"


def test_a_failed_copy_leaves_the_target_alone(storage: Storage, rootfs: Path) -> None:
    (rootfs / "deploy").mkdir()
    (rootfs / "deploy" / "model.pb").write_bytes(b"old")
    with pytest.raises(StorageError, match="^/train/model.pb: does not exist"):
        storage.copy_file("/train/model.pb", "/deploy/model.pb")
    (rootfs / "src.pb").write_bytes(b"x")
    (rootfs / "deploy" / "model.pb").unlink()
    (rootfs / "deploy" / "model.pb").mkdir()  # a directory where the file should go
    with pytest.raises(StorageError, match="^/src.pb: copy to .* failed"):
        storage.copy_file("/src.pb", "/deploy/model.pb")
    assert sorted(p.name for p in (rootfs / "deploy").iterdir()) == ["model.pb"]


def test_a_big_host_file_is_copied_without_reading_it_whole(storage: Storage, rootfs: Path) -> None:
    size = 16 * 1024 * 1024
    with open(rootfs / "big.bin", "wb") as file:
        file.truncate(size)
    tracemalloc.start()
    try:
        storage.copy_file("/big.bin", "/copy/big.bin")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (rootfs / "copy" / "big.bin").stat().st_size == size
    assert peak < size / 4, f"held {peak} bytes"


def test_host_paths_need_no_credential_and_s3_does(storage: Storage, rootfs: Path) -> None:
    (rootfs / "a").write_text("x")
    assert storage.exists("/a") and not storage.exists("/b")
    with pytest.raises(StorageError, match="^s3://bkt/a: no S3 credential"):
        storage.copy_file("/a", "s3://bkt/a")
    with pytest.raises(StorageError, match="^s3://bkt/a: no S3 credential"):
        list(storage.iter_lines("s3://bkt/a"))


def test_upload_needs_an_s3_target(storage: Storage, rootfs: Path) -> None:
    (rootfs / "a").write_text("x")
    with pytest.raises(StorageError, match="^/b: upload needs an s3:// URL"):
        storage.upload(rootfs / "a", "/b")
    with pytest.raises(StorageError, match="unsupported scheme 'ftp'"):
        storage.upload(rootfs / "a", "ftp://host/b")


def test_logs_name_what_was_copied(storage: Storage, rootfs: Path, quiet_logs: list[dict]) -> None:
    (rootfs / "a").write_text("x")
    storage.copy_file("/a", "/b")
    assert {"event": "copied", "src": "/a", "dst": "/b", "log_level": "debug"} in quiet_logs


# --- lines ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("content", "lines"), [
    (b"a\nb\n", ["a", "b"]),
    (b"a\nb", ["a", "b"]),
    (b"a\r\nb\r\n", ["a", "b"]),
    (b"a\r\nb\r", ["a", "b"]),           # Go drops a final \r at EOF too
    (b"a\rb\n", ["a\rb"]),               # a lone \r is no line break
    (b"\n\nx\n", ["", "", "x"]),
    (b"", []),
    (b"\xc3\xa9t\xc3\xa9\n", ["été"]),
    (b"a\x0bb\x1cc\xe2\x80\xa8d\n", ["a\x0bb\x1cc\u2028d"]),  # only \n splits, unlike str.splitlines
])
def test_lines_split_as_go_bufio_scanner(storage: Storage, rootfs: Path, content: bytes, lines: list[str]) -> None:
    (rootfs / "d.txt").write_bytes(content)
    assert list(storage.iter_lines("/d.txt")) == lines


def test_lines_across_read_chunks(storage: Storage, rootfs: Path) -> None:
    lines = [f"/images/{i:07d}/" + "x" * (i % 300) for i in range(20_000)]
    (rootfs / "d.txt").write_text("\r\n".join(lines) + "\r\n")
    assert list(storage.iter_lines("/d.txt")) == lines


def test_bad_lines(storage: Storage, rootfs: Path) -> None:
    (rootfs / "long.txt").write_bytes(b"ok\n" + b"x" * (MAX_LINE_BYTES + 1) + b"\n")
    with pytest.raises(StorageError, match="^/long.txt: a line is longer than"):
        list(storage.iter_lines("/long.txt"))
    (rootfs / "long-end.txt").write_bytes(b"x" * (3 * MAX_LINE_BYTES))
    with pytest.raises(StorageError, match="a line is longer than"):
        list(storage.iter_lines("/long-end.txt"))
    (rootfs / "latin1.txt").write_bytes(b"ok\ncaf\xe9\n")
    with pytest.raises(StorageError, match="^/latin1.txt: line 2 is not UTF-8"):
        list(storage.iter_lines("/latin1.txt"))
    with pytest.raises(StorageError, match="^/missing.txt: does not exist"):
        list(storage.iter_lines("/missing.txt"))


def test_a_bad_url_fails_at_the_call_not_at_the_first_line(storage: Storage) -> None:
    with pytest.raises(StorageError, match="unsupported scheme"):
        storage.iter_lines("http://host/d.txt")
    with pytest.raises(StorageError, match="resolves outside"):
        storage.iter_lines("/../d.txt")


def test_read_text(storage: Storage, rootfs: Path) -> None:
    (rootfs / "index.txt").write_text("s3://b/p/\nimg/1.png\n")
    assert storage.read_text("/index.txt") == "s3://b/p/\nimg/1.png\n"
    with pytest.raises(StorageError, match="larger than 5 bytes"):
        storage.read_text("/index.txt", max_bytes=5)
    (rootfs / "bin").write_bytes(b"\xff")
    with pytest.raises(StorageError, match="^/bin: is not UTF-8 text"):
        storage.read_text("/bin")


def test_the_rootfs_may_itself_be_a_symlink(tmp_path: Path, rootfs: Path) -> None:
    (tmp_path / "mnt").symlink_to(rootfs)
    (rootfs / "a.txt").write_text("x\n")
    storage = Storage(tmp_path / "mnt")
    assert list(storage.iter_lines("/a.txt")) == ["x"]
    assert storage.local_path("/a.txt") == rootfs / "a.txt"
    assert os.path.realpath(storage.rootfs.root) == str(rootfs)
