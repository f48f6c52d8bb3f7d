"""The simulated workers: one function per Sedna worker, doing what its SDK class does towards the LC.

A play runs in its own thread and returns the container's exit code (a job-like worker: its pod then ends
``Succeeded``/``Failed``), or None for a service that ran until it was stopped (or a worker stopped early).

| kind / worker type | SDK class | reports |
|---|---|---|
| incrementallearningjob train | ``IncrementalLearning.train`` | ``train`` ``completed`` with the saved model(s) |
| incrementallearningjob eval | ``IncrementalLearning.evaluate`` | ``eval`` ``completed``, one result per ``MODEL_URLS`` |
| lifelonglearningjob train / eval | ``LifelongLearning.train`` / ``evaluate`` | ``completed`` with ``<OUTPUT_URL>/index.pkl`` |
| federatedlearningjob train | ``FederatedLearning.train`` | ``running`` per round, ``completed`` at the last |
| federatedlearningjob aggregation | ``AggregationServer`` | nothing; exits once the job's trainers ended |
| jointinferenceservice edge | ``JointInference`` (``LCReporter``) | ``inference`` with ``ownerInfo`` every period |
| reidjob, videoanalyticsjob | ``multi_edge_inference`` | nothing; exits after the delay |
| any other (JI cloud, IL/LL inference, FE, object search/tracking) | | nothing; runs until deleted |

Any worker whose env has ``MODEL_HOT_UPDATE=true`` also runs ``hot_update`` (``ModelLoadingThread``).
"""

from __future__ import annotations

import functools
import posixpath
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from .mounts import PodMounts
from .objectstore import UploadError, upload
from .sdk import (
    COMPLETED,
    FAILED,
    RUNNING,
    Identity,
    default_model_name,
    model_info,
    reporter_owner_info,
    sdk_time,
    task_report,
)
from .steering import FAIL_REPORT, Steering
from .workerpod import WorkerPod, worker_labels

__all__ = ["Play", "WorkerContext", "default_eval_metrics", "default_fl_metrics", "hot_update", "play_for"]

TERMINAL_PHASES = ("Succeeded", "Failed")


@dataclass
class WorkerContext:
    """What a play works with. ``report`` posts to the node's LC (the SDK's retries included)."""

    pod: WorkerPod
    steering: Steering
    ident: Identity
    stop: threading.Event
    report: Callable[[dict[str, Any]], bool]
    mounts: PodMounts  # the pod's hostPath volumes, opened when it started
    log: Any
    job_pods: Callable[[], list[Mapping[str, Any]]] = list
    poke: threading.Event = field(default_factory=threading.Event)  # set when a pod of the same job changed

    def sleep(self, seconds: float) -> bool:
        """Wait; False when the worker was stopped meanwhile."""
        return not self.stop.wait(seconds)

    def write(self, container_path: str, data: bytes) -> None:
        """Save a file as the worker does: through the pod's hostPath volume holding the path (on its node's
        filesystem), in S3 for an ``s3://`` URL (the SDK's ``FileOps.upload``)."""
        if container_path.startswith("s3://"):
            try:
                upload(self.pod.env, container_path, data)
            except UploadError as exc:
                self.log.warning("cannot upload the worker's file", url=container_path, error=str(exc))
        elif "://" in container_path:
            self.log.warning("remote storage other than S3 is not simulated; the file is reported, not uploaded",
                             url=container_path)
        elif self.pod.host_path(container_path) is None:
            self.log.debug("file is pod-private, not written", path=container_path)
        elif not self.mounts.mounted(container_path):
            self.log.warning("the volume holding the file is not mounted (no rootfs known for the node?); file not "
                             "written", path=container_path, host_path=self.pod.host_path(container_path))
        else:
            try:
                self.mounts.write(container_path, data)
            except (OSError, ValueError) as exc:
                self.log.warning("cannot write the worker's file", path=container_path, error=str(exc))

    def failure(self, stage: str, reports: bool = True) -> int | None:
        """The exit code when the worker is steered to fail (after a ``failed`` report if asked), else None."""
        fail = self.steering.fail
        if fail is None:
            return None
        if fail == FAIL_REPORT and reports:
            self.report(task_report(self.ident, FAILED, kind=stage))
        self.log.info("worker fails as steered", mode=fail, exit_code=self.steering.exit_code)
        return self.steering.exit_code


Play = Callable[[WorkerContext], "int | None"]


def default_eval_metrics(index: int) -> dict[str, list[float]]:
    """Each later model scores 0.2 lower: the newly trained model (first in ``MODEL_URLS``) wins."""
    value = round(max(0.9 - 0.2 * index, 0.0), 6)
    return {"precision": [value], "recall": [value]}


def default_fl_metrics(round_number: int) -> dict[str, list[float]]:
    return {"accuracy": [round(min(0.5 + 0.1 * round_number, 0.99), 6)],
            "loss": [round(max(0.5 - 0.1 * round_number, 0.01), 6)]}


