"""Flows of the job kinds that run to an end (ElasticAIJob, FederatedLearning, Reid, VideoAnalytics) and of the edge
kinds (Dataset, Model). A job's worker is deleted from under it (recreated or replaced), its spec changed (the
worker rebuilt) and it finishes; a status write is answered with a conflict once where the writer re-reads the
object (Dataset, the FederatedLearningJob's aggregation Model)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apis import meta
from apis.resources import MODELS, PODS, SERVICES

from .base import DATASET_LINES, Flow, FlowRun, Step
from .checks import (
    all_of,
    arm_status_conflict,
    conflict_taken,
    delete_owned,
    phase_is,
    processed,
    recreated,
    replaced,
    set_template_annotation,
)

__all__ = ["JOB_FLOWS"]

DELAY = "sandbox.sedna.io/worker-delay-seconds"  # how long a simulated Reid/VideoAnalytics worker works
SDK_QUIRKS = "sandbox.sedna.io/worker-sdk-quirks"


def _eaij_new_args(obj: dict[str, Any]) -> None:
    obj["spec"]["jobArgs"].append("--log_level DEBUG")


def _master_of_generation(generation: int) -> Callable[[FlowRun], bool]:
    """The master pod rebuilt for the job's ``generation`` (the old one deleted by the controller) is running."""
    def check(run: FlowRun) -> bool:
        return any(meta.annotations(p).get("elasticdl.org/job-generation") == str(generation)
                   and (p.get("status") or {}).get("phase") == "Running" for p in run.owned(PODS))
    return check


def _aggregation_model(run: FlowRun) -> str:
    return str(run.obj["spec"]["aggregationWorker"]["model"]["name"])


def _model_metrics_written(run: FlowRun) -> bool:
    """The training workers' reports, relayed by their LCs, wrote the aggregation Model's metrics."""
    return bool((run.client(MODELS).get(_aggregation_model(run)).get("status") or {}).get("metrics"))


def _long_running(obj: dict[str, Any]) -> None:
    """The simulated worker works for ten minutes: long enough to be deleted and replaced."""
    set_template_annotation(DELAY, "600")(obj)


def _finish(obj: dict[str, Any]) -> None:
    """A new template (the running pod is replaced) whose worker ends at once: the job succeeds."""
    set_template_annotation(DELAY, "0.2")(obj)


def _with_service(run: FlowRun) -> bool:
    return any(meta.name(s) == f"{run.name}-videoanalytics" for s in run.owned(SERVICES))


running_job = all_of(phase_is("Running"), lambda run: any(
    (p.get("status") or {}).get("phase") == "Running" for p in run.owned(PODS)))

JOB_FLOWS: dict[str, Flow] = {
    # the master runs long enough for a self-heal and a spec change: the controller deletes it and builds the new
    # generation's
    "ElasticAIJob": Flow("elasticaijob.yaml", phase_is("Running"), {"sandbox.sedna.io/run-seconds": "600"}, steps=(
        Step(None, all_of(recreated(PODS), phase_is("Running")),
             action=delete_owned(PODS, "elasticdl-mnist-training-master")),
        Step(_eaij_new_args, _master_of_generation(2)),
    )),
    # the first report's status write is answered 409: the controller re-reads the Dataset and writes again
    "Dataset": Flow("dataset.yaml", all_of(lambda run: run.status().get("numberOfSamples") == DATASET_LINES,
                                           conflict_taken("datasets")),
                    setup=arm_status_conflict("datasets")),
    "Model": Flow("model.yaml", processed),
    # workers report as a corrected SDK does (``ownerKind: federatedlearningjob``), so their LCs relay the rounds and
    # the aggregation Model's metrics are written (once re-read after a 409)
    "FederatedLearning": Flow(
        "federatedlearningjob.yaml",
        all_of(phase_is("Succeeded"), _model_metrics_written, conflict_taken("models", _aggregation_model)),
        adjust=set_template_annotation(SDK_QUIRKS, "false"),
        setup=arm_status_conflict("models", _aggregation_model)),
    "Reid": Flow("reidjob.yaml", running_job, adjust=_long_running, steps=(
        Step(None, all_of(replaced(), running_job), action=delete_owned(PODS)),
        Step(_finish, phase_is("Succeeded")),
    )),
    "VideoAnalytics": Flow("videoanalyticsjob.yaml", all_of(running_job, _with_service), adjust=_long_running, steps=(
        Step(None, all_of(recreated(SERVICES), running_job),
             action=delete_owned(SERVICES, "pedestrian-tracking-videoanalytics")),
        Step(None, all_of(replaced(), running_job), action=delete_owned(PODS)),
        Step(_finish, phase_is("Succeeded")),
    )),
}
