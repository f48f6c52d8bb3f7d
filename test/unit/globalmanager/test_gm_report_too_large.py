"""A worker report too large for the API server (issue 25 item 5) is not lost silently: the job gets a condition
saying so and a Warning Event (``JobController``'s upstream guard + ``runtime.reports.report_too_large``), shown
with a kind declared here whose edge hook writes each report into its job's status, as the real kinds do."""

from __future__ import annotations

from typing import Any

from sedna_test_helpers import NS

from apis import errors
from apis import resources as r
from apis.resources import GroupVersionResource
from globalmanager.runtime import Kind, KindContext, UpstreamMessage
from globalmanager.runtime.reports import is_too_large

NAME = "job"


def _sync_nothing(ctx: KindContext[None], key: str, job: dict[str, Any]) -> None:
    return None


def record_report(ctx: KindContext[None], msg: UpstreamMessage) -> None:
    """The edge hook of the kinds below: the report goes into the job's status (a too large one makes it fail)."""
    job = ctx.get_job(f"{msg.namespace}/{msg.name}")
    if job is None:
        ctx.log_report_dropped(msg, f"no such {ctx.kind}")
        return

    def mutate(current: dict[str, Any]) -> bool:
        current.setdefault("status", {})["lastReport"] = dict(msg.content)
        return True

    ctx.update_job_status(job, mutate)


def reporting_kind(resource: GroupVersionResource) -> Kind[None]:
    return Kind(name=f"Reporting{r.lookup(resource).kind}", resource=resource, sync=_sync_nothing,
                from_edge=record_report)


def job_of(resource: GroupVersionResource, *conditions: dict[str, Any]) -> dict[str, Any]:
    info = r.lookup(resource)
    job: dict[str, Any] = {"apiVersion": info.gvk.api_version, "kind": info.kind,
                           "metadata": {"name": NAME, "namespace": NS}, "spec": {}}
    if conditions:
        job["status"] = {"conditions": list(conditions)}
    return job


def test_a_report_too_large_for_the_api_server_says_so_on_the_job(make_sedna_harness):
    """IL/LL conditions carry a stage: the too-large report fails that stage, so the round moves on."""
    resource = r.INCREMENTAL_LEARNING_JOBS
    before = [{"type": t, "status": "True", "stage": "Train"} for t in ("Waiting", "Ready", "Running")]
    h = make_sedna_harness(reporting_kind(resource), resource, job_of(resource, *before))
    h.refresh()
    # the sandbox's (and kube-apiserver's) object size limit: the status cannot carry this report
    metrics = {f"metric_{i}": [0.5] * 64 for i in range(20000)}  # an eval with many metrics, about 4 MiB
    h.edge.report("train-node", NS, "IncrementalLearningJob", NAME, {
        "phase": "train", "status": "completed",
        "output": {"models": [{"url": "/out/m.pb", "format": "pb", "metrics": metrics}]}})
    conditions = h.conditions(NAME)
    last = conditions[-1]
    assert conditions[:3] == before and "lastReport" not in h.job(NAME)["status"]
    assert (last["stage"], last["type"], last["reason"]) == ("Train", "Failed", "ReportTooLarge")
    assert "train completed report from node train-node" in last["message"] and "not recorded" in last["message"]
    assert ("Warning", "ReportTooLarge", last["message"]) in h.events()


def test_a_report_that_fits_is_written_by_the_kinds_hook(make_sedna_harness):
    resource = r.JOINT_INFERENCE_SERVICES
    h = make_sedna_harness(reporting_kind(resource), resource, job_of(resource))
    h.refresh()
    h.edge.report("edge-node-1", NS, "JointInferenceService", NAME, {"phase": "inference", "status": "running"})
    assert h.job(NAME)["status"]["lastReport"] == {"phase": "inference", "status": "running"}
    assert h.conditions(NAME) == [] and h.events() == []


def test_what_counts_as_too_large():
    assert is_too_large(errors.ApiError(413, "RequestEntityTooLarge", "limit is 3145728"))
    assert is_too_large(errors.ApiError(500, "InternalError", "etcdserver: request is too large"))
    assert not is_too_large(errors.ApiError(500, "InternalError", "boom"))


def test_a_too_large_report_resent_every_period_is_shown_once(make_sedna_harness):
    """An edge worker reports on a period (joint inference: its counters). Each of its reports too large for the API
    server must not add another condition (the list would grow with every period, until the object itself could no
    longer be written) nor another Event: the condition already says so."""
    resource = r.JOINT_INFERENCE_SERVICES
    h = make_sedna_harness(reporting_kind(resource), resource, job_of(resource))
    h.refresh()
    huge = {f"counter_{i}": "x" * 256 for i in range(16000)}  # about 4 MiB of ownerInfo
    for _ in range(3):
        h.edge.report("edge-node-1", NS, "JointInferenceService", NAME,
                      {"phase": "inference", "status": "running", "output": {"ownerInfo": huge}})
    (shown,) = h.conditions(NAME)
    assert (shown["type"], shown["reason"]) == ("ReportTooLarge", "ReportTooLarge") and "stage" not in shown
    assert "inference running report from node edge-node-1" in shown["message"]
    assert sum(1 for e in h.events() if e[1] == "ReportTooLarge") == 1
