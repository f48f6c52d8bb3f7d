"""Where an IncrementalLearningJob and its Models go (Sedna's ``downstream.go``, level-triggered: see
``learningjob.placement``).

Nodes: ``ds`` = the Dataset's ``spec.nodeName``; ``train``/``eval`` = annotations ``sedna.io/Train``/``sedna.io/Eval``;
``deploy`` = ``sedna.io/Deploy`` when the job has the hot-update annotation. The *decider* (the LC that takes the
deploy decision) is the eval node (``ds`` while no eval node is known). Resident nodes keep the job through every
stage: ``ds`` and, with hot update, the deploy node and the node of the newest inference pod; without, the eval node
(Go's deploy node is the eval node then). Nothing is placed without ``ds`` or before the first condition.

The inference pod's node is resident from the moment the pod has one (beyond Go, which learns the deploy node only at
the first Deploy/Running): its pod mounted the job's hot-update directory on that node when it started, and a
``delete`` there, at a Train/Eval ``Completed`` of a worker node that is also the inference node, is what made an LC
remove that directory, so that the ``model_config.json`` written later went into a new directory the pod cannot
see. (Our LC also keeps the directory on a ``delete`` that only takes the job off the node, for Go's GM.)

| last condition    | job sent to (insert) | job kept on (others get a delete)   | Models routed                          |
|-------------------|----------------------|-------------------------------------|----------------------------------------|
| Train/Waiting     | ds                   | resident                            | ds: initial, deploy, initialEval       |
| Eval/Waiting      | ds                   | resident                            | (the same on every row)                |
| Deploy/Waiting    | decider              | resident, decider                   | decider: deploy (+initialEval without hot update) |
| Deploy/Ready, /Starting | –              | resident, decider                   | decider: as above                      |
| Train/Running     | train                | resident, train                     |                                        |
| Eval/Running      | eval                 | resident, eval                      |                                        |
| Deploy/Running    | deploy               | resident                            |                                        |
| Ready/Starting (Train, Eval) | –         | resident                            |                                        |
| Completed/Failed  | –                    | resident                            |                                        |

On every row the resident deploy node (hot update) or eval node (without) has the deploy Model and, when set,
``evalSpec.initialEvalModel``. Deleted: a ``delete`` to every node that held the job and to ds/train/eval/deploy.
"""

from __future__ import annotations

from apis import meta
from apis.meta import Obj
from apis.sedna.constants import (
    DEPLOY,
    EVAL,
    MODEL_HOT_UPDATE_ANNOTATION,
    READY,
    RUNNING,
    STARTING,
    TRAIN,
    WAITING,
)
from apis.sedna.v1alpha1 import DeployModel, ILJobSpec, ModelRef
from apis.typed import spec_of
from globalmanager.controllers.learningjob.placement import ModelNeed, Plan, stage_node

__all__ = ["hot_update_enabled", "il_spec", "model_names", "plan"]


def il_spec(job: Obj) -> ILJobSpec:
    """The typed spec; ``ValueError`` naming the field for a spec the view rejects."""
    spec = spec_of(ILJobSpec, job)
    if spec is None:
        raise ValueError("spec is required")
    return spec


def hot_update_enabled(spec: ILJobSpec) -> bool:
    model = spec.deploy_spec.model if spec.deploy_spec is not None else None
    return bool(model is not None and model.hot_update_enabled)


def model_names(spec: ILJobSpec) -> tuple[str, str, str]:
    """(initial model, deploy model, initial eval model) names; ``""`` for what is not set."""
    deploy = spec.deploy_spec.model if spec.deploy_spec is not None else None
    initial_eval = spec.eval_spec.initial_eval_model if spec.eval_spec is not None else None
    return _name(spec.initial_model), _name(deploy), _name(initial_eval)


def _name(ref: ModelRef | DeployModel | None) -> str:
    return (ref.name or "") if ref is not None else ""


def plan(job: Obj, ds: str, inference_node: str = "") -> Plan:
    """``inference_node``: where the job's newest inference pod runs (``""``: unknown). ``ValueError`` for a spec
    the view rejects."""
    conditions = (job.get("status") or {}).get("conditions") or []
    if not ds or not conditions:
        return Plan()
    stage, ctype = conditions[-1].get("stage"), conditions[-1].get("type")
    spec = il_spec(job)
    hot = hot_update_enabled(spec)
    train, evaluator = stage_node(job, TRAIN), stage_node(job, EVAL)
    deploy = stage_node(job, DEPLOY) if MODEL_HOT_UPDATE_ANNOTATION in meta.annotations(job) else ""
    resident = ({ds, deploy, inference_node} if hot else {ds, evaluator}) - {""}
    decider = evaluator or ds
    send: set[str] = set()
    extra: set[str] = set()
    if ctype == WAITING:
        send = {decider} if stage == DEPLOY else {ds}
    elif ctype == RUNNING:
        send = {{TRAIN: train, EVAL: evaluator, DEPLOY: deploy}.get(stage, "")} - {""}
    if stage == DEPLOY and ctype in (WAITING, READY, STARTING):
        extra = {decider}
    initial, deploy_model, initial_eval = model_names(spec)
    needs = {(ds, m) for m in (initial, deploy_model, initial_eval)}
    for node in resident - {ds}:
        needs |= {(node, deploy_model), (node, initial_eval)}
    for node in extra:
        needs |= {(node, deploy_model)} | (set() if hot else {(node, initial_eval)})
    return Plan(send=frozenset(send), keep=frozenset(resident | send | extra),
                models=frozenset(ModelNeed(n, m) for n, m in needs if n and m))
