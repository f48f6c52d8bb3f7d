"""The dataset manager (Go Sedna's ``managers/dataset``): counts a Dataset's samples and reports the count.

* The index file of ``spec.url`` is read through ``localcontroller.storage``: a host path below the rootfs
  (``/a/b.txt`` → ``<rootfs>/a/b.txt``) or ``s3://bucket/key`` with the credential of the Dataset's
  ``sedna.io/credential`` annotation. ``txt``: one sample per non-empty line; ``csv``: the same minus the header line.
* Counted at once on insert and when ``spec.url``/``spec.format``/the credential change, then every
  ``--dataset-check-period`` seconds (one thread for all datasets); ``{"numberOfSamples": N}`` is reported when N
  differs from the last count reported (kept in the database, so a restart reports only what changed meanwhile).
* A missing or unreadable file, an unknown format, a bad credential or an unsupported URL is logged once per change
  of the problem, with the URL, and never stops the manager.
* For the learning-job managers: ``count``, ``read`` (the samples, csv header, URL prefix) and ``subscribe`` (called
  with ``(namespace, name)`` whenever a count changes).
"""

from __future__ import annotations

import posixpath
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from localcontroller.storage import StorageError, StoragePool, credential_of, is_local_url
from localcontroller.worker import WorkerMessage

from .base import ManagerContext

__all__ = ["KIND", "DatasetManager", "DatasetSamples", "count_samples", "parse_samples", "read_samples"]

log = structlog.get_logger("sedna-lc.dataset")

KIND = "dataset"
REPORT_KIND = "Dataset"  # as Go's LC writes it; the GM lower-cases kinds
FORMATS = ("txt", "csv")
_MAX_WAIT = 1.0


def parse_samples(lines: Iterable[str], fmt: str) -> tuple[str, list[str]]:
    """``(header, samples)`` of an index file's lines: the non-empty lines, the first one being the header for csv
    (``""`` for txt). ``ValueError`` for a format other than txt and csv."""
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is not supported (txt or csv)")
    samples = [line.rstrip("\r\n") for line in lines if line.strip()]
    if fmt == "csv":
        return (samples[0], samples[1:]) if samples else ("", [])
    return "", samples


def read_samples(path: str, fmt: str) -> list[str]:
    """The samples of the index file at ``path`` (a path of the LC's filesystem)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return parse_samples(fh, fmt)[1]


def count_samples(path: str, fmt: str) -> int:
    return len(read_samples(path, fmt))


@dataclass(frozen=True)
class DatasetSamples:
    """What a Dataset holds now: its samples (and csv header) and where its index file lives."""

    url: str
    format: str
    header: str
    samples: list[str]

    @property
    def remote(self) -> bool:
        """Whether the samples live in S3 (the learning jobs then write a ``dataIndex.txt``)."""
        return not is_local_url(self.url)

    @property
    def url_prefix(self) -> str:
        """The index file's directory, ``s3://bucket/dir/`` for ``s3://bucket/dir/index.txt`` (Go ``URLPrefix``)."""
        return self.url[: len(self.url) - len(posixpath.basename(self.url))]


@dataclass(frozen=True)
class _Dataset:
    namespace: str
    name: str
    url: str
    format: str
    credential: str | None = field(default=None, repr=False)


def _dataset(obj: Mapping[str, Any]) -> _Dataset:
    md = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    return _Dataset(md.get("namespace") or "", md.get("name") or "", spec.get("url") or "", spec.get("format") or "",
                    credential_of(obj))


