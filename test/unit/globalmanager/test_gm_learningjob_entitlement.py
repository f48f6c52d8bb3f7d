"""Which node's reports about an IL/LL job count (issue 38 item 1, NodeRestriction for the edge): a worker's report
only from a node that worker runs, ran or is placed on; the LC's own only from the job's resident node (its Dataset's)
or a node of one of its workers. Anything else is refused (``NotEntitled``), counted by the edge link, and changes
nothing."""

from __future__ import annotations

from typing import Any

import pytest
from learningjob_test_helpers import (
    IL_KIND,
    LL_KIND,
    TRAIN_READY,
    LearningHarness,
    condition,
    dispatch,
    il_job,
    ll_job,
)
from sedna_test_helpers import NS, dataset, model

from apis import meta
from apis import resources as r
from globalmanager.runtime.edge import NotEntitled, UpstreamMessage

DB_MODEL = {"phase": "train", "status": "completed",
            "output": {"models": [{"format": "pb", "url": "/var/lib/sedna/database.db"}], "ownerInfo": None}}
TRAIN_RUNNING = (condition("Train", "Waiting"), condition("Train", "Ready", TRAIN_READY),
                 condition("Train", "Starting"), condition("Train", "Running"))


def unplaced(job: dict[str, Any]) -> dict[str, Any]:
    """The job with stage templates that name no node (the scheduler places the workers)."""
    for stage_spec in ("trainSpec", "evalSpec", "deploySpec"):
        job["spec"][stage_spec]["template"]["spec"].pop("nodeName")
    return job


@pytest.fixture
def harness(make_learning_harness):
    def make(kind: str = IL_KIND) -> LearningHarness:
        job = unplaced(il_job() if kind == IL_KIND else ll_job())
        refs = (model("initial-model", "/models/initial.pb"), model("deploy-model", "/models/deploy.pb"),
                dataset("ds", "/data/train.txt", "edge-node-1")) if kind == IL_KIND else (
                dataset("ds", "/data/train.txt", "edge-node-1"),)
        h = make_learning_harness(kind, job, *refs)
        h.set_conditions(meta.name(job), *TRAIN_RUNNING)
        h.add_pod(meta.name(job), "train", "Running", node="edge-node-2", order=2)
        h.refresh()
        return h
    return make


def test_a_train_workers_report_relayed_by_the_datasets_node_is_refused(harness):
    h = harness()
    before = h.conditions("il")
    with pytest.raises(NotEntitled, match="node edge-node-1 relayed a Train worker's report.*its nodes: edge-node-2"):
        h.report("il", "edge-node-1", DB_MODEL)  # the Dataset's node holds the job, but the worker is edge-node-2's
    assert h.conditions("il") == before
    h.report("il", "edge-node-2", DB_MODEL)  # the worker's own node (the LC there confines the path)
    assert h.states("il")[-1] == ("Train", "Completed")


def test_a_refusal_is_counted_as_not_entitled_and_acked_with_the_rule(harness):
    h = harness()
    outcomes = dispatch(h, UpstreamMessage("edge-node-1", NS, "incrementallearningjob", "il", "status", DB_MODEL))
    assert outcomes[0].reason == "not_entitled" and "edge-node-2" in (outcomes[0].error or "")


@pytest.mark.parametrize("node,entitled", [
    ("edge-node-1", True),  # the resident node: its LC's Train/Ready
    ("edge-node-2", True),  # a node running one of the job's workers
    ("edge-node-3", False),  # holds nothing of the job
])
def test_the_lcs_own_reports_count_from_the_resident_node_and_the_workers_nodes(harness, node, entitled):
    h = harness()
    h.set_conditions("il", condition("Train", "Waiting"))
    if entitled:
        h.report("il", node, {"phase": "train", "status": "ready", "output": None, **TRAIN_READY})
        assert h.states("il")[-1] == ("Train", "Ready")
    else:
        with pytest.raises(NotEntitled, match="neither the job's resident node .*edge-node-1"):
            h.report("il", node, {"phase": "train", "status": "ready", "output": None, **TRAIN_READY})
        assert h.states("il") == [("Train", "Waiting")]


@pytest.mark.parametrize("placed_by", ["template", "annotation"])
def test_a_workers_node_is_known_from_its_template_or_the_stage_annotation_once_its_pod_is_gone(harness, placed_by):
    h = harness()
    for pod in h.pods():
        h.client(r.PODS).delete(meta.name(pod))
    job = h.job("il")
    if placed_by == "template":
        job["spec"]["trainSpec"]["template"]["spec"]["nodeName"] = "edge-node-2"
    else:
        job["metadata"].setdefault("annotations", {})["sedna.io/Train"] = "edge-node-2"
    h.jobs.update(job)
    h.refresh()
    with pytest.raises(NotEntitled):
        h.report("il", "edge-node-1", DB_MODEL)
    h.report("il", "edge-node-2", DB_MODEL)
    assert h.states("il")[-1] == ("Train", "Completed")


def test_lifelong_learning_jobs_follow_the_same_rule(harness):
    h = harness(LL_KIND)
    report = {"phase": "train", "status": "completed", "output": {"models": [{"format": "pkl", "url": "/x"}]}}
    with pytest.raises(NotEntitled):
        h.report("ll", "edge-node-1", report)
    h.report("ll", "edge-node-2", report)
    assert h.states("ll")[-1] == ("Train", "Completed")
