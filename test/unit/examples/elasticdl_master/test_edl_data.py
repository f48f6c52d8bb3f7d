"""Cutting training data into units of work."""

from __future__ import annotations

import pytest

from examples.elasticdl_master.data import DataError, Shard, count_records, cut_shards


def test_units_are_cut_per_file_by_records_per_task(data_dir):
    assert cut_shards(str(data_dir), 4) == [
        Shard(str(data_dir / "a.txt"), 0, 4), Shard(str(data_dir / "a.txt"), 4, 8), Shard(str(data_dir / "a.txt"), 8, 10),
        Shard(str(data_dir / "b.csv"), 0, 4), Shard(str(data_dir / "b.csv"), 4, 7),
        Shard(str(data_dir / "c.txt"), 0, 4), Shard(str(data_dir / "c.txt"), 4, 5),
    ]


def test_records_are_lines_the_csv_header_excluded_and_a_last_line_without_newline_counted(data_dir):
    assert count_records(str(data_dir / "a.txt")) == 10
    assert count_records(str(data_dir / "b.csv")) == 7
    assert count_records(str(data_dir / "c.txt")) == 5


def test_hidden_files_and_subdirectories_are_skipped_and_a_single_file_works(data_dir):
    (data_dir / ".hidden").write_text("x\n")
    (data_dir / "sub").mkdir()
    (data_dir / "sub" / "d.txt").write_text("x\n")
    assert {s.file for s in cut_shards(str(data_dir), 100)} == {str(data_dir / n) for n in ("a.txt", "b.csv", "c.txt")}
    assert cut_shards(str(data_dir / "a.txt"), 100) == [Shard(str(data_dir / "a.txt"), 0, 10)]


def test_a_large_file_is_counted_block_by_block(tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"r\n" * 1_500_000)  # 3 MB: several 1 MiB blocks
    assert count_records(str(big)) == 1_500_000


@pytest.mark.parametrize("setup, message", [
    (lambda d: None, "holds no records"),
    (lambda d: (d / "empty.txt").write_text(""), "holds no records"),
    (lambda d: (d / "header-only.csv").write_text("a,b\n"), "holds no records"),
])
def test_data_without_records_is_refused(tmp_path, setup, message):
    setup(tmp_path)
    with pytest.raises(DataError, match=message):
        cut_shards(str(tmp_path), 10)


def test_a_missing_path_is_refused(tmp_path):
    with pytest.raises(DataError, match="neither a file nor a directory"):
        cut_shards(str(tmp_path / "nope"), 10)
