"""The rollout arithmetic ported from kube's deployment util: fenceposts, new ReplicaSet sizes, hashes, conditions."""

from __future__ import annotations

import re

import pytest

from sandbox.controllers import rollout


def _deployment(replicas: int = 4, **rolling: object) -> dict:
    strategy = {"type": "RollingUpdate", "rollingUpdate": rolling} if rolling else {}
    return {"metadata": {"generation": 1}, "spec": {"replicas": replicas, "strategy": strategy}}


@pytest.mark.parametrize(
    ("replicas", "rolling", "surge", "unavailable"),
    [
        (4, {}, 1, 1),  # 25% of 4, surge rounded up, unavailable down
        (3, {}, 1, 0),
        (10, {"maxSurge": "30%", "maxUnavailable": "30%"}, 3, 3),
        (2, {"maxSurge": 0, "maxUnavailable": 0}, 0, 1),  # both 0: one may be unavailable
        (1, {"maxSurge": 2, "maxUnavailable": 5}, 2, 1),  # unavailable capped at replicas
    ],
)
def test_fenceposts(replicas: int, rolling: dict, surge: int, unavailable: int) -> None:
    d = _deployment(replicas, **rolling)
    assert (rollout.max_surge(d), rollout.max_unavailable(d)) == (surge, unavailable)
    recreate = {"spec": {"replicas": replicas, "strategy": {"type": "Recreate"}}}
    assert (rollout.max_surge(recreate), rollout.max_unavailable(recreate)) == (0, 0)


def test_new_replica_set_grows_within_max_surge() -> None:
    d = _deployment(4, maxSurge=1, maxUnavailable=0)
    old, new = {"spec": {"replicas": 4}}, {"spec": {"replicas": 0}}
    assert rollout.new_rs_new_replicas(d, [old, new], new) == 1
    grown = {"spec": {"replicas": 1}}
    assert rollout.new_rs_new_replicas(d, [old, grown], grown) == 1  # 4 + 1 pods: no room
    assert rollout.new_rs_new_replicas(d, [{"spec": {"replicas": 3}}, grown], grown) == 2
    assert rollout.new_rs_new_replicas({"spec": {"replicas": 3, "strategy": {"type": "Recreate"}}}, [], new) == 3


def test_pod_template_hash_is_stable_and_safe() -> None:
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    h = rollout.pod_template_hash(template)
    assert h == rollout.pod_template_hash({"spec": template["spec"], "metadata": template["metadata"]})
    assert re.fullmatch(r"[bcdfghjklmnpqrstvwxz2456789]{1,10}", h)
    assert rollout.pod_template_hash(template, collision_count=1) != h


def test_set_condition_keeps_transition_time_and_ignores_repeats() -> None:
    status: dict = {}
    first = {"type": "Available", "status": "True", "reason": "A", "lastTransitionTime": "t1", "lastUpdateTime": "t1"}
    rollout.set_condition(status, first)
    rollout.set_condition(status, {**first, "lastTransitionTime": "t2", "lastUpdateTime": "t2"})
    assert status["conditions"] == [first]  # same status and reason: no change
    rollout.set_condition(status, {**first, "reason": "B", "lastTransitionTime": "t3", "lastUpdateTime": "t3"})
    assert status["conditions"][0]["lastTransitionTime"] == "t1" and status["conditions"][0]["reason"] == "B"


def test_new_replica_set_annotations() -> None:
    d = {"metadata": {"annotations": {"team": "a", "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
         "spec": {"replicas": 2}}
    rs: dict = {"metadata": {"annotations": {rollout.REVISION_ANNOTATION: "1"}}}
    assert rollout.set_new_rs_annotations(d, rs, 3, exists=True)
    annotations = rs["metadata"]["annotations"]
    assert annotations == {"team": "a", rollout.REVISION_ANNOTATION: "3", "deployment.kubernetes.io/revision-history": "1"}
    assert not rollout.set_new_rs_annotations(d, rs, 2, exists=True)  # never goes back
