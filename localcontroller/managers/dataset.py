"""The dataset manager (Go Sedna's ``managers/dataset``): counts a Dataset's samples and reports the count.

* The index file of ``spec.url`` is read below the rootfs (``/a/b.txt`` → ``<rootfs>/a/b.txt``). ``txt``: one
  sample per non-empty line; ``csv``: the same minus the header line.
* Counted at once on insert and when ``spec.url``/``spec.format`` change, then every ``--dataset-check-period``
  seconds (one thread for all datasets); ``{"numberOfSamples": N}`` is reported when N differs from the last count
  reported (kept in the database, so a restart reports only what changed meanwhile).
* A missing or unreadable file, an unknown format or an unsupported URL (``s3://`` comes with the learning jobs) is
  logged once per change of the problem, with the path, and never stops the manager.
"""

from __future__ import annotations

import os
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from localcontroller.worker import WorkerMessage

from .base import ManagerContext

__all__ = ["KIND", "DatasetManager", "count_samples", "local_path", "read_samples"]

log = structlog.get_logger("sedna-lc.dataset")

KIND = "dataset"
REPORT_KIND = "Dataset"  # as Go's LC writes it; the GM lower-cases kinds
FORMATS = ("txt", "csv")
_MAX_WAIT = 1.0


def local_path(rootfs: str, url: str) -> str:
    """Where a local URL lives on this machine; ``ValueError`` for URLs the LC cannot read yet."""
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme == "s3":
        raise ValueError(f"s3:// URLs are not supported yet (they come with the learning jobs): {url}")
    if scheme:
        raise ValueError(f"unsupported URL scheme {scheme!r}: {url}")
    if not url:
        raise ValueError("spec.url is empty")
    return os.path.join(rootfs, os.path.normpath("/" + url).lstrip("/"))


def read_samples(path: str, fmt: str) -> list[str]:
    """The samples of an index file: its non-empty lines, minus the header for csv."""
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is not supported (txt or csv)")
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = [line.rstrip("\r\n") for line in fh if line.strip()]
    return lines[1:] if fmt == "csv" else lines


def count_samples(path: str, fmt: str) -> int:
    return len(read_samples(path, fmt))


@dataclass(frozen=True)
class _Dataset:
    namespace: str
    name: str
    url: str
    format: str


def _dataset(obj: Mapping[str, Any]) -> _Dataset:
    md = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    return _Dataset(md.get("namespace") or "", md.get("name") or "", spec.get("url") or "", spec.get("format") or "")


class DatasetManager:
    kind = KIND

    def __init__(self, ctx: ManagerContext) -> None:
        self.ctx = ctx
        self.period = ctx.config.dataset_check_period
        self._cond = threading.Condition()
        self._datasets: dict[str, _Dataset] = {}
        self._due: set[str] = set()
        self._problems: dict[str, str] = {}  # the problem last logged per dataset

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
        self.ctx.store.delete_state(self._state_key(key))

    def add_worker_message(self, message: WorkerMessage) -> None:
        return None  # workers never report about datasets

    def start(self, stop: threading.Event) -> None:
        threading.Thread(target=self._monitor, args=(stop,), name="dataset-monitor", daemon=True).start()

    # -- for other managers -----------------------------------------------------------------------------------------
    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self.ctx.store.get_resource(KIND, namespace, name)

    def samples(self, namespace: str, name: str) -> list[str]:
        """The Dataset's current samples; raises ``OSError``/``ValueError`` when they cannot be read."""
        with self._cond:
            ds = self._datasets.get(f"{namespace}/{name}")
        if ds is None:
            raise ValueError(f"unknown dataset {namespace}/{name}")
        return read_samples(local_path(self.ctx.config.rootfs, ds.url), ds.format)

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
        path = ds.url
        try:
            path = local_path(self.ctx.config.rootfs, ds.url)
            count = count_samples(path, ds.format)
        except (OSError, ValueError) as exc:
            problem = f"{type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"
            with self._cond:
                logged = self._problems.get(key) == problem or key not in self._datasets
                self._problems[key] = problem
            if not logged:
                log.warning("cannot count the dataset's samples; trying again every check period", object=key,
                            path=path, url=ds.url, error=problem)
            return None
        with self._cond:
            if self._problems.pop(key, None) is not None:
                log.info("dataset samples readable again", object=key, path=path)
            if key not in self._datasets:  # deleted meanwhile
                return None
        state_key = self._state_key(key)
        if self.ctx.store.get_state(state_key) != count:
            self.ctx.report(ds.namespace, REPORT_KIND, ds.name, {"numberOfSamples": count})
            self.ctx.store.put_state(state_key, count)
            log.info("dataset sample count changed", object=key, number_of_samples=count, path=path)
        return count

    @staticmethod
    def _state_key(key: str) -> str:
        return f"dataset/{key}/numberOfSamples"
