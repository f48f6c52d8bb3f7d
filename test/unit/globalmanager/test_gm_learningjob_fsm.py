"""The IL/LL stage state machine (sedna.md §6), every row: the pure step function for each kind's policy, then the
same rows driven through each controller's ``sync`` (conditions appended, pods created or restarted, nodes
annotated)."""

from __future__ import annotations

import pytest
from learningjob_test_helpers import (
    IL_KIND,
    LL_KIND,
    READY,
    LearningHarness,
    condition,
    il_job,
    ll_job,
    refs_for,
)

from apis import meta
from apis import resources as r
from globalmanager.controllers.learningjob.fsm import (
    ANNOTATE_NODE,
    CREATE_POD,
    NONE,
    RESTART_INFERENCE,
    Policy,
    Step,
    next_stage,
    next_step,
)

IL_COLD = Policy(restart_on_deploy_ready=True, deploy_running_completes=True)
IL_HOT = Policy(restart_on_deploy_ready=False, deploy_running_completes=False)
LL = Policy(restart_on_deploy_ready=True, deploy_running_completes=False)
ALL = (IL_COLD, IL_HOT, LL)

# (policies, stage, type, pod phase, expected step)
ROWS: list[tuple[tuple[Policy, ...], str | None, str | None, str | None, Step]] = [
    # first sync
    (ALL, None, None, None, Step(NONE, "Train", "Waiting")),
    # Waiting: the LC moves it on
    *((ALL, s, "Waiting", p, Step()) for s in ("Train", "Eval", "Deploy") for p in (None, "Running", "Succeeded")),
    # Ready, Train/Eval: create the pod unless one is Pending/Running
    *((ALL, s, "Ready", p, Step(CREATE_POD, s, "Starting")) for s in ("Train", "Eval") for p in (None, "Succeeded", "Failed")),
    *((ALL, s, "Ready", p, Step(NONE, s, "Starting")) for s in ("Train", "Eval") for p in ("Pending", "Running")),
    # Ready, Deploy
    ((IL_COLD, LL), "Deploy", "Ready", "Running", Step(RESTART_INFERENCE, "Deploy", "Completed")),
    ((IL_HOT,), "Deploy", "Ready", "Running", Step(NONE, "Deploy", "Starting")),
    # Starting/Running: pod Running → annotate + Running (IL Deploy without hot update: Completed)
    *((ALL, s, t, "Running", Step(ANNOTATE_NODE, s, "Running" if t == "Starting" else ""))
      for s in ("Train", "Eval") for t in ("Starting", "Running")),
    *(((IL_HOT, LL), "Deploy", t, "Running", Step(ANNOTATE_NODE, "Deploy", "Running" if t == "Starting" else ""))
      for t in ("Starting", "Running")),
    *(((IL_COLD,), "Deploy", t, "Running", Step(NONE, "Deploy", "Completed")) for t in ("Starting", "Running")),
    # Starting/Running: pod ended
    # (a Train/Eval pod that ended before the GM saw it run goes through Running: its node's LC, which holds the
    # worker's report, gets the job only then)
    *((ALL, s, "Starting", "Succeeded", Step(ANNOTATE_NODE, s, "Running")) for s in ("Train", "Eval")),
    *((ALL, s, t, "Succeeded", Step(NONE, s, "Completed")) for s, t in (("Train", "Running"), ("Eval", "Running"),
                                                                         ("Deploy", "Starting"), ("Deploy", "Running"))),
    *((ALL, s, t, "Failed", Step(NONE, s, "Failed")) for s in ("Train", "Eval", "Deploy") for t in ("Starting", "Running")),
    *((ALL, s, t, p, Step()) for s in ("Train", "Eval", "Deploy") for t in ("Starting", "Running") for p in (None, "Pending")),
    # Completed → next stage Waiting; Failed → Train/Waiting
    (ALL, "Train", "Completed", None, Step(NONE, "Eval", "Waiting")),
    (ALL, "Eval", "Completed", None, Step(NONE, "Deploy", "Waiting")),
    (ALL, "Deploy", "Completed", None, Step(NONE, "Train", "Waiting")),
    *((ALL, s, "Failed", None, Step(NONE, "Train", "Waiting")) for s in ("Train", "Eval", "Deploy")),
    # a type this GM does not know: nothing
    (ALL, "Train", "Paused", "Running", Step()),
]


@pytest.mark.parametrize("policies,stage,ctype,phase,expected", ROWS)
def test_next_step(policies, stage, ctype, phase, expected):
    for policy in policies:
        assert next_step(stage, ctype, phase, policy) == expected, policy


def test_stages_cycle():
    assert [next_stage(s) for s in ("Train", "Eval", "Deploy")] == ["Eval", "Deploy", "Train"]


