"""Where a LifelongLearningJob goes (Sedna's LL ``downstream.go``, level-triggered: see ``learningjob.placement``).
No Models: the LL workers get theirs through the condition data and the knowledge base.

Nodes: ``ds`` = the Dataset's ``spec.nodeName``; ``train``/``eval``/``deploy`` = annotations ``sedna.io/Train``,
``sedna.io/Eval``, ``sedna.io/Deploy``. Resident: ``ds`` and ``deploy``. Nothing is placed without ``ds`` or before
the first condition.

| last condition        | job sent to (insert) | job kept on (others get a delete) |
|-----------------------|----------------------|-----------------------------------|
| any stage/Waiting     | ds                   | resident                          |
| Train/Running         | train                | resident, train                   |
| Eval/Running          | eval                 | resident, eval                    |
| Deploy/Running        | deploy               | resident                          |
| Ready/Starting        | –                    | resident                          |
| Completed/Failed      | –                    | resident                          |

Deleted: a ``delete`` to every node that held the job and to ds/train/eval/deploy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis.sedna.constants import DEPLOY, RUNNING, STAGES, WAITING
from globalmanager.controllers.learningjob.placement import Plan, stage_node

__all__ = ["plan"]


def plan(job: Mapping[str, Any], ds: str) -> Plan:
    conditions = (job.get("status") or {}).get("conditions") or []
    if not ds or not conditions:
        return Plan()
    stage, ctype = conditions[-1].get("stage"), conditions[-1].get("type")
    resident = {ds, stage_node(job, DEPLOY)} - {""}
    send: set[str] = set()
    if ctype == WAITING:
        send = {ds}
    elif ctype == RUNNING and stage in STAGES:
        send = {stage_node(job, stage)} - {""}
    return Plan(send=frozenset(send), keep=frozenset(resident | send))
