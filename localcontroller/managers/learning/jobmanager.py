"""The skeleton of the incremental and lifelong learning managers (Go ``startJob``, ``handleData``,
``monitorWorker``, ``Insert``, ``Delete``).

Guarantees:

* Steps of one job never run concurrently; they run on ``workers`` threads of a reconcile runner
  (``reconcile.Controller``, ``self.loop``) on an injectable clock: at once when the GM sends the job (again) or one of its Dataset's counts or Models changes,
  every ``checkPeriodSeconds`` while the train trigger is evaluated (Go ignores it and polls every 10 s), and
  ``RETRY_SECONDS`` after something the step needed was missing or a file could not be written.
* A step first splits the Dataset's new samples into the round state (SQLite), then acts on the job's current stage
  through the subclass's handler, **once per stage instance**: a report and the state recording it are written in
  one SQLite transaction (``Store.add_report(state=...)``), so a restart at any point neither loses nor repeats it;
  decisions whose side effects come before the report are stored first (``pending``) and finished the same way.
* A missing prerequisite (Dataset not counted yet, Model not received) is logged once and retried; a stage that
  cannot proceed (bad trigger spec, no trained model, copy failed) is reported as ``<Stage>/Failed`` with a
  ``message``; a bad spec at ``Train/Waiting`` is reported once per problem (a report per check would loop with the
  GM's ``Failed → Train/Waiting``).
* Worker reports for a job this node holds are relayed as ``{phase: kind, status, output: {models, ownerInfo}}``.
* ``delete`` waits for a running step, drops the job's state and calls ``on_delete``, telling a job deleted for good
  (``metadata.deletionTimestamp`` set: our GM sets it on the ``delete`` of a deleted job) from one only taken off this
  node (a ``delete`` when the job's stage moves on to other nodes, or a Go GM's ``delete``, which never tells).
"""

from __future__ import annotations

import posixpath
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Protocol, runtime_checkable

import structlog

from apis.sedna.v1alpha1.common import Stage, StageConditionType
from localcontroller.storage import Storage, StorageError, StoragePool, credential_of, url_scheme
from localcontroller.trigger import AndTrigger, new_trigger
from localcontroller.worker import WorkerMessage
from reconcile import Controller, Result
from workqueue.clock import REAL_CLOCK, Clock

from ..base import ManagerContext
from ..dataset import DatasetSamples
from .conditions import CurrentStage, current_stage
from .datafiles import DataFiles, write_samples
from .errors import NotReady, StageFailed
from .places import JobPlaces
from .roundstate import RoundState

__all__ = ["RETRY_SECONDS", "Handler", "JobManager", "JobRecord", "NotReady", "StageFailed", "upstream_message"]

RETRY_SECONDS = 10.0
TRAIN_ACTION = "train"


@runtime_checkable
class ModelLookup(Protocol):
    """What a job manager needs of the model manager: the Model ``namespace/name`` as the GM last sent it."""

    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None: ...


def upstream_message(phase: str, status: str, input_section: Mapping[str, Any] | None = None,
                     message: str = "", reason: str = "") -> dict[str, Any]:
    """Go's ``UpstreamMessage`` as it marshals (``input`` omitted when absent, its empty fields omitted, ``output``
    always, here ``null``), plus our optional ``message`` (why, for people) and ``reason`` (a CamelCase word for the
    GM's Event), which a Go GM ignores."""
    content: dict[str, Any] = {"phase": phase, "status": status}
    if input_section is not None:
        content["input"] = {k: v for k, v in input_section.items() if v}
    content["output"] = None
    if message:
        content["message"] = message
    if reason:
        content["reason"] = reason
    return content