# -- the rows through the controllers ----------------------------------------------------------------------------------
WORKER = {"Train": "train", "Eval": "eval", "Deploy": "inference"}
NODE = {"Train": "train-node", "Eval": "eval-node", "Deploy": "deploy-node"}
DEPLOY_READY = {"input": {"models": [{"format": "pb", "url": "/output/train/1/model.pb"},
                                     {"format": "pb", "url": "/models/deploy.pb"}]}}


@pytest.fixture
def harness(make_learning_harness):
    return lambda kind, job: make_learning_harness(kind, job, *refs_for(kind))


def ready_data(kind: str, stage: str, ctype: str) -> dict | None:
    """The data an LC's report gives ``stage/ctype`` (``None`` for a condition the GM writes)."""
    if ctype != "Ready":
        return None
    return DEPLOY_READY if stage == "Deploy" else READY[kind, stage]


def start(harness, kind: str, hot: bool, stage: str, ctype: str, phase: str | None) -> tuple[LearningHarness, str, str]:
    """A started job whose last condition is ``stage/ctype`` (with data where the LC gives it) and, with
    ``phase``, a pod of that stage in that phase; returns the harness, the job name and the pod name."""
    job = il_job(hot=hot) if kind == IL_KIND else ll_job()
    name = meta.name(job)
    h = harness(kind, job)
    if kind == IL_KIND:  # the inference pod of the job's start (older than the stage pod below)
        h.add_pod(name, "inference", "Running", "deploy-node", order=0)
    h.set_conditions(name, condition("Train", "Waiting"), condition(stage, ctype, ready_data(kind, stage, ctype)))
    pod = ""
    if phase is not None and not (kind == IL_KIND and stage == "Deploy"):
        pod = meta.name(h.add_pod(name, WORKER[stage], phase, NODE[stage], order=1))
    elif phase is not None:  # IL's inference pod
        pod = meta.name(h.pods("inference")[0])
        h.set_status(r.PODS, pod, {"phase": phase})
    return h, name, pod


CASES = [
    (kind, hot, s, t, p)
    for kind, hot in ((IL_KIND, False), (IL_KIND, True), (LL_KIND, False))
    for s, t, p in (
        ("Train", "Waiting", None), ("Eval", "Waiting", None), ("Deploy", "Waiting", "Running"),
        ("Train", "Ready", None), ("Eval", "Ready", None), ("Train", "Ready", "Succeeded"),
        ("Train", "Ready", "Running"), ("Eval", "Ready", "Pending"), ("Deploy", "Ready", "Running"),
        ("Train", "Starting", "Running"), ("Eval", "Starting", "Running"), ("Deploy", "Starting", "Running"),
        ("Train", "Running", "Running"), ("Deploy", "Running", "Running"),
        ("Train", "Running", "Succeeded"), ("Train", "Starting", "Succeeded"), ("Eval", "Starting", "Succeeded"),
        ("Deploy", "Running", "Succeeded"),
        ("Train", "Running", "Failed"), ("Eval", "Running", "Failed"), ("Deploy", "Starting", "Failed"),
        ("Train", "Starting", "Pending"),
        ("Train", "Completed", None), ("Eval", "Completed", None), ("Deploy", "Completed", None),
        ("Train", "Failed", None), ("Eval", "Failed", None), ("Deploy", "Failed", None),
    )
]


def policy_of(kind: str, hot: bool) -> Policy:
    return LL if kind == LL_KIND else IL_HOT if hot else IL_COLD


@pytest.mark.parametrize("kind,hot,stage,ctype,phase", CASES)
def test_sync_takes_the_step(harness, kind, hot, stage, ctype, phase):
    h, name, pod = start(harness, kind, hot, stage, ctype, phase)
    before = {meta.name(p) for p in h.pods()}
    step = next_step(stage, ctype, phase, policy_of(kind, hot))

    assert h.step(name) is None
    states = h.states(name)
    if step.type and step.type != ctype:
        assert states[-1] == (step.stage, step.type) and len(states) == 3
        assert "reason" not in h.conditions(name)[-1]
    else:
        assert len(states) == 2
    after = {meta.name(p) for p in h.pods()}
    worker = WORKER[stage]
    if step.action == CREATE_POD:
        (new,) = after - before
        created = h.client(r.PODS).get(new)
        assert meta.labels(created)[h.prefix + "worker-type"] == worker
        assert meta.annotations(created)["sedna.io/condition-count"] == "2"
    elif step.action == RESTART_INFERENCE:
        (new,) = after - before
        assert pod not in after and meta.labels(h.client(r.PODS).get(new))[
            h.prefix + "worker-type"] == "inference"
    else:
        assert after == before
    annotations = meta.annotations(h.job(name))
    if step.action == ANNOTATE_NODE:
        assert annotations[f"sedna.io/{stage}"] == NODE[stage]
    else:
        assert f"sedna.io/{stage}" not in annotations