class DatasetManager:
    kind = KIND

    def __init__(self, ctx: ManagerContext) -> None:
        self.ctx = ctx
        self.period = ctx.config.dataset_check_period
        self._cond = threading.Condition()
        self._datasets: dict[str, _Dataset] = {}
        self._due: set[str] = set()
        self._problems: dict[str, str] = {}  # the problem last logged per dataset
        self._counts: dict[str, int] = {}  # the last count per dataset
        self._listeners: list[Callable[[str, str], None]] = []
        self._storages = StoragePool(ctx.config.rootfs)

    # -- Manager ----------------------------------------------------------------------------------------------------
    def insert(self, obj: Mapping[str, Any]) -> None:
        ds = _dataset(obj)
        key = f"{ds.namespace}/{ds.name}"
        with self._cond:
            old = self._datasets.get(key)
            self._datasets[key] = ds
            if old != ds:
                self._due.add(key)
                self._cond.notify_all()
        if old is not None and old.url != ds.url:
            log.info("dataset url changed; following it", object=key, url=ds.url, previous=old.url)

    def delete(self, obj: Mapping[str, Any]) -> None:
        ds = _dataset(obj)
        key = f"{ds.namespace}/{ds.name}"
        with self._cond:
            self._datasets.pop(key, None)
            self._due.discard(key)
            self._problems.pop(key, None)
            self._counts.pop(key, None)
        self.ctx.store.delete_state(self._state_key(key))

    def add_worker_message(self, message: WorkerMessage) -> None:
        return None  # workers never report about datasets

    def start(self, stop: threading.Event) -> None:
        threading.Thread(target=self._monitor, args=(stop,), name="dataset-monitor", daemon=True).start()

    # -- for other managers -----------------------------------------------------------------------------------------
    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self.ctx.store.get_resource(KIND, namespace, name)

    def samples(self, namespace: str, name: str) -> list[str]:
        """The Dataset's current samples; raises ``StorageError``/``ValueError`` when they cannot be read."""
        return self.read(namespace, name).samples

    def read(self, namespace: str, name: str) -> DatasetSamples:
        """The Dataset's samples as its file holds them now; ``StorageError``/``ValueError`` when they cannot be
        read (unknown dataset, missing file, bad format or credential)."""
        with self._cond:
            ds = self._datasets.get(f"{namespace}/{name}")
        if ds is None:
            raise ValueError(f"unknown dataset {namespace}/{name}")
        return self._read(ds)

    def count(self, namespace: str, name: str) -> int | None:
        """The number of samples last counted (``None`` before the first successful count)."""
        with self._cond:
            return self._counts.get(f"{namespace}/{name}")

    def subscribe(self, listener: Callable[[str, str], None]) -> None:
        """Call ``listener(namespace, name)`` (from the monitor thread; it must not block) when a count changes."""
        self._listeners.append(listener)

    def _read(self, ds: _Dataset) -> DatasetSamples:
        if not ds.url:
            raise ValueError("spec.url is empty")
        storage = self._storages.get(ds.credential)
        header, samples = parse_samples(storage.iter_lines(ds.url), ds.format)
        return DatasetSamples(ds.url, ds.format.lower(), header, samples)

    # -- monitor ----------------------------------------------------------------------------------------------------
    def _monitor(self, stop: threading.Event) -> None:
        next_round = time.monotonic()
        while not stop.is_set():
            with self._cond:
                now = time.monotonic()
                if now >= next_round:
                    keys = set(self._datasets)
                    next_round = now + self.period
                else:
                    keys = set(self._due)
                self._due.clear()
                if not keys:
                    self._cond.wait(min(next_round - now, _MAX_WAIT))
                    continue
            for key in sorted(keys):
                if stop.is_set():
                    return
                self.check(key)

    def check(self, key: str) -> int | None:
        """Count the samples of ``key`` and report the count if it changed; ``None`` when it cannot be read."""
        with self._cond:
            ds = self._datasets.get(key)
        if ds is None:
            return None
        try:
            count = len(self._read(ds).samples)
        except (StorageError, OSError, ValueError) as exc:
            problem = f"{type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"
            with self._cond:
                logged = self._problems.get(key) == problem or key not in self._datasets
                self._problems[key] = problem
            if not logged:
                log.warning("cannot count the dataset's samples; trying again every check period", object=key,
                            url=ds.url, error=problem)
            return None
        with self._cond:
            if self._problems.pop(key, None) is not None:
                log.info("dataset samples readable again", object=key, url=ds.url)
            if key not in self._datasets:  # deleted meanwhile
                return None
            changed = self._counts.get(key) != count
            self._counts[key] = count
        if changed:
            for listener in list(self._listeners):
                listener(ds.namespace, ds.name)
        state_key = self._state_key(key)
        if self.ctx.store.get_state(state_key) != count:
            self.ctx.report(ds.namespace, REPORT_KIND, ds.name, {"numberOfSamples": count})
            self.ctx.store.put_state(state_key, count)
            log.info("dataset sample count changed", object=key, number_of_samples=count, url=ds.url)
        return count

    @staticmethod
    def _state_key(key: str) -> str:
        return f"dataset/{key}/numberOfSamples"
