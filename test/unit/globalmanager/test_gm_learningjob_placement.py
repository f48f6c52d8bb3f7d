"""Where IL/LL jobs and their Models go (sedna.md §3.6), every row of both tables, and ``EdgePlacement`` applying
the plans: inserts where the stage needs the job, deletes where it no longer does, the Models through the router,
deletion everywhere, the state source for reconnecting nodes."""

from __future__ import annotations

from typing import Any

import pytest
from learningjob_test_helpers import (
    IL_KIND,
    LL_KIND,
    LearningHarness,
    condition,
    il_job,
    ll_job,
    refs_for,
)
from sedna_test_helpers import NS, s3_secret

from apis import meta
from apis import resources as r
from globalmanager.controllers.incrementallearning import downstream as il_downstream
from globalmanager.controllers.learningjob.placement import ModelNeed, Plan
from globalmanager.controllers.lifelonglearning import downstream as ll_downstream
from globalmanager.controllers.model import ModelRoute
from globalmanager.runtime.edge import DELETE, INSERT

HOT = "sedna.io/model-hot-update-config"
ALL_MODELS = {("ds", "initial-model"), ("ds", "deploy-model"), ("ds", "eval-model")}


def job_at(job: dict[str, Any], stage: str | None, ctype: str | None, **annotations: str) -> dict[str, Any]:
    job = meta.deep_copy(job)
    job["metadata"]["annotations"] = annotations
    job["status"] = {"conditions": [condition(stage, ctype)] if stage else []}
    return job


def expect(send: set[str], keep: set[str], models: set[tuple[str, str]] = frozenset()) -> Plan:
    return Plan(frozenset(send), frozenset(keep), frozenset(ModelNeed(n, m) for n, m in models))


NODES = {"sedna.io/Train": "tn", "sedna.io/Eval": "en"}
# IL without hot update: resident = ds and the eval node (Go's deploy node); every row routes the Models there
COLD_MODELS = ALL_MODELS | {("en", "deploy-model"), ("en", "eval-model")}
IL_COLD_ROWS = [
    ("Train", "Waiting", expect({"ds"}, {"ds", "en"}, COLD_MODELS)),
    ("Eval", "Waiting", expect({"ds"}, {"ds", "en"}, COLD_MODELS)),
    ("Deploy", "Waiting", expect({"en"}, {"ds", "en"}, COLD_MODELS)),
    *((s, t, expect(set(), {"ds", "en"}, COLD_MODELS)) for s in ("Train", "Eval", "Deploy") for t in ("Ready", "Starting")),
    ("Train", "Running", expect({"tn"}, {"ds", "en", "tn"}, COLD_MODELS)),
    ("Eval", "Running", expect({"en"}, {"ds", "en"}, COLD_MODELS)),
    ("Deploy", "Running", expect(set(), {"ds", "en"}, COLD_MODELS)),  # never reached without hot update
    *((s, t, expect(set(), {"ds", "en"}, COLD_MODELS)) for s in ("Train", "Eval", "Deploy") for t in ("Completed", "Failed")),
]
# IL with hot update (the job annotated with its config file and sedna.io/Deploy=dn): resident = ds and dn
HOT_MODELS = ALL_MODELS | {("dn", "deploy-model"), ("dn", "eval-model")}
IL_HOT_ROWS = [
    ("Train", "Waiting", expect({"ds"}, {"ds", "dn"}, HOT_MODELS)),
    ("Eval", "Waiting", expect({"ds"}, {"ds", "dn"}, HOT_MODELS)),
    ("Deploy", "Waiting", expect({"en"}, {"ds", "dn", "en"}, HOT_MODELS | {("en", "deploy-model")})),
    *(("Deploy", t, expect(set(), {"ds", "dn", "en"}, HOT_MODELS | {("en", "deploy-model")})) for t in ("Ready", "Starting")),
    *((s, t, expect(set(), {"ds", "dn"}, HOT_MODELS)) for s in ("Train", "Eval") for t in ("Ready", "Starting")),
    ("Train", "Running", expect({"tn"}, {"ds", "dn", "tn"}, HOT_MODELS)),
    ("Eval", "Running", expect({"en"}, {"ds", "dn", "en"}, HOT_MODELS)),
    ("Deploy", "Running", expect({"dn"}, {"ds", "dn"}, HOT_MODELS)),
    *((s, t, expect(set(), {"ds", "dn"}, HOT_MODELS)) for s in ("Train", "Eval", "Deploy") for t in ("Completed", "Failed")),
]
# LL: resident = ds and the deploy node; no Models
LL_ROWS = [
    *((s, "Waiting", expect({"ds"}, {"ds", "dn"})) for s in ("Train", "Eval", "Deploy")),
    ("Train", "Running", expect({"tn"}, {"ds", "dn", "tn"})),
    ("Eval", "Running", expect({"en"}, {"ds", "dn", "en"})),
    ("Deploy", "Running", expect({"dn"}, {"ds", "dn"})),
    *((s, t, expect(set(), {"ds", "dn"})) for s in ("Train", "Eval", "Deploy")
      for t in ("Ready", "Starting", "Completed", "Failed")),
]