def _job(stage: str, reports: bool = True) -> Callable[[Callable[[WorkerContext], int]], Play]:
    """A job-like worker: works for the delay, then fails if steered to (a ``failed`` report for ``stage`` if
    ``reports``), else runs ``body`` and exits with its code; None when stopped meanwhile."""

    def wrap(body: Callable[[WorkerContext], int]) -> Play:
        @functools.wraps(body)
        def play(ctx: WorkerContext) -> int | None:
            if not ctx.sleep(ctx.steering.delay):
                return None
            code = ctx.failure(stage, reports)
            return body(ctx) if code is None else code

        return play

    return wrap


def _models(ctx: WorkerContext, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The results with the steered ``model-info`` fields added to each model."""
    extra = ctx.steering.model_info
    return [{**result, **extra} for result in results] if extra else results


def _model_file(ctx: WorkerContext, **extra: object) -> bytes:
    return orjson.dumps({"simulated": True, "kind": ctx.pod.kind, "job": ctx.ident.owner_name,
                         "namespace": ctx.ident.namespace, "worker": ctx.ident.worker_name, "pod": ctx.pod.name,
                         "savedAt": sdk_time(), **extra})


@_job("train")
def il_train(ctx: WorkerContext) -> int:
    model_url = ctx.pod.env.get("MODEL_URL")
    if not model_url:
        ctx.log.error("MODEL_URL is not set: the SDK's IncrementalLearning crashes")
        return 1
    model = posixpath.join(model_url, default_model_name(ctx.pod, ctx.ident))
    ctx.write(model, _model_file(ctx))
    results = model_info(ctx.ident, model, ctx.steering.metrics_at(0))
    ctx.report(task_report(ctx.ident, COMPLETED, _models(ctx, results)))
    return 0


@_job("eval")
def il_eval(ctx: WorkerContext) -> int:
    urls = ctx.pod.getenv("MODEL_URLS")
    models = urls.split(";") if urls else ([ctx.pod.env["MODEL_URL"]] if ctx.pod.env.get("MODEL_URL") else [])
    results = []
    for index, url in enumerate(m for m in models if m.strip()):
        metrics = ctx.steering.metrics_at(index) or default_eval_metrics(index)
        results.append(model_info(ctx.ident, url, metrics)[0])
    ctx.report(task_report(ctx.ident, COMPLETED, _models(ctx, results), kind="eval"))
    return 0


def _kb_index(ctx: WorkerContext) -> str:
    return posixpath.join(ctx.pod.getenv("OUTPUT_URL", "/tmp"), "index.pkl")


@_job("train")
def ll_train(ctx: WorkerContext) -> int:
    index = _kb_index(ctx)
    ctx.write(index, _model_file(ctx, knowledgeBaseIndex=True))
    ctx.report(task_report(ctx.ident, COMPLETED, _models(ctx, model_info(ctx.ident, index))))
    return 0


@_job("eval")
def ll_eval(ctx: WorkerContext) -> int:
    index = _kb_index(ctx)
    ctx.write(index, _model_file(ctx, knowledgeBaseIndex=True, evaluated=True))
    metrics = ctx.steering.metrics_at(0) or default_eval_metrics(0)
    ctx.report(task_report(ctx.ident, COMPLETED, _models(ctx, model_info(ctx.ident, index, metrics)), kind="eval"))
    return 0


def fl_train(ctx: WorkerContext) -> int | None:
    model = posixpath.join(ctx.pod.env.get("MODEL_URL") or "/tmp", default_model_name(ctx.pod, ctx.ident))
    rounds = ctx.steering.rounds
    for round_number in range(1, rounds + 1):
        start = sdk_time()
        if not ctx.sleep(ctx.steering.delay):
            return None
        if round_number == 1:
            code = ctx.failure("train")
            if code is not None:
                return code
        task_info = {"currentRound": round_number, "sampleCount": ctx.steering.sample_count, "startTime": start,
                     "updateTime": sdk_time()}
        ctx.write(model, _model_file(ctx, round=round_number))
        metrics = ctx.steering.metrics_at(round_number - 1) or default_fl_metrics(round_number)
        status = COMPLETED if round_number == rounds else RUNNING
        ctx.report(task_report(ctx.ident, status, _models(ctx, model_info(ctx.ident, model, metrics)), "train",
                               task_info))
    return 0


def fl_aggregation(ctx: WorkerContext) -> int | None:
    """Serves until every training pod of its job ended (the SDK's server shuts down after the last round)."""
    if ctx.steering.fail is not None:
        return ctx.failure("train", reports=False) if ctx.sleep(ctx.steering.delay) else None
    while not ctx.stop.is_set():
        ctx.poke.clear()
        trainers = [p for p in ctx.job_pods() if (worker_labels(p) or ("", ""))[1] == "train"]
        if trainers and all((p.get("status") or {}).get("phase") in TERMINAL_PHASES for p in trainers):
            return 0
        ctx.poke.wait()
    return None


def ji_edge(ctx: WorkerContext) -> int | None:
    """``LCReporter``: every period, if inferences happened, the cumulative counters. A report given up (all
    attempts failed) ends the reporter for good, as the SDK's thread dies of the uncaught ``RetryError``; the
    service itself keeps running."""
    period = ctx.steering.period or _int_env(ctx, "LC_PERIOD", 30)
    message = {"name": ctx.ident.worker_name, "namespace": ctx.pod.env.get("NAMESPACE", ""),
               "ownerName": ctx.ident.owner_name, "ownerKind": ctx.ident.owner_kind, "kind": "inference",
               "results": []}
    inferences = hard_examples = 0
    while True:
        start = sdk_time()
        if not ctx.sleep(period):
            return None
        inferences += ctx.steering.inferences_per_period
        hard_examples += ctx.steering.hard_examples_per_period
        if ctx.steering.inferences_per_period == 0:
            continue
        if not ctx.report({**message, "ownerInfo": reporter_owner_info(start, sdk_time(), inferences,
                                                                       hard_examples)}) and not ctx.stop.is_set():
            ctx.log.error("joint-inference reporter died after a report was given up, as the SDK's LCReporter "
                          "thread does; the service runs on without reporting")
            ctx.stop.wait()
            return None


@_job("", reports=False)
def silent_job(ctx: WorkerContext) -> int:
    """A job whose SDK never reports to the LC."""
    return 0


def service(ctx: WorkerContext) -> int | None:
    if ctx.steering.fail is not None:
        ctx.log.warning("worker-fail applies to job-like workers and hot updates; ignored for a service")
    ctx.stop.wait()
    return None


def hot_update(ctx: WorkerContext) -> None:
    """``ModelLoadingThread``: every ``MODEL_POLL_PERIOD_SECONDS`` read ``MODEL_HOT_UPDATE_CONFIG`` through the
    pod's mount (the directory it found when it started); a new ``model_update_time`` whose ``model_path`` exists →
    ``deploy`` ``completed`` (``failed`` when steered to fail).

    Before the first deploy the LC has written no config: the SDK then logs ``fail to parse model hot update
    config`` at error level every period (it copies the absent file into an empty one). That is the normal wait of a
    healthy job, logged here once at info level. A config that is there and cannot be parsed, or that the node has
    but the pod cannot see (its directory replaced after the pod started), is logged at error level, once when that
    state begins."""
    conf = ctx.pod.getenv("MODEL_HOT_UPDATE_CONFIG")
    if not conf:
        ctx.log.error("MODEL_HOT_UPDATE_CONFIG is unset: no hot update, as the SDK")
        return
    period = ctx.steering.period or _int_env(ctx, "MODEL_POLL_PERIOD_SECONDS", 60)
    if period < 1 and ctx.steering.period is None:
        period = 60
    version = "latest"
    state = ""  # the problem logged last ("" while the config is read), so each is logged once when it begins
    while ctx.sleep(period):
        data = ctx.mounts.read(conf)
        try:
            if data is None:
                if not ctx.mounts.hidden_on_node(conf):
                    if state != "absent":
                        ctx.log.info("no model hot update config yet: the LC writes it at the first deploy", path=conf)
                    state = "absent"
                    continue
                raise ValueError("on the node, but not visible through the pod's mount (its directory was replaced "
                                 "after the pod started)")
            model_msg = orjson.loads(data)["model_config"]
            latest = str(model_msg["model_update_time"])  # as the SDK compares versions
            model_path = str(model_msg["model_path"])
        except (orjson.JSONDecodeError, ValueError, KeyError, TypeError) as exc:
            if state != "unreadable":
                ctx.log.error("fail to parse model hot update config", path=conf, error=str(exc))
            state = "unreadable"
            continue
        state = ""
        if not ctx.mounts.is_file(model_path) or latest == version:
            continue
        version = latest
        status = FAILED if ctx.steering.fail is not None else COMPLETED
        ctx.log.info("hot update of the model", version=version, status=status)
        ctx.report(task_report(ctx.ident, status, kind="deploy"))


def _int_env(ctx: WorkerContext, variable: str, default: int) -> int:
    raw = ctx.pod.getenv(variable, str(default))
    try:
        return int(raw)
    except ValueError:
        ctx.log.warning("not an integer; using the default", variable=variable, value=raw, default=default)
        return default


_PLAYS: dict[tuple[str, str], Play] = {
    ("incrementallearningjob", "train"): il_train,
    ("incrementallearningjob", "eval"): il_eval,
    ("lifelonglearningjob", "train"): ll_train,
    ("lifelonglearningjob", "eval"): ll_eval,
    ("federatedlearningjob", "train"): fl_train,
    ("federatedlearningjob", "aggregation"): fl_aggregation,
    ("jointinferenceservice", "edge"): ji_edge,
}
_KIND_PLAYS: dict[str, Play] = {"reidjob": silent_job, "videoanalyticsjob": silent_job}


def play_for(pod: WorkerPod) -> Play:
    return _PLAYS.get((pod.kind, pod.worker_type)) or _KIND_PLAYS.get(pod.kind) or service
