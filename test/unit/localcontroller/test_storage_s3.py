"""localcontroller.storage against a real S3-compatible server (moto in server mode, its own process)."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import tracemalloc
from pathlib import Path

import pytest
import structlog
from testkit import free_port
from testkit.s3 import ACCESS_KEY_ID, SECRET_ACCESS_KEY, S3Server

from localcontroller.storage import S3Credential, Storage, StorageError, parse_credential

MiB = 1024 * 1024


@pytest.fixture
def storage(rootfs: Path, s3_server: S3Server) -> Storage:
    return Storage(rootfs, credential=s3_server.credential_json())


def put(s3_server: S3Server, bucket: str, key: str, body: bytes) -> None:
    s3_server.client().put_object(Bucket=bucket, Key=key, Body=body)


def get(s3_server: S3Server, bucket: str, key: str) -> bytes:
    return s3_server.client().get_object(Bucket=bucket, Key=key)["Body"].read()


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(MiB):
            digest.update(chunk)
    return digest.hexdigest()


# --- credentials ----------------------------------------------------------------------------------------------

def test_credential_keys_and_defaults() -> None:
    credential = parse_credential(json.dumps({"s3-endpoint": "minio.local:9000", "ACCESS_KEY_ID": "ak",
                                              "SECRET_ACCESS_KEY": "sk"}))
    assert credential == S3Credential("minio.local:9000", True, "ak", "sk")
    assert credential.endpoint_url == "https://minio.local:9000"
    http = parse_credential(json.dumps({"s3-endpoint": "minio.local:9000", "s3-usehttps": "0",
                                        "ACCESS_KEY_ID": "ak", "SECRET_ACCESS_KEY": "sk"}))
    assert http.endpoint_url == "http://minio.local:9000"
    explicit = parse_credential(json.dumps({"s3-endpoint": "h", "s3-usehttps": "1", "ACCESS_KEY_ID": "ak",
                                            "SECRET_ACCESS_KEY": "sk"}))
    assert explicit.use_https is True


@pytest.mark.parametrize("missing", ["s3-endpoint", "ACCESS_KEY_ID", "SECRET_ACCESS_KEY"])
def test_a_missing_key_is_named(missing: str) -> None:
    values = {"s3-endpoint": "h:1", "ACCESS_KEY_ID": "the-ak-value", "SECRET_ACCESS_KEY": "the-sk-value"}
    del values[missing]
    with pytest.raises(ValueError, match=f"lacks '{missing}'") as caught:
        Storage("/", credential=json.dumps(values))
    assert "the-sk-value" not in str(caught.value) and "the-ak-value" not in str(caught.value)


@pytest.mark.parametrize(("text", "reason"), [
    ('{"s3-endpoint": "h", "SECRET_ACCESS_KEY": "sk-secret", ', "not a JSON object"),
    ('["sk-secret"]', "not a JSON object"),
    ('{"s3-endpoint": "h", "ACCESS_KEY_ID": "a", "SECRET_ACCESS_KEY": ["sk-secret"]}', "'SECRET_ACCESS_KEY' is not a string"),
    ('{"s3-endpoint": "https://h:9000", "ACCESS_KEY_ID": "a", "SECRET_ACCESS_KEY": "sk-secret"}', "host\\[:port\\]"),
    ('{"s3-endpoint": "", "ACCESS_KEY_ID": "a", "SECRET_ACCESS_KEY": "sk-secret"}', "lacks 's3-endpoint'"),
])
def test_bad_credentials_are_refused_without_their_values(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason) as caught:
        parse_credential(text)
    assert "sk-secret" not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None


def test_the_use_https_setting_reaches_the_wire(rootfs: Path, s3_server: S3Server, s3_bucket: str) -> None:
    put(s3_server, s3_bucket, "a.txt", b"hello\n")
    over_http = Storage(rootfs, credential=s3_server.credential_json(**{"s3-usehttps": "0"}))
    assert over_http.read_text(f"s3://{s3_bucket}/a.txt") == "hello\n"
    # The default is HTTPS: the plain-HTTP server cannot answer a TLS handshake.
    credential = s3_server.credential()
    del credential["s3-usehttps"]
    over_https = Storage(rootfs, credential=json.dumps(credential))
    with pytest.raises(StorageError, match=f"s3://{s3_bucket}/a.txt: read failed") as caught:
        over_https.read_text(f"s3://{s3_bucket}/a.txt")
    assert f"https://{s3_server.endpoint}" in str(caught.value)


def test_an_endpoint_without_a_server_is_a_storage_error(rootfs: Path) -> None:
    storage = Storage(rootfs, credential=json.dumps({"s3-endpoint": f"127.0.0.1:{free_port()}", "s3-usehttps": "0",
                                                    "ACCESS_KEY_ID": "ak", "SECRET_ACCESS_KEY": "sk-never-shown"}))
    with pytest.raises(StorageError, match="s3://bkt/k: stat failed: Could not connect") as caught:
        storage.exists("s3://bkt/k")
    assert "sk-never-shown" not in str(caught.value)


def test_secrets_never_show_in_reprs_errors_or_logs(rootfs: Path, s3_server: S3Server, s3_bucket: str) -> None:
    storage = Storage(rootfs, credential=s3_server.credential_json())
    (rootfs / "m.bin").write_bytes(b"model")
    texts = [repr(storage), repr(parse_credential(s3_server.credential_json()))]
    with structlog.testing.capture_logs() as logs:
        storage.copy_file("/m.bin", f"s3://{s3_bucket}/m.bin")
        storage.copy_file(f"s3://{s3_bucket}/m.bin", "/copy/m.bin")
        for bad in (lambda: storage.download(f"s3://{s3_bucket}/missing"),
                    lambda: storage.copy_file("/missing", f"s3://{s3_bucket}/x"),
                    lambda: storage.upload("/missing", f"s3://{s3_bucket}/x"),
                    lambda: storage.copy_file(f"s3://no-such-bucket-{s3_bucket}/x", "/y")):
            with pytest.raises(StorageError) as caught:
                bad()
            texts.append(str(caught.value))
    assert logs, "copies are logged"
    texts.append(repr(logs))
    for text in texts:
        assert SECRET_ACCESS_KEY not in text and ACCESS_KEY_ID not in text, text


def test_s3_without_a_credential_is_a_clear_error(rootfs: Path) -> None:
    with pytest.raises(StorageError, match="s3://bkt/k: no S3 credential"):
        Storage(rootfs).download("s3://bkt/k")


# --- transfers ------------------------------------------------------------------------------------------------

def test_download_to_a_given_path_creates_its_directory(storage: Storage, s3_server: S3Server, s3_bucket: str,
                                                         tmp_path: Path) -> None:
    put(s3_server, s3_bucket, "data/train.txt", b"a\nb\n")
    target = tmp_path / "deep" / "dir" / "train.txt"
    assert storage.download(f"s3://{s3_bucket}/data/train.txt", target) == target
    assert target.read_bytes() == b"a\nb\n"


def test_download_without_a_path_goes_to_a_new_temporary_directory(storage: Storage, s3_server: S3Server,
                                                                    s3_bucket: str) -> None:
    put(s3_server, s3_bucket, "data/train.txt", b"a\n")
    first = storage.download(f"s3://{s3_bucket}/data/train.txt")
    second = storage.download(f"s3://{s3_bucket}/data/train.txt")
    try:
        assert first.name == "train.txt" and first.read_bytes() == b"a\n"
        assert first.parent != second.parent
    finally:
        for path in (first, second):
            path.unlink()
            path.parent.rmdir()


def test_missing_objects_and_buckets(storage: Storage, s3_bucket: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(StorageError, match=f"^s3://{s3_bucket}/nope: does not exist$"):
        storage.download(f"s3://{s3_bucket}/nope", tmp_path / "dl" / "x")
    assert list((tmp_path / "dl").iterdir()) == [], "nothing left behind, not even a partial file"
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    with pytest.raises(StorageError, match="does not exist"):
        storage.download(f"s3://missing-{s3_bucket}/nope")
    assert list((tmp_path / "tmp").iterdir()) == [], "the temporary directory is removed"
    with pytest.raises(StorageError, match=f"^s3://{s3_bucket}/nope: does not exist"):
        list(storage.iter_lines(f"s3://{s3_bucket}/nope"))
    assert storage.exists(f"s3://{s3_bucket}/nope") is False
    assert storage.exists(f"s3://missing-{s3_bucket}/nope") is False


def test_upload_a_local_file(storage: Storage, s3_server: S3Server, s3_bucket: str, tmp_path: Path) -> None:
    source = tmp_path / "index.txt"
    source.write_bytes(b"s3://bucket/prefix/\nimg/1.png\n")
    storage.upload(source, f"s3://{s3_bucket}/job/data/index.txt")
    assert get(s3_server, s3_bucket, "job/data/index.txt") == b"s3://bucket/prefix/\nimg/1.png\n"
    assert storage.exists(f"s3://{s3_bucket}/job/data/index.txt") is True


def test_upload_from_s3_is_a_server_side_copy(storage: Storage, s3_server: S3Server, s3_bucket: str) -> None:
    put(s3_server, s3_bucket, "train/1/model.pb", b"weights")
    with structlog.testing.capture_logs():
        storage.upload(f"s3://{s3_bucket}/train/1/model.pb", f"s3://{s3_bucket}/deploy/model.pb")
    assert get(s3_server, s3_bucket, "deploy/model.pb") == b"weights"


def test_upload_errors(storage: Storage, s3_bucket: str, tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="does not exist"):
        storage.upload(tmp_path / "missing", f"s3://{s3_bucket}/x")
    with pytest.raises(StorageError, match="^/local/target: upload needs an s3:// URL"):
        storage.upload(tmp_path, "/local/target")
    with pytest.raises(StorageError, match=f"s3://missing-{s3_bucket}/x: upload failed: .*NoSuchBucket"):
        (tmp_path / "f").write_bytes(b"x")
        storage.upload(tmp_path / "f", f"s3://missing-{s3_bucket}/x")


def test_copy_file_every_direction(storage: Storage, rootfs: Path, s3_server: S3Server, s3_bucket: str) -> None:
    (rootfs / "models").mkdir()
    (rootfs / "models" / "base.pb").write_bytes(b"base")
    storage.copy_file("/models/base.pb", f"s3://{s3_bucket}/m/base.pb")                 # host path → S3
    assert get(s3_server, s3_bucket, "m/base.pb") == b"base"
    storage.copy_file(f"s3://{s3_bucket}/m/base.pb", f"s3://{s3_bucket}/m/copy.pb")    # S3 → S3
    assert get(s3_server, s3_bucket, "m/copy.pb") == b"base"
    storage.copy_file(f"s3://{s3_bucket}/m/copy.pb", "/deploy/new/model.pb")           # S3 → host path
    assert (rootfs / "deploy" / "new" / "model.pb").read_bytes() == b"base"
    put(s3_server, s3_bucket, "m/copy.pb", b"newer")
    storage.copy_file(f"s3://{s3_bucket}/m/copy.pb", "/deploy/new/model.pb")           # replaces
    assert (rootfs / "deploy" / "new" / "model.pb").read_bytes() == b"newer"
    assert sorted(p.name for p in (rootfs / "deploy" / "new").iterdir()) == ["model.pb"]


def test_copy_file_errors_name_the_failing_url(storage: Storage, rootfs: Path, s3_server: S3Server,
                                               s3_bucket: str) -> None:
    put(s3_server, s3_bucket, "k", b"v")
    with pytest.raises(StorageError, match=f"^s3://{s3_bucket}/nope: does not exist \\(copying to s3://{s3_bucket}/x\\)"):
        storage.copy_file(f"s3://{s3_bucket}/nope", f"s3://{s3_bucket}/x")
    with pytest.raises(StorageError, match=f"^s3://missing-{s3_bucket}/x: bucket 'missing-{s3_bucket}' does not exist"):
        storage.copy_file(f"s3://{s3_bucket}/k", f"s3://missing-{s3_bucket}/x")
    with pytest.raises(StorageError, match=f"^s3://{s3_bucket}/nope: does not exist$"):
        storage.copy_file(f"s3://{s3_bucket}/nope", "/x")
    assert not (rootfs / "x").exists()
    with pytest.raises(StorageError, match="^/nope: does not exist"):
        storage.copy_file("/nope", f"s3://{s3_bucket}/x")
    with pytest.raises(StorageError, match="^/../outside: resolves outside the rootfs"):
        storage.copy_file(f"s3://{s3_bucket}/nope", "/../outside")
    with pytest.raises(StorageError, match="unsupported scheme 'gs'"):
        storage.copy_file("gs://bucket/x", f"s3://{s3_bucket}/x")


def test_lines_and_text_of_an_object(storage: Storage, s3_server: S3Server, s3_bucket: str) -> None:
    put(s3_server, s3_bucket, "d.csv", b"path,label\r\na.png,1\r\n\r\nb.png,0")
    assert list(storage.iter_lines(f"s3://{s3_bucket}/d.csv")) == ["path,label", "a.png,1", "", "b.png,0"]
    assert storage.read_text(f"s3://{s3_bucket}/d.csv").startswith("path,label\r\n")
    with pytest.raises(StorageError, match="larger than 10 bytes"):
        storage.read_text(f"s3://{s3_bucket}/d.csv", max_bytes=10)


def test_set_credential_replaces_the_endpoint(rootfs: Path, s3_server: S3Server, s3_bucket: str) -> None:
    put(s3_server, s3_bucket, "k", b"v")
    storage = Storage(rootfs)
    storage.set_credential(s3_server.credential_json())
    assert storage.exists(f"s3://{s3_bucket}/k")
    storage.set_credential(s3_server.credential_json(**{"s3-endpoint": f"127.0.0.1:{free_port()}"}))
    with pytest.raises(StorageError, match="Could not connect"):
        storage.exists(f"s3://{s3_bucket}/k")


# --- big files are streamed -----------------------------------------------------------------------------------

SIZE = 24 * MiB


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "big.bin"
    with open(path, "wb") as file:
        for _ in range(SIZE // MiB):
            file.write(os.urandom(MiB))
    return path


def peak_bytes(action) -> int:
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_big_files_are_streamed_both_ways(rootfs: Path, s3_server: S3Server, s3_bucket: str, big_file: Path) -> None:
    # Parts of 5 MiB (the S3 minimum): a 24 MiB file goes in several parts and never whole into memory.
    storage = Storage(rootfs, credential=s3_server.credential_json(), part_size=5 * MiB)
    os.link(big_file, rootfs / "model.bin")
    with structlog.testing.capture_logs():
        up = peak_bytes(lambda: storage.copy_file("/model.bin", f"s3://{s3_bucket}/big.bin"))
        down = peak_bytes(lambda: storage.copy_file(f"s3://{s3_bucket}/big.bin", "/out/big.bin"))
    assert up < SIZE / 2, f"the upload held {up} bytes"
    assert down < SIZE / 2, f"the download held {down} bytes"
    head = s3_server.client().head_object(Bucket=s3_bucket, Key="big.bin")
    assert head["ContentLength"] == SIZE and head["ETag"].strip('"').endswith("-5"), "uploaded in 5 parts"
    assert sha256(rootfs / "out" / "big.bin") == sha256(big_file)


def test_a_big_dataset_is_read_line_by_line(rootfs: Path, s3_server: S3Server, s3_bucket: str) -> None:
    size = 8 * MiB
    line = b"/data/images/" + b"d" * 180 + b"/%08d.png\n"
    count = size // len(line % 0)
    with open(rootfs / "data.txt", "wb") as file:
        file.write(b"".join(line % i for i in range(count)))
    storage = Storage(rootfs, credential=s3_server.credential_json())
    with structlog.testing.capture_logs():
        storage.copy_file("/data.txt", f"s3://{s3_bucket}/data.txt")
    seen: list[tuple[int, str]] = []

    def read(url: str) -> None:
        total, last = 0, ""
        for total, last in enumerate(storage.iter_lines(url), 1):  # noqa: B007
            pass
        seen.append((total, last))

    for url in ("/data.txt", f"s3://{s3_bucket}/data.txt"):
        peak = peak_bytes(lambda url=url: read(url))
        assert peak < size / 4, f"reading {url} held {peak} bytes"
    last = (line % (count - 1)).decode().rstrip("\n")
    assert seen == [(count, last), (count, last)]
