"""The dataset manager (Go Sedna's ``managers/dataset``): counts a Dataset's samples and reports the count.

* The index file of ``spec.url`` is read through ``localcontroller.storage``: a host path below the rootfs
  (``/a/b.txt`` → ``<rootfs>/a/b.txt``) or ``s3://bucket/key`` with the credential of the Dataset's
  ``sedna.io/credential`` annotation. ``txt``: one sample per non-empty line; ``csv``: the same minus the header line.
* Counted at once on insert and when ``spec.url``/``spec.format``/the credential/the uid change, then every
  ``--dataset-check-period`` seconds, in constant memory and, for a grown local file, over the appended bytes only
  (``datasetcount.py``). The counts run on the reconcile runner (``reconcile.Controller``, ``self.loop``) with
  ``COUNT_WORKERS`` threads, keyed by (Dataset key, spec generation): a sync counts one slice and requeues its key
  behind the others, so the counts take turns slice by slice and a big file never delays another Dataset's first
  count by more than one slice per count running; a finished count requeues its key after the check period. A count
  that ends after its Dataset was deleted or changed is dropped (a count of the new spec runs meanwhile, under its
  own key): a count is only ever reported for the spec (URL, uid) it read.
* ``{"numberOfSamples": N}`` is reported when N differs from the last count reported (kept in the database, so a
  restart reports only what changed meanwhile).
* A missing or unreadable file, an unknown format, a bad credential or an unsupported URL is logged once per change
  of the problem, with the URL, and reported once per change as ``{"numberOfSamples": <last reported, or 0>,
  "error": {"reason": "URLNotFound", "message": "..."}}`` (Go's GM reads only ``numberOfSamples``; ours sets the
  Dataset's ``Ready`` condition and a Warning Event); the next count reported after it carries ``"error": null``.
  Reasons: ``URLNotFound``, ``URLInvalid``, ``FormatUnsupported``, ``CredentialInvalid``, ``ReadFailed``.
* For the learning-job managers: ``count``, ``read`` (the samples, csv header, URL prefix) and ``subscribe`` (called
  with ``(namespace, name)`` whenever a count changes).
"""

from __future__ import annotations

import itertools
import posixpath
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from localcontroller.storage import StoragePool, credential_of, is_local_url
from localcontroller.worker import WorkerMessage
from reconcile import Controller, Result
from workqueue import Clock

from .base import ManagerContext
from .datasetcount import (
    CREDENTIAL_INVALID,
    READ_FAILED,
    SLICE_BYTES,
    CountError,
    CountJob,
    IndexChanged,
    IndexFile,
    IndexState,
    count_samples,
    index_file,
    parse_samples,
    parse_samples_after,
    read_samples,
)

__all__ = ["KIND", "DatasetManager", "DatasetSamples", "count_samples", "parse_samples", "read_samples"]

log = structlog.get_logger("sedna-lc.dataset")

KIND = "dataset"
REPORT_KIND = "Dataset"  # as Go's LC writes it; the GM lower-cases kinds
COUNT_WORKERS = 4
_MAX_RESTARTS = 2  # a file replaced while counted is counted again at once this often, then next period


