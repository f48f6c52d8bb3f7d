"""The stage state machine of IncrementalLearningJob and LifelongLearningJob (Sedna's ``transitJobState``), as a
pure function of the current condition and the phase of that stage's pod.

A condition is ``(stage, type)``; conditions are appended and the last one is the current state. ``next_step``
returns what the GM does in that state: the condition to append (``None``: nothing) and the action that comes
with it. The GM appends only when the type changes (Go: ``latestCondition.Type != newConditionType``).

| current            | stage          | check                               | action             | next               |
|--------------------|----------------|-------------------------------------|--------------------|--------------------|
| (no condition)     | –              | –                                   | –                  | Train/Waiting      |
| Waiting            | any            | (the LC moves it to Ready)          | –                  | –                  |
| Ready              | Train/Eval     | pod not Pending/Running             | CREATE_POD         | Starting           |
| Ready              | Train/Eval     | pod Pending/Running                 | –                  | Starting           |
| Ready              | Deploy         | ``restart_on_deploy_ready``         | RESTART_INFERENCE  | Completed          |
| Ready              | Deploy         | otherwise (IL hot update)           | –                  | Starting           |
| Starting/Running   | Deploy         | pod Running, ``deploy_running_completes`` | –            | Completed          |
| Starting/Running   | any            | pod Running                         | ANNOTATE_NODE      | Running            |
| Starting           | Train/Eval     | pod Succeeded                       | ANNOTATE_NODE      | Running            |
| Starting/Running   | any            | pod Succeeded / Failed              | –                  | Completed / Failed |
| Completed          | Train→Eval→Deploy→Train | –                          | –                  | next stage/Waiting |
| Failed             | any            | –                                   | –                  | Train/Waiting      |
"""

from __future__ import annotations

from dataclasses import dataclass

from apis.sedna.constants import (
    COMPLETED,
    DEPLOY,
    EVAL,
    FAILED,
    READY,
    RUNNING,
    STARTING,
    TRAIN,
    WAITING,
)

__all__ = [
    "ANNOTATE_NODE",
    "CREATE_POD",
    "NONE",
    "Policy",
    "RESTART_INFERENCE",
    "Step",
    "next_stage",
    "next_step",
    "stage_worker_type",
]

NONE = ""
CREATE_POD = "create-pod"  # create the stage's worker pod from the current condition's data.input
RESTART_INFERENCE = "restart-inference"  # delete the newest inference pod (if any) and create one
ANNOTATE_NODE = "annotate-node"  # patch sedna.io/<Stage>=<pod's node> on the job

_POD_TYPES = {TRAIN: "train", EVAL: "eval", DEPLOY: "inference"}
_ACTIVE = ("Pending", "Running")


@dataclass(frozen=True)
class Policy:
    """How a kind differs: IL without hot update restarts its inference pod on Deploy/Ready and completes Deploy
    as soon as that pod runs; IL with hot update waits for the worker's report; LL restarts, and a Deploy that is
    Starting/Running (never reached in practice) follows its pod like the other stages."""

    restart_on_deploy_ready: bool
    deploy_running_completes: bool


@dataclass(frozen=True)
class Step:
    action: str = NONE
    stage: str = ""  # with type: the condition to append ("" = nothing)
    type: str = ""

    @property
    def appends(self) -> bool:
        return bool(self.type)


def stage_worker_type(stage: str) -> str:
    """The worker type (label value, lower case) of a stage's pod: ``train``, ``eval``, ``inference``."""
    return _POD_TYPES.get(stage, stage.lower())


def next_stage(stage: str) -> str:
    return {TRAIN: EVAL, EVAL: DEPLOY, DEPLOY: TRAIN}.get(stage, TRAIN)


def next_step(stage: str | None, ctype: str | None, pod_phase: str | None, policy: Policy) -> Step:
    """What the GM does when the current condition is ``(stage, ctype)`` (``None``: no condition yet) and the
    stage's newest pod is in ``pod_phase`` (``None``: no such pod)."""
    if not ctype:
        return Step(stage=TRAIN, type=WAITING)
    stage = stage or TRAIN
    if ctype == READY:
        if stage == DEPLOY:
            if policy.restart_on_deploy_ready:
                return Step(RESTART_INFERENCE, DEPLOY, COMPLETED)
            return Step(stage=DEPLOY, type=STARTING)
        return Step(NONE if pod_phase in _ACTIVE else CREATE_POD, stage, STARTING)
    if ctype in (STARTING, RUNNING):
        if pod_phase == "Running":
            if stage == DEPLOY and policy.deploy_running_completes:
                return Step(stage=stage, type=COMPLETED)
            return Step(ANNOTATE_NODE, stage, RUNNING if ctype != RUNNING else "")
        if pod_phase == "Succeeded":
            if ctype == STARTING and stage in (TRAIN, EVAL):
                # it ran, but ended before the GM saw it run: the job goes to that node's LC only at Running, and
                # that LC holds the worker's report (the stage's output) until it has the job
                return Step(ANNOTATE_NODE, stage, RUNNING)
            return Step(stage=stage, type=COMPLETED)
        if pod_phase == "Failed":
            return Step(stage=stage, type=FAILED)
        return Step()
    if ctype == COMPLETED:
        return Step(stage=next_stage(stage), type=WAITING)
    if ctype == FAILED:
        return Step(stage=TRAIN, type=WAITING)
    return Step()  # Waiting (the LC moves it on), or a type this GM does not know