@pytest.mark.parametrize("stage,ctype,expected", IL_COLD_ROWS)
def test_il_plan_without_hot_update(stage, ctype, expected):
    job = job_at(il_job(initial_eval="eval-model"), stage, ctype, **NODES)
    assert il_downstream.plan(job, "ds") == expected


@pytest.mark.parametrize("stage,ctype,expected", IL_HOT_ROWS)
def test_il_plan_with_hot_update(stage, ctype, expected):
    job = job_at(il_job(hot=True, initial_eval="eval-model"), stage, ctype, **NODES, **{"sedna.io/Deploy": "dn", HOT: "/f"})
    assert il_downstream.plan(job, "ds") == expected


@pytest.mark.parametrize("stage,ctype,expected", LL_ROWS)
def test_ll_plan(stage, ctype, expected):
    job = job_at(ll_job(), stage, ctype, **NODES, **{"sedna.io/Deploy": "dn"})
    assert ll_downstream.plan(job, "ds") == expected


@pytest.mark.parametrize("plan", [il_downstream.plan, ll_downstream.plan])
def test_nothing_is_placed_without_a_dataset_node_or_a_condition(plan):
    job = il_job() if plan is il_downstream.plan else ll_job()
    assert plan(job_at(job, "Train", "Waiting"), "") == Plan()
    assert plan(job_at(job, None, None), "ds") == Plan()


def test_il_plan_details():
    # the deploy node counts only once the job carries its hot-update config file (Go)
    job = job_at(il_job(hot=True), "Deploy", "Running", **NODES, **{"sedna.io/Deploy": "dn"})
    assert il_downstream.plan(job, "ds").send == frozenset()
    # no eval node known yet: the dataset's LC decides the deploy
    job = job_at(il_job(), "Deploy", "Waiting")
    assert il_downstream.plan(job, "ds") == expect({"ds"}, {"ds"}, {("ds", "initial-model"), ("ds", "deploy-model")})
    # hot update: the decider gets the deploy Model only (Go sends initialEvalModel there only without hot update)
    job = job_at(il_job(hot=True, initial_eval="eval-model"), "Deploy", "Waiting", **NODES)
    assert ModelNeed("en", "eval-model") not in il_downstream.plan(job, "ds").models


# -- EdgePlacement ---------------------------------------------------------------------------------------------------
@pytest.fixture
def harness(make_learning_harness):
    def make(kind: str, job: dict[str, Any], *extra: dict[str, Any]) -> LearningHarness:
        h = make_learning_harness(kind, job, *refs_for(kind), *extra)
        h.refresh()
        return h
    return make


def sent(h: LearningHarness, kind: str = "IncrementalLearningJob") -> list[tuple[str, str, str]]:
    """(node, operation, last condition) of the job messages sent so far; clears the record."""
    out = [(m.node, m.operation, "/".join(((m.obj.get("status") or {}).get("conditions") or [{}])[-1].get(k, "")
                                          for k in ("stage", "type")))
           for m in h.edge.sent if m.obj.get("kind") == kind]
    h.edge.sent.clear()
    return out


def move(h: LearningHarness, name: str, stage: str, ctype: str, **annotations: str) -> None:
    """Append ``stage/ctype`` (and annotate), as the GM or an LC would, then deliver the update event."""
    if annotations:
        h.annotate(name, **annotations)
    job = h.job(name)
    conditions = (job.get("status") or {}).get("conditions") or []
    h.set_conditions(name, *conditions, condition(stage, ctype))
    h.refresh()
    h.to_edge(INSERT, h.controller.ctx.get_job(f"{NS}/{name}"))