@dataclass(frozen=True)
class DatasetSamples:
    """What a Dataset holds now: its samples after the first ``skipped`` (and its csv header) and where its index
    file lives."""

    url: str
    format: str
    header: str
    samples: list[str]
    skipped: int = 0

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
    uid: str
    url: str
    format: str
    credential: str | None = field(default=None, repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def _dataset(obj: Mapping[str, Any]) -> _Dataset:
    md = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    return _Dataset(md.get("namespace") or "", md.get("name") or "", md.get("uid") or "", spec.get("url") or "",
                    spec.get("format") or "", credential_of(obj))


OpenIndex = Callable[[str, "str | None"], IndexFile]
"""``open_index(url, credential)``: the index file to count (``CountError`` when the URL or credential is bad)."""


class _Count:
    """One count of one spec of a Dataset (``generation`` tells a stale one), started lazily by its first step."""

    def __init__(self, spec: _Dataset, generation: int, previous: IndexState | None, slice_bytes: int) -> None:
        self.spec = spec
        self.generation = generation
        self.previous = previous
        self.slice_bytes = slice_bytes
        self.job: CountJob | None = None
        self.restarts = 0

    def step(self, open_index: OpenIndex) -> IndexState | None:
        """One slice; the state when done. ``CountError``; ``IndexChanged`` when the file kept changing."""
        if self.job is None:
            self.job = CountJob(open_index(self.spec.url, self.spec.credential), self.spec.format, self.previous,
                                self.slice_bytes)
        try:
            return self.job.step()
        except IndexChanged:
            self.restarts += 1
            if self.restarts > _MAX_RESTARTS:
                raise
            self.job = None  # from the start, against the file as it is now
            return None

    def run(self, open_index: OpenIndex) -> IndexState:
        while (state := self.step(open_index)) is None:
            pass
        return state


@dataclass
class _Watch:
    """A Dataset this node holds: its spec now, the count in flight and what the last finished count saw."""

    spec: _Dataset
    generation: int
    task: _Count | None = None
    index: IndexState | None = None
    count: int | None = None
    problem: dict[str, str] | None = None  # the problem last logged


CountKey = tuple[str, int]
"""The runner's key of a count: (``namespace/name`` of the Dataset, generation of the spec it counts)."""


class DatasetManager:
    """Counts on ``workers`` threads of a reconcile runner, taking turns slice by slice (module doc)."""

    kind = KIND

    def __init__(self, ctx: ManagerContext, *, workers: int = COUNT_WORKERS, open_index: OpenIndex | None = None,
                 slice_bytes: int = SLICE_BYTES, clock: Clock | None = None) -> None:
        self.ctx = ctx
        self.period = ctx.config.dataset_check_period
        self.workers = max(1, workers)
        self.slice_bytes = slice_bytes
        self._lock = threading.Lock()
        self._watches: dict[str, _Watch] = {}
        self.loop: Controller[CountKey] = Controller("dataset-count", self._sync, workers=self.workers, log=log,
                                                     clock=clock)  # the check period runs on ``clock``
        self._generations = itertools.count()  # across Datasets: a re-created one never shares its predecessor's
        self._listeners: list[Callable[[str, str], None]] = []
        self._storages = StoragePool(ctx.config.rootfs)
        self._open_index = open_index or self._open_storage_index

    # -- Manager ----------------------------------------------------------------------------------------------------
    def insert(self, obj: Mapping[str, Any]) -> None:
        ds = _dataset(obj)
        with self._lock:
            watch = self._watches.get(ds.key)
            if watch is not None and watch.spec == ds:
                return
            old = watch.spec if watch is not None else None
            if watch is None:
                watch = self._watches[ds.key] = _Watch(ds, next(self._generations))
            else:  # a count in flight for the old spec is dropped when it ends
                watch.spec, watch.generation, watch.index = ds, next(self._generations), None
                if old is not None and old.uid != ds.uid:  # re-created (its delete missed): report to the new one
                    for state_key in self._state_keys(ds.key):
                        self.ctx.store.delete_state(state_key)
            watch.task = _Count(ds, watch.generation, None, self.slice_bytes)
        self.loop.enqueue((ds.key, watch.generation))
        if old is not None and old.url != ds.url:
            log.info("dataset url changed; following it", object=ds.key, url=ds.url, previous=old.url)

    def delete(self, obj: Mapping[str, Any]) -> None:
        key = _dataset(obj).key
        with self._lock:
            self._watches.pop(key, None)
            for state_key in self._state_keys(key):
                self.ctx.store.delete_state(state_key)

    def add_worker_message(self, message: WorkerMessage) -> None:
        return None  # workers never report about datasets

    def start(self, stop: threading.Event) -> None:
        threading.Thread(target=self.loop.run, args=(stop,), name="dataset-count-run", daemon=True).start()

    # -- for other managers -----------------------------------------------------------------------------------------
    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self.ctx.store.get_resource(KIND, namespace, name)

    def samples(self, namespace: str, name: str) -> list[str]:
        """The Dataset's current samples; raises ``StorageError``/``ValueError`` when they cannot be read."""
        return self.read(namespace, name).samples

    def read(self, namespace: str, name: str, skip: int = 0) -> DatasetSamples:
        """The Dataset's samples as its file holds them now, but the first ``skip`` (read past, never held: a
        learning job asks only for those it has not split yet, so its memory does not grow with the Dataset);
        ``StorageError``/``ValueError`` when they cannot be read (unknown dataset, missing file, bad format or
        credential)."""
        with self._lock:
            watch = self._watches.get(f"{namespace}/{name}")
            ds = watch.spec if watch is not None else None
        if ds is None:
            raise ValueError(f"unknown dataset {namespace}/{name}")
        if not ds.url:
            raise ValueError("spec.url is empty")
        storage = self._storages.get(ds.credential)
        header, samples, skipped = parse_samples_after(storage.iter_lines(ds.url), ds.format, skip)
        return DatasetSamples(ds.url, ds.format.lower(), header, samples, skipped)

    def count(self, namespace: str, name: str) -> int | None:
        """The number of samples last counted (``None`` before the first successful count)."""
        with self._lock:
            watch = self._watches.get(f"{namespace}/{name}")
            return watch.count if watch is not None else None

    def subscribe(self, listener: Callable[[str, str], None]) -> None:
        """Call ``listener(namespace, name)`` (from a counting thread; it must not block) when a count changes."""
        self._listeners.append(listener)

    # -- counting ---------------------------------------------------------------------------------------------------
    def check(self, key: str) -> int | None:
        """Count the samples of ``key`` now, in this thread, and report what changed; ``None`` when they cannot be
        counted (or the Dataset changed meanwhile)."""
        with self._lock:
            watch = self._watches.get(key)
            if watch is None:
                return None
            task = _Count(watch.spec, watch.generation, watch.index, self.slice_bytes)
        try:
            outcome: IndexState | CountError = task.run(self._open_index)
        except CountError as exc:
            outcome = exc
        except IndexChanged as exc:
            log.info("dataset index kept changing while counted; counting again next check period", object=key,
                     url=task.spec.url, error=str(exc))
            return None
        return self._finish(key, task, outcome)

    def _open_storage_index(self, url: str, credential: str | None) -> IndexFile:
        try:
            storage = self._storages.get(credential)
        except ValueError as exc:
            raise CountError(CREDENTIAL_INVALID, str(exc)) from None
        return index_file(storage, url)

    def _sync(self, count_key: CountKey) -> Result | None:
        """One slice of the count of ``count_key``'s spec (a count starts when the last one ended a check period
        ago); requeued behind the other counts until done, then after the check period. A key of an older spec,
        or of a deleted Dataset, ends here."""
        key, generation = count_key
        with self._lock:
            watch = self._watches.get(key)
            if watch is None or watch.generation != generation:
                return None
            if watch.task is None:
                watch.task = _Count(watch.spec, generation, watch.index, self.slice_bytes)
            task = watch.task
        try:
            outcome: IndexState | CountError | None = task.step(self._open_index)
        except CountError as exc:
            outcome = exc
        except IndexChanged as exc:
            log.info("dataset index kept changing while counted; counting again next check period", object=key,
                     url=task.spec.url, error=str(exc))
            with self._lock:
                if watch.task is task:
                    watch.task = None
            return Result(requeue_after=self.period)
        except Exception as exc:  # a bug must not stop the counts: the Dataset says so, the next period retries
            log.exception("dataset count failed", object=key, url=task.spec.url)
            outcome = CountError(READ_FAILED, f"{task.spec.url}: count failed: {type(exc).__name__}: {exc}")
        if outcome is None:
            return Result(requeue_after=0.0)  # behind the slices of the other counts
        self._finish(key, task, outcome)
        with self._lock:
            watch = self._watches.get(key)
            current = watch is not None and watch.generation == generation
        return Result(requeue_after=self.period) if current else None

    def _finish(self, key: str, task: _Count, outcome: IndexState | CountError) -> int | None:
        """Keep and report the outcome of ``task``, unless the Dataset was deleted or changed since it started."""
        spec = task.spec
        with self._lock:
            watch = self._watches.get(key)
            if watch is not None and watch.task is task:
                watch.task = None
            if watch is None or watch.generation != task.generation:
                log.info("dataset count dropped: the dataset changed while it was counted", object=key, url=spec.url)
                return None
            if isinstance(outcome, CountError):
                self._report_problem(watch, outcome)
                return None
            count = outcome.samples(spec.format)
            watch.index = outcome
            changed = watch.count != count
            watch.count = count
            self._report_count(watch, count)
        if changed:
            for listener in list(self._listeners):
                try:
                    listener(spec.namespace, spec.name)
                except Exception:
                    log.exception("dataset count listener failed", object=key)
        return count

    def _report_problem(self, watch: _Watch, error: CountError) -> None:
        spec, problem = watch.spec, {"reason": error.reason, "message": error.message}
        if watch.problem != problem:
            watch.problem = problem
            log.warning("cannot count the dataset's samples; trying again every check period", object=spec.key,
                        url=spec.url, reason=error.reason, error=error.message)
        count_key, error_key = self._state_keys(spec.key)
        store = self.ctx.store
        if store.get_state(error_key) == problem:
            return
        # Go's GM reads a report as the whole status: the count last reported stays (none yet: 0)
        if self._report(spec, {"numberOfSamples": store.get_state(count_key) or 0, "error": problem}):
            store.put_state(error_key, problem)

    def _report_count(self, watch: _Watch, count: int) -> None:
        spec = watch.spec
        if watch.problem is not None:
            watch.problem = None
            log.info("dataset samples readable again", object=spec.key, url=spec.url)
        count_key, error_key = self._state_keys(spec.key)
        store = self.ctx.store
        had_error = store.get_state(error_key) is not None
        if store.get_state(count_key) == count and not had_error:
            return
        content: dict[str, Any] = {"numberOfSamples": count}
        if had_error:
            content["error"] = None  # cleared
        if self._report(spec, content):
            store.put_state(count_key, count)
            store.delete_state(error_key)
            log.info("dataset sample count changed", object=spec.key, number_of_samples=count, url=spec.url)

    def _report(self, spec: _Dataset, content: dict[str, Any]) -> bool:
        try:
            self.ctx.report(spec.namespace, REPORT_KIND, spec.name, content)
        except Exception as exc:  # e.g. the outbox is full: the next check period reports again
            log.warning("cannot queue the dataset report; trying again next check period", object=spec.key,
                        error=f"{type(exc).__name__}: {exc}")
            return False
        return True

    @staticmethod
    def _state_keys(key: str) -> tuple[str, str]:
        return f"dataset/{key}/numberOfSamples", f"dataset/{key}/error"
