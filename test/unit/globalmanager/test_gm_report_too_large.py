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
