"""The data files a round hands to its train or eval worker (Go ``writeSamples``, ``createFile``,
``util.ParsingDatasetIndex``).

In ``<dir>/<round>/``: ``data.txt`` (one sample per line) for a txt Dataset, plus ``dataIndex.txt`` when the Dataset
lives in S3 (first line the Dataset's URL prefix, then every token of a sample that has a file extension); ``data.csv``
(the header, then the samples) for a csv Dataset. Host-path files are replaced atomically; S3 objects are uploaded
from a temporary file.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from localcontroller.storage import Storage, StorageError, is_local_url

from ..dataset import DatasetSamples

__all__ = ["DataFiles", "dataset_index", "go_ext", "write_file", "write_lines", "write_samples"]


@dataclass(frozen=True)
class DataFiles:
    data_url: str
    index_url: str = ""


def go_ext(token: str) -> str:
    """Go ``path.Ext``: from the last dot of the last ``/``-element, or ``""``."""
    base = token.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    return base[dot:] if dot >= 0 else ""


def dataset_index(samples: Iterable[str], prefix: str) -> list[str]:
    """The lines of ``dataIndex.txt``: ``prefix``, then each space-separated token of a sample with an extension."""
    lines = [prefix]
    for sample in samples:
        lines.extend(token for token in sample.split(" ") if go_ext(token))
    return lines


def _files(dir_url: str, fmt: str, remote_dataset: bool) -> DataFiles:
    if fmt == "txt":
        return DataFiles(f"{dir_url}/data.txt", f"{dir_url}/dataIndex.txt" if remote_dataset else "")
    if fmt == "csv":
        return DataFiles(f"{dir_url}/data.csv")
    raise ValueError(f"dataset format {fmt!r} is not supported (txt or csv)")


def write_samples(storage: Storage, dir_url: str, samples: Sequence[str], dataset: DatasetSamples) -> DataFiles:
    """Write ``samples`` of ``dataset`` into ``dir_url`` (``<out>/data/train/<round>``); returns the URLs written.
    ``StorageError`` names the file that could not be written."""
    files = _files(dir_url, dataset.format, dataset.remote)
    header = [dataset.header] if dataset.format == "csv" else []
    write_lines(storage, files.data_url, [*header, *samples])
    if files.index_url:
        write_lines(storage, files.index_url, dataset_index(samples, dataset.url_prefix))
    return files


def write_lines(storage: Storage, url: str, lines: Iterable[str]) -> None:
    """Write ``lines``, each ended by a newline, to the host path or S3 object ``url``."""
    write_file(storage, url, (f"{line}\n" for line in lines))


def write_file(storage: Storage, url: str, parts: Iterable[str]) -> None:
    """Write the concatenated ``parts`` as UTF-8 to the host path (replaced atomically) or S3 object ``url``;
    ``StorageError`` names ``url`` when it fails."""
    if is_local_url(url):
        target = storage.local_path(url)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            _write_atomically(target, parts)
        except OSError as exc:
            raise StorageError(url, f"write failed: {exc.strerror or exc}") from None
        return
    fd, tmp = tempfile.mkstemp(prefix="sedna-lc-data-")
    os.close(fd)
    try:
        try:
            _write(Path(tmp), parts)
        except OSError as exc:
            raise StorageError(url, f"cannot stage the file: {exc.strerror or exc}") from None
        storage.upload(tmp, url)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _write(path: Path, parts: Iterable[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as file:
        file.writelines(parts)


def _write_atomically(target: Path, parts: Iterable[str]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(fd)
    try:
        _write(Path(tmp), parts)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
