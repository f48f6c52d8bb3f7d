"""A worker report too large for the API server (issue 25 item 5) is not lost silently: the job gets a condition
saying so and a Warning Event."""

from __future__ import annotations

from learningjob_test_helpers import IL_KIND, condition, il_job, refs_for

from apis import errors
from globalmanager.runtime.reports import is_too_large


def test_a_report_too_large_for_the_api_server_says_so_on_the_job(make_learning_harness):
    # the sandbox's (and kube-apiserver's) object size limit: the condition cannot carry this report
    h = make_learning_harness(IL_KIND, il_job(), *refs_for(IL_KIND))
    h.set_conditions("il", condition("Train", "Waiting"), condition("Train", "Ready"), condition("Train", "Running"))
    h.refresh()
    metrics = {f"metric_{i}": [0.5] * 64 for i in range(20000)}  # an eval with many metrics, about 4 MiB
    h.report("il", "train-node", {"phase": "train", "status": "completed",
                                  "output": {"models": [{"url": "/out/m.pb", "format": "pb", "metrics": metrics}]}})
    last = h.conditions("il")[-1]
    assert (last["stage"], last["type"], last["reason"]) == ("Train", "Failed", "ReportTooLarge")
    assert "train completed report from node train-node" in last["message"] and "not recorded" in last["message"]
    assert ("Warning", "ReportTooLarge", last["message"]) in h.events()


def test_what_counts_as_too_large():
    assert is_too_large(errors.ApiError(413, "RequestEntityTooLarge", "limit is 3145728"))
    assert is_too_large(errors.ApiError(500, "InternalError", "etcdserver: request is too large"))
    assert not is_too_large(errors.ApiError(500, "InternalError", "boom"))


def test_a_too_large_report_resent_every_period_is_shown_once(make_sedna_harness):
    """An edge worker reports on a period (joint inference: its counters). Each of its reports too large for the API
    server must not add another condition (the list would grow with every period, until the object itself could no
    longer be written) nor another Event: the condition already says so."""
    from sedna_test_helpers import NS
    from test_gm_jointinference import MODELS, NAME, service

    from apis import resources as r
    from globalmanager.controllers.jointinference import KIND as JOINT_INFERENCE

    h = make_sedna_harness(JOINT_INFERENCE, r.JOINT_INFERENCE_SERVICES, service(), *MODELS,
                           lc_server="http://lc:9100")
    h.refresh()
    assert h.sync(NAME) is None
    h.refresh()
    huge = {f"counter_{i}": "x" * 256 for i in range(16000)}  # about 4 MiB of ownerInfo
    for _ in range(3):
        h.edge.report("edge-node-1", NS, "JointInferenceService", NAME,
                      {"phase": "inference", "status": "running", "output": {"ownerInfo": huge}})
    shown = [c for c in h.conditions(NAME) if c.get("reason") == "ReportTooLarge"]
    assert len(shown) == 1 and h.conditions(NAME)[-1] is not None
    assert sum(1 for e in h.events() if e[1] == "ReportTooLarge") == 1