def test_placement_follows_the_stages(harness):
    h = harness(IL_KIND, il_job())
    move(h, "il", "Train", "Waiting")
    assert sent(h) == [("ds-node", INSERT, "Train/Waiting")]
    move(h, "il", "Train", "Ready")
    move(h, "il", "Train", "Starting")
    assert sent(h) == []  # the ds LC acts on Waiting only: it keeps the copy it has
    move(h, "il", "Train", "Running", **{"sedna.io/Train": "train-node"})
    assert sent(h) == [("train-node", INSERT, "Train/Running")]
    h.to_edge(INSERT, h.controller.ctx.get_job(f"{NS}/il"))  # same resourceVersion: not sent again
    assert sent(h) == []
    move(h, "il", "Train", "Completed")
    assert sent(h) == [("train-node", DELETE, "Train/Completed")]
    move(h, "il", "Eval", "Waiting")
    assert sent(h) == [("ds-node", INSERT, "Eval/Waiting")]
    move(h, "il", "Eval", "Running", **{"sedna.io/Eval": "eval-node"})
    assert sent(h) == [("eval-node", INSERT, "Eval/Running")]
    move(h, "il", "Eval", "Completed")
    assert sent(h) == []  # without hot update the eval node is the deploy node: it stays
    move(h, "il", "Deploy", "Waiting")
    assert sent(h) == [("eval-node", INSERT, "Deploy/Waiting")]
    assert h.placement.held_nodes(f"{NS}/il") == {"ds-node", "eval-node"}

    routes = h.router.routes_of(f"incrementallearningjob/{NS}/il")
    assert routes == {ModelRoute("ds-node", NS, "initial-model"), ModelRoute("ds-node", NS, "deploy-model"),
                      ModelRoute("eval-node", NS, "deploy-model")}


def test_a_node_that_no_longer_needs_the_job_gets_a_delete(harness):
    h = harness(IL_KIND, il_job())
    move(h, "il", "Train", "Waiting")
    move(h, "il", "Eval", "Running", **{"sedna.io/Eval": "eval-1"})
    sent(h)
    # the next round evaluates on another node: the old eval node is neither needed nor resident any more
    move(h, "il", "Eval", "Running", **{"sedna.io/Eval": "eval-2"})
    assert sorted(sent(h)) == [("eval-1", DELETE, "Eval/Running"), ("eval-2", INSERT, "Eval/Running")]
    # the dataset moves: the old dataset node gets a delete, the new one the job at its next Waiting
    ds = h.client(r.DATASETS).get("ds")
    ds["spec"]["nodeName"] = "ds-2"
    h.client(r.DATASETS).update(ds)
    move(h, "il", "Train", "Waiting")
    assert sorted(sent(h)) == [("ds-2", INSERT, "Train/Waiting"), ("ds-node", DELETE, "Train/Waiting")]


def test_models_are_sent_and_removed_by_the_router(harness):
    h = harness(IL_KIND, il_job())
    move(h, "il", "Train", "Waiting")
    h.router.sync(f"{NS}/initial-model")
    (msg,) = [m for m in h.edge.sent if m.obj.get("kind") == "Model"]
    assert (msg.node, msg.operation, meta.name(msg.obj)) == ("ds-node", INSERT, "initial-model")
    move(h, "il", "Eval", "Running", **{"sedna.io/Eval": "eval-1"})
    h.edge.sent.clear()
    move(h, "il", "Eval", "Running", **{"sedna.io/Eval": "eval-2"})  # eval-1 is no longer the deploy node
    assert [(m.node, m.operation) for m in h.edge.sent if m.obj.get("kind") == "Model"] == [("eval-1", DELETE)]
    h.edge.sent.clear()
    h.router.sync(f"{NS}/deploy-model")
    assert {(m.node, m.operation) for m in h.edge.sent if m.obj.get("kind") == "Model"} == \
        {("ds-node", INSERT), ("eval-2", INSERT)}


