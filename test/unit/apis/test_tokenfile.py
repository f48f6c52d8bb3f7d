"""``apis.tokenfile.TokenFile``: a token file replaced while the program runs is picked up, at the cost of one stat per
look while it is unchanged; a change that cannot be read keeps the last good token."""

from __future__ import annotations

import os

import pytest

import apis.tokenfile as tokenfile
from apis.tokenfile import MAX_TOKEN_BYTES, TokenFile, read_token


def test_read_token_strips_and_refuses_what_is_not_a_token(tmp_path):
    path = tmp_path / "token"
    path.write_text("  s3cret\n")
    assert read_token(str(path)) == "s3cret"
    for content, problem in ((b"\n \n", "is empty"), (b"\xff\xfe", "not UTF-8"),
                             (b"x" * (MAX_TOKEN_BYTES + 1), "larger than")):
        path.write_bytes(content)
        with pytest.raises(ValueError, match=problem):
            read_token(str(path))
    with pytest.raises(OSError):
        read_token(str(tmp_path / "missing"))


def test_a_rewritten_file_is_read_again_and_an_unchanged_one_is_not(tmp_path, monkeypatch):
    path = tmp_path / "token"
    path.write_text("one\n")
    token = TokenFile(str(path))
    reads: list[str] = []
    real_read = tokenfile.read_token
    monkeypatch.setattr(tokenfile, "read_token", lambda p: reads.append(p) or real_read(p))
    assert [token.current() for _ in range(5)] == ["one"] * 5
    assert reads == []  # unchanged: stat only
    path.write_text("two-two\n")
    assert token.current() == "two-two" and token.current() == "two-two"
    assert len(reads) == 1


def test_a_kubernetes_secret_volume_update_is_seen(tmp_path):
    """The kubelet writes a new ``..<timestamp>`` directory and swaps the ``..data`` symlink: the file the program
    opened (``token`` → ``..data/token``) keeps its path and size but is another inode."""
    volume = tmp_path / "volume"
    volume.mkdir()
    first, second = volume / "..2026_01_01", volume / "..2026_01_02"
    for directory, value in ((first, "aaaa"), (second, "bbbb")):
        directory.mkdir()
        (directory / "token").write_text(value)
    (volume / "..data").symlink_to(first.name)
    (volume / "token").symlink_to("..data/token")
    token = TokenFile(str(volume / "token"))
    assert token.current() == "aaaa"
    (volume / "..data_tmp").symlink_to(second.name)
    os.replace(volume / "..data_tmp", volume / "..data")
    assert token.current() == "bbbb"


def test_a_change_that_cannot_be_read_keeps_the_last_token_and_is_retried(tmp_path):
    path = tmp_path / "token"
    path.write_text("good\n")
    token = TokenFile(str(path))
    path.write_text("")  # a half-written file
    assert token.current() == "good" and "is empty" in token.problem
    path.unlink()
    assert token.current() == "good" and "cannot stat" in token.problem
    path.write_text("better\n")
    assert token.current() == "better" and token.problem == ""


def test_a_missing_or_empty_file_at_start_is_an_error(tmp_path):
    with pytest.raises(OSError):
        TokenFile(str(tmp_path / "missing"))
    (tmp_path / "empty").write_text("")
    with pytest.raises(ValueError):
        TokenFile(str(tmp_path / "empty"))
