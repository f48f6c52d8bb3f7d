"""Cutting the training data into units of work ``(file, start, end)``.

The training data is a file or a directory of text/CSV files (hidden files and subdirectories are skipped; files in
name order). A record is a line; the first line of a ``.csv`` file is its header and not a record. A file of ``n``
records gives ``ceil(n / records_per_task)`` units ``[start, end)``, the last one shorter, as ElasticDL's task
manager cuts its shards. Files are read in 1 MiB blocks, never whole.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["DataError", "Shard", "count_records", "cut_shards", "list_data_files"]

_BLOCK = 1 << 20


class DataError(ValueError):
    """The training data cannot be used (missing, unreadable, or without a single record)."""


@dataclass(frozen=True)
class Shard:
    """One unit of work: records ``[start, end)`` of ``file``."""

    file: str
    start: int
    end: int

    @property
    def records(self) -> int:
        return self.end - self.start


def list_data_files(path: str) -> list[str]:
    """``path`` itself when it is a file, else the regular non-hidden files directly in it, in name order."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise DataError(f"{path!r} is neither a file nor a directory")
    try:
        names = sorted(os.listdir(path))
    except OSError as exc:
        raise DataError(f"cannot list {path!r}: {exc.strerror}") from None
    return [os.path.join(path, n) for n in names if not n.startswith(".") and os.path.isfile(os.path.join(path, n))]


def count_records(path: str) -> int:
    """The number of lines of ``path`` (a last line without a newline counts), minus the header of a ``.csv``."""
    lines = 0
    last = b"\n"
    try:
        with open(path, "rb") as f:
            while block := f.read(_BLOCK):
                lines += block.count(b"\n")
                last = block[-1:]
    except OSError as exc:
        raise DataError(f"cannot read {path!r}: {exc.strerror}") from None
    if last != b"\n":
        lines += 1
    if path.lower().endswith(".csv") and lines:
        lines -= 1
    return lines


def cut_shards(path: str, records_per_task: int) -> list[Shard]:
    """Every unit of work of the data at ``path``; ``DataError`` when there is none."""
    if records_per_task < 1:
        raise ValueError(f"records_per_task must be at least 1, got {records_per_task}")
    shards: list[Shard] = []
    for file in list_data_files(path):
        total = count_records(file)
        shards.extend(Shard(file, start, min(start + records_per_task, total))
                      for start in range(0, total, records_per_task))
    if not shards:
        raise DataError(f"{path!r} holds no records")
    return shards