def test_the_inference_pods_node_keeps_a_hot_update_job(harness):
    """Train and eval run on the inference pod's node (not the dataset's): the GM never takes the job off that node,
    whose LC writes the model_config.json the pod mounted the directory of, and no delete there is a deletion."""
    h = harness(IL_KIND, il_job(hot=True))
    h.add_pod("il", "inference", "Running", node="worker-node")
    move(h, "il", "Train", "Waiting", **{HOT: "/var/lib/sedna/model-hot-update/default/il/model_config.json"})
    assert h.placement.held_nodes(f"{NS}/il") == {"ds-node"}
    for stage in ("Train", "Eval"):
        move(h, "il", stage, "Running", **{f"sedna.io/{stage}": "worker-node"})
        move(h, "il", stage, "Completed")
        move(h, "il", "Eval" if stage == "Train" else "Deploy", "Waiting")
    sent_to_worker = [(op, at) for node, op, at in sent(h) if node == "worker-node"]
    assert sent_to_worker == [(INSERT, "Train/Running"), (INSERT, "Eval/Running"), (INSERT, "Deploy/Waiting")]
    assert ("worker-node", "deploy-model") in {(route.node, route.name) for route in h.router.routes_of(
        f"incrementallearningjob/{NS}/il")}
    # routed off a node, the job is sent as it is (no deletionTimestamp): the LC keeps what a pod may use
    move(h, "il", "Eval", "Running", **{"sedna.io/Eval": "other-node"})
    move(h, "il", "Eval", "Completed")
    [(node, gone)] = [(m.node, m.obj) for m in h.edge.sent if m.operation == DELETE and m.obj.get("kind") == IL_KIND]
    assert node == "other-node" and meta.deletion_timestamp(gone) is None


def test_deleting_the_job_tells_every_node_and_forgets_it(harness):
    h = harness(IL_KIND, il_job(hot=True))
    move(h, "il", "Train", "Waiting")
    move(h, "il", "Train", "Running", **{"sedna.io/Train": "train-node"})
    job = h.controller.ctx.get_job(f"{NS}/il")
    job = {**job, "metadata": {**job["metadata"], "annotations": {**meta.annotations(job), "sedna.io/Eval": "eval-node",
                                                                   "sedna.io/Deploy": "deploy-node", HOT: "/f"}}}
    sent(h)
    h.jobs.delete("il")
    h.refresh()
    h.controller.delete_job(job)
    deletes = [m for m in h.edge.sent if m.obj.get("kind") == IL_KIND and m.operation == DELETE]
    assert sorted(m.node for m in deletes) == ["deploy-node", "ds-node", "eval-node", "train-node"]
    # the job is gone for good, not only off those nodes: each LC can tell (and removes the hot-update directory)
    assert all(meta.deletion_timestamp(m.obj) for m in deletes)
    h.edge.sent.clear()
    assert h.placement.tracked() == 0
    assert h.router.routes_of(f"incrementallearningjob/{NS}/il") == set()
    assert len(h.controller.job_states) == 0
    assert h.controller.sync(f"{NS}/il") is None and h.edge.sent == []


def test_state_source_gives_a_reconnecting_node_its_copy(harness):
    h = harness(IL_KIND, il_job(credential="s3-secret"), s3_secret())
    move(h, "il", "Train", "Waiting")
    move(h, "il", "Train", "Running", **{"sedna.io/Train": "train-node"})
    # the ds LC holds the Train/Waiting copy: a reconnection gives it that copy again, not the Running one
    (copy,) = h.edge.sources["incrementallearningjob"]("ds-node")
    assert copy["status"]["conditions"][-1]["type"] == "Waiting"
    assert "sedna.io/credential" in meta.annotations(copy) and copy["kind"] == "IncrementalLearningJob"
    assert h.edge.sources["incrementallearningjob"]("train-node")[0]["status"]["conditions"][-1]["type"] == "Running"
    assert h.edge.sources["incrementallearningjob"]("other-node") == []


def test_state_source_after_a_gm_restart(harness):
    """A new GM knows nothing it sent: a node the job should be on gets the current copy (and is remembered)."""
    h = harness(LL_KIND, ll_job())
    h.set_conditions("ll", condition("Train", "Waiting"), condition("Train", "Running"))
    h.annotate("ll", **{"sedna.io/Train": "train-node"})
    h.refresh()
    assert [c["type"] for c in h.edge.sources["lifelonglearningjob"]("ds-node")[0]["status"]["conditions"]] == \
        ["Waiting", "Running"]
    assert h.placement.held_nodes(f"{NS}/ll") == {"ds-node"}
    assert len(h.edge.sources["lifelonglearningjob"]("train-node")) == 1


def test_without_its_dataset_the_job_is_neither_sent_nor_removed(harness):
    h = harness(LL_KIND, ll_job())
    move(h, "ll", "Train", "Waiting")
    assert sent(h, "LifelongLearningJob") == [("ds-node", INSERT, "Train/Waiting")]
    h.client(r.DATASETS).delete("ds")
    move(h, "ll", "Eval", "Waiting")
    assert sent(h, "LifelongLearningJob") == []
    assert h.placement.held_nodes(f"{NS}/ll") == {"ds-node"}