@dataclass
class JobRecord:
    """One job this node holds. ``latest`` is the job as the GM last sent it (read-only); ``obj`` the copy a step
    works on (``latest`` when the step began, so one step sees one version); ``state`` is changed only by a step
    holding ``lock``."""

    namespace: str
    name: str
    uid: str
    latest: Mapping[str, Any] = field(repr=False)  # may carry the sedna.io/credential annotation
    state: RoundState = field(repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    deleted: bool = False
    problem: str = ""  # the problem last logged, to log each once
    logged: dict[str, Any] = field(default_factory=dict, repr=False)  # topic → the state last logged (log_change)
    train_checked: tuple[str, float] | None = None  # (stage instance, clock time) of the last trigger evaluation
    model_wait: tuple[str, float] | None = None  # (stage instance, clock time) since when it waits for a trained model
    dataset: DatasetSamples | None = field(default=None, repr=False)  # as last read (format, header, URL)
    obj: Mapping[str, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.obj = self.latest

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def spec(self) -> Mapping[str, Any]:
        return self.obj.get("spec") or {}


Handler = Callable[[JobRecord, CurrentStage], "float | None"]
"""Acts on a stage; returns seconds until the job's next step (``None``: only when something changes)."""


class JobManager:
    """Base of ``IncrementalLearningManager`` and ``LifelongLearningManager``: subclasses set ``kind`` and
    ``report_kind`` and implement ``handler`` (and ``train_models``)."""

    kind: ClassVar[str]
    report_kind: ClassVar[str]  # the kind in report headers, as Go's LC writes it (the job's Kind)

    def __init__(self, ctx: ManagerContext, clock: Clock | None = None,
                 wall: Callable[[], datetime] | None = None, workers: int = 2) -> None:
        self.ctx = ctx
        self.clock = clock or REAL_CLOCK
        self.wall = wall or datetime.now  # local time, for trigger windows and the hot-update version
        self.log = structlog.get_logger(f"sedna-lc.{self.kind}", kind=self.kind)
        self.storages = StoragePool(ctx.config.rootfs)
        self.loop = Controller(self.kind, self._step, workers=workers, clock=self.clock, log=self.log)
        self._lock = threading.Lock()
        self._jobs: dict[str, JobRecord] = {}

    # -- Manager ----------------------------------------------------------------------------------------------------
    def insert(self, obj: Mapping[str, Any]) -> None:
        md = obj.get("metadata") or {}
        namespace, name, uid = md.get("namespace") or "", md.get("name") or "", md.get("uid") or ""
        key = f"{namespace}/{name}"
        with self._lock:
            rec = self._jobs.get(key)
            replaced = rec if rec is not None and rec.uid != uid else None
            if rec is None or replaced is not None:
                state = RoundState.from_dict(self.ctx.store.get_state(self._state_key(namespace, name)), uid)
                rec = JobRecord(namespace, name, uid, obj, state)
                self._jobs[key] = rec
                created = True
            else:
                rec.latest = obj
                created = False
        if replaced is not None:
            with replaced.lock:
                replaced.deleted = True
            self.log.info("job was recreated; starting afresh", object=key)
        if created:
            self.log.info("job started", object=key, round=rec.state.round)
            self._create_output_dirs(rec)
        self.loop.enqueue(key)

    def delete(self, obj: Mapping[str, Any]) -> None:
        md = obj.get("metadata") or {}
        namespace, name = md.get("namespace") or "", md.get("name") or ""
        gone = bool(md.get("deletionTimestamp"))
        with self._lock:
            rec = self._jobs.pop(f"{namespace}/{name}", None)
        if rec is not None:
            with rec.lock:
                rec.deleted = True
                rec.obj = rec.latest
                self.on_delete(f"{namespace}/{name}", [obj, rec.latest], gone)
        else:
            self.on_delete(f"{namespace}/{name}", [obj], gone)
        self.ctx.store.delete_state(self._state_key(namespace, name))
        self.log.info("job stopped", object=f"{namespace}/{name}", deleted=gone)

    def add_worker_message(self, message: WorkerMessage) -> None:
        key = f"{message.namespace}/{message.owner_name}"
        with self._lock:
            known = key in self._jobs
        if not known:
            self.log.info("dropped a worker report for a job this node does not hold", object=key,
                          worker=message.name, phase=message.kind, status=message.status)
            return
        content = {"phase": message.kind, "status": message.status,
                   "output": {"models": message.results or None, "ownerInfo": message.owner_info or None}}
        self.ctx.report(message.namespace, self.report_kind, message.owner_name, content)
        self.log.info("relayed a worker report", object=key, worker=message.name, phase=message.kind,
                      status=message.status)

    def start(self, stop: threading.Event) -> None:
        for kind in ("dataset", "model"):
            other = self.ctx.managers.get(kind)
            subscribe = getattr(other, "subscribe", None)
            if subscribe is not None:
                subscribe(self._wake_namespace)
        threading.Thread(target=self.loop.run, args=(stop,), name=f"{self.kind}-run", daemon=True).start()

    # -- for tests and operators ------------------------------------------------------------------------------------
    def record(self, namespace: str, name: str) -> JobRecord | None:
        with self._lock:
            return self._jobs.get(f"{namespace}/{name}")

    def sync(self, key: str) -> float | None:
        """One step of job ``key`` (see the module doc); returns seconds until its next step, if any is due."""
        with self._lock:
            rec = self._jobs.get(key)
        if rec is None:
            return None
        with rec.lock:
            if rec.deleted:
                return None
            rec.obj = rec.latest
            self._absorb(rec)
            current = current_stage(rec.obj)
            if current is None:
                return None
            found = self.handler(rec, current)
            if found is None:
                return None
            action, handle = found
            if rec.state.answered.get(action) == current.instance:
                return None
            try:
                problem = self.job_problem(rec)
                if problem:
                    raise StageFailed(problem)
                delay = handle(rec, current)
            except NotReady as exc:
                self._note(rec, "waiting", str(exc))
                return RETRY_SECONDS
            except StorageError as exc:
                self._note(rec, "storage failed; trying again", str(exc), warning=True)
                return RETRY_SECONDS
            except StageFailed as exc:
                self._fail(rec, current, action, exc)
                return None
            rec.problem = ""
            return delay

    # -- for subclasses ---------------------------------------------------------------------------------------------
    def handler(self, rec: JobRecord, current: CurrentStage) -> tuple[str, Handler] | None:
        """The action (a name, answered once per stage instance) and handler for ``current``, if this manager acts."""
        raise NotImplementedError

    def train_models(self, rec: JobRecord, round_number: int) -> list[dict[str, Any]] | None:
        """``input.models`` of a Train/Ready report (``None``: no models, as LL)."""
        return None

    def on_delete(self, key: str, copies: list[Mapping[str, Any]], gone: bool) -> None:
        """Called on every ``delete`` of job ``key`` (its lock held when this node held it): ``copies`` are the job
        as the ``delete`` carried it, then as this node held it; ``gone``: the job is deleted for good (the GM set
        ``metadata.deletionTimestamp``), not only taken off this node."""

    def job_problem(self, rec: JobRecord) -> str:
        """Why the job's spec cannot be acted on (``""`` if it can)."""
        out = rec.spec.get("outputDir")
        if not isinstance(out, str) or not out:
            return "spec.outputDir is empty"
        try:
            url_scheme(out)
        except StorageError as exc:
            return f"spec.outputDir: {exc.problem}"
        try:
            self.storages.for_object(rec.obj)
        except ValueError as exc:
            return f"the job's credential: {exc}"
        if not self.dataset_name(rec):
            return "spec.dataset.name is empty"
        return ""

    def model_urls(self, rec: JobRecord) -> list[str]:
        """The URLs of the job's Models: their directories are the job's places besides ``outputDir``."""
        return []

    def confine(self, rec: JobRecord, models: Sequence[Mapping[str, Any]], what: str) -> None:
        """``PathOutsideJob`` unless every one of ``models`` (a worker reported them) lies in the job's places."""
        config = self.ctx.config
        JobPlaces.of(config.rootfs, config.db_path, self.output_dir(rec), self.model_urls(rec)).confine(models, what)

    def job_storage(self, rec: JobRecord) -> Storage:
        return self.storages.for_object(rec.obj)

    def output_dir(self, rec: JobRecord) -> str:
        """``spec.outputDir`` without a trailing ``/`` (a host path cleaned, as Go's ``filepath.Join`` does)."""
        out = str(rec.spec.get("outputDir") or "")
        if url_scheme(out) == "":
            return "/" + posixpath.normpath(out).strip("/") if out.strip("/") else ""
        return out.rstrip("/")

    def dataset_name(self, rec: JobRecord) -> str:
        return str((rec.spec.get("dataset") or {}).get("name") or "")

    def model_object(self, rec: JobRecord, name: str) -> Mapping[str, Any]:
        """The Model ``name`` of the job's namespace as the GM sent it; ``NotReady`` until it arrives."""
        models = self.ctx.managers.get("model")
        obj = models.get(rec.namespace, name) if isinstance(models, ModelLookup) else None
        if obj is None:
            raise NotReady(f"Model {rec.namespace}/{name} has not been received from the GM")
        return obj

    def model_storage(self, rec: JobRecord, model: Mapping[str, Any] | None) -> Storage:
        """The storage for a Model's URL: its own credential, else the job's."""
        if credential_of(model) is not None:
            try:
                return self.storages.for_object(model)
            except ValueError as exc:
                raise StageFailed(f"Model {(model or {}).get('metadata', {}).get('name')}'s credential: {exc}") \
                    from None
        return self.job_storage(rec)

    def require_dataset(self, rec: JobRecord) -> DatasetSamples:
        """The Dataset (as last read); ``NotReady`` until the dataset manager has counted it."""
        manager = self.ctx.managers.get("dataset")
        name = self.dataset_name(rec)
        if manager is None or manager.count(rec.namespace, name) is None:  # type: ignore[attr-defined]
            raise NotReady(f"Dataset {rec.namespace}/{name} has not been counted yet (see the dataset manager)")
        if rec.dataset is None:
            try:
                rec.dataset = manager.read(rec.namespace, name)  # type: ignore[attr-defined]
            except (StorageError, ValueError, OSError) as exc:
                raise NotReady(f"Dataset {rec.namespace}/{name} cannot be read: {exc}") from None
        return rec.dataset

    def write_data(self, rec: JobRecord, which: str, round_number: int, samples: list[str]) -> DataFiles:
        """Write ``samples`` to ``<out>/data/<which>/<round>/``; ``StorageError`` names a file not written."""
        dataset = self.require_dataset(rec)
        try:
            return write_samples(self.job_storage(rec), f"{self.output_dir(rec)}/data/{which}/{round_number}",
                                 samples, dataset)
        except ValueError as exc:
            raise StageFailed(str(exc)) from None

    def trigger(self, rec: JobRecord, spec: object, field_path: str) -> AndTrigger:
        """The trigger at ``field_path`` of the spec; ``StageFailed`` naming what is wrong with it."""
        try:
            return new_trigger(spec if isinstance(spec, Mapping) else None, clock=self.wall)
        except ValueError as exc:
            raise StageFailed(f"{field_path}: {exc}") from None

    def train(self, rec: JobRecord, current: CurrentStage) -> float | None:
        """Train/Waiting (Go ``trainTask``): evaluate the train trigger every ``checkPeriodSeconds``; when it fires
        start a round: write the train data and report Train/Ready."""
        trigger = self.trigger(rec, (rec.spec.get("trainSpec") or {}).get("trigger"), "spec.trainSpec.trigger")
        period = trigger.check_period_seconds
        now = self.clock.now()
        if rec.train_checked is not None and rec.train_checked[0] == current.instance:
            due = rec.train_checked[1] + period
            if now < due:
                return due - now
        self.require_dataset(rec)
        round_number = rec.state.round + 1
        models = self.train_models(rec, round_number)
        stats = {"num_of_samples": len(rec.state.train_samples)}
        fired = trigger.trigger(stats)
        rec.train_checked = (current.instance, now)
        if not fired:
            self.log_change(rec, "train-trigger", stats, "train trigger did not fire", level="debug", **stats)
            return period
        try:
            files = self.write_data(rec, "train", round_number, rec.state.train_samples)
        except StorageError:
            rec.train_checked = None
            raise
        input_section = {"models": models, "dataURL": files.data_url, "dataIndexURL": files.index_url,
                         "outputDir": f"{self.output_dir(rec)}/train/{round_number}"}

        def start_round(state: RoundState) -> None:
            state.round = round_number
            state.train_samples = []
            state.reported_problem = ""

        self.answer(rec, current, TRAIN_ACTION, upstream_message(Stage.TRAIN, StageConditionType.READY, input_section),
                    start_round)
        self.log.info("train trigger fired: round started", object=rec.key, round=round_number, **stats)
        return None

    def answer(self, rec: JobRecord, current: CurrentStage, action: str, content: dict[str, Any],
               change: Callable[[RoundState], None] | None = None) -> None:
        """Report ``content`` and record that ``action`` answered ``current``, in one transaction."""
        state = rec.state.copy()
        state.answered[action] = current.instance
        state.pending.pop(action, None)
        if change is not None:
            change(state)
        self.ctx.report(rec.namespace, self.report_kind, rec.name, content,
                        state=(self._state_key(rec.namespace, rec.name), state.to_dict()))
        rec.state = state
        self.log.info("reported", object=rec.key, phase=content["phase"], status=content["status"],
                      round=state.round, message=content.get("message", ""))

    def log_change(self, rec: JobRecord, topic: str, state: object, event: str, level: str = "info",
                   **fields: Any) -> None:
        """Log ``event`` when the job's ``state`` of ``topic`` differs from the one last logged: a condition that
        holds across checks is logged once, when it starts to hold, not on every check."""
        if topic in rec.logged and rec.logged[topic] == state:
            return
        rec.logged[topic] = state
        getattr(self.log, level)(event, object=rec.key, **fields)

    def save(self, rec: JobRecord, change: Callable[[RoundState], None]) -> None:
        """Store a state change that goes with no report (a pending decision, a hot update done)."""
        state = rec.state.copy()
        change(state)
        self.ctx.store.put_state(self._state_key(rec.namespace, rec.name), state.to_dict())
        rec.state = state

    # -- internals --------------------------------------------------------------------------------------------------
    def _state_key(self, namespace: str, name: str) -> str:
        return f"{self.kind}/{namespace}/{name}/round"

    def _step(self, key: str) -> Result:
        """``sync`` for the runner: its delay becomes ``requeue_after``; a step that raised is logged (the error and
        its traceback as text: never the frames' locals, they hold objects with credentials) and tried again after
        ``RETRY_SECONDS``, as Go's fixed retry."""
        try:
            delay = self.sync(key)
        except Exception as exc:
            self.log.error("a job step failed; trying again", object=key, retry_seconds=RETRY_SECONDS,
                           error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
            delay = RETRY_SECONDS
        return Result(requeue_after=max(delay, 0.0)) if delay is not None else Result()

    def _wake_namespace(self, namespace: str, name: str) -> None:
        with self._lock:
            keys = [rec.key for rec in self._jobs.values() if rec.namespace == namespace]
        for key in keys:
            self.loop.enqueue(key)

    def _note(self, rec: JobRecord, what: str, problem: str, warning: bool = False) -> None:
        if rec.problem == problem:
            return
        rec.problem = problem
        (self.log.warning if warning else self.log.info)(what, object=rec.key, reason=problem,
                                                         retry_seconds=RETRY_SECONDS)

    def _fail(self, rec: JobRecord, current: CurrentStage, action: str, exc: StageFailed) -> None:
        if action == TRAIN_ACTION:
            if rec.state.reported_problem == exc.message:
                self._note(rec, "the job cannot start a round", exc.message, warning=True)
                return
            content = upstream_message(current.stage, StageConditionType.FAILED, exc.input, exc.message, exc.reason)
            state = rec.state.copy()
            state.reported_problem = exc.message
            self.ctx.report(rec.namespace, self.report_kind, rec.name, content,
                            state=(self._state_key(rec.namespace, rec.name), state.to_dict()))
            rec.state = state
        else:
            self.answer(rec, current, action,
                        upstream_message(current.stage, StageConditionType.FAILED, exc.input, exc.message, exc.reason))
        rec.problem = exc.message
        self.log.error("stage failed; reported", object=rec.key, stage=current.stage, reason=exc.message)

    def _absorb(self, rec: JobRecord) -> None:
        """Split the Dataset's new samples by ``trainProb`` into the round state."""
        manager = self.ctx.managers.get("dataset")
        name = self.dataset_name(rec)
        count = manager.count(rec.namespace, name) if manager is not None and name else None  # type: ignore[attr-defined]
        if count is None or count <= rec.state.previous_numbers:
            return
        try:
            dataset = manager.read(rec.namespace, name)  # type: ignore[union-attr]
        except (StorageError, ValueError, OSError) as exc:
            self._note(rec, "cannot read the dataset's new samples", str(exc), warning=True)
            return
        rec.dataset = dataset
        if len(dataset.samples) <= rec.state.previous_numbers:
            return
        state = rec.state.copy()
        train, evaluation = state.absorb(dataset.samples, _train_prob(rec.spec))
        self.ctx.store.put_state(self._state_key(rec.namespace, rec.name), state.to_dict())
        rec.state = state
        self.log.info("new samples", object=rec.key, train=train, eval=evaluation,
                      train_samples=len(state.train_samples), eval_versions=len(state.eval_versions))

    def _create_output_dirs(self, rec: JobRecord) -> None:
        """Go ``createOutputDir``: ``<out>/{data/train,data/eval,train,eval}`` for a host-path output dir."""
        if self.job_problem(rec) or url_scheme(str(rec.spec.get("outputDir"))) != "":
            return
        storage, out = self.storages.get(None), self.output_dir(rec)
        try:
            for sub in ("data/train", "data/eval", "train", "eval"):
                storage.local_path(f"{out}/{sub}").mkdir(parents=True, exist_ok=True)
        except (StorageError, OSError) as exc:
            self.log.warning("cannot create the job's output directories", object=rec.key, error=str(exc))


def _train_prob(spec: Mapping[str, Any]) -> float:
    value = (spec.get("dataset") or {}).get("trainProb")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return min(max(float(value), 0.0), 1.0)
