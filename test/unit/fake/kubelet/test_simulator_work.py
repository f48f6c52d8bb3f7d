"""The pod simulator's work per pod: its own writes (binding, Running, the exit) come back as watch events that
need no sync; a change by anybody else is synced."""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from kubelet_test_helpers import make_pod, phase
from testkit import wait_for

from apis.fake import ObjectTracker
from apis.resources import PODS
from sandbox.simulator import PodSimulator
from sandbox.steering import ANNOTATION_RUN_SECONDS


def counting_simulator(make_sim: Callable[..., PodSimulator], tick: float = 0.01) -> tuple[PodSimulator, Counter[str]]:
    """A started simulator (``make_sim``'s: stopped and checked at teardown) and how often it has synced each pod
    (by name)."""
    syncs: Counter[str] = Counter()

    def count_syncs(sim: PodSimulator) -> None:
        sync_pod = sim._sync_pod

        def counting(ns: str, name: str) -> None:
            syncs[name] += 1
            sync_pod(ns, name)

        sim._sync_pod = counting  # type: ignore[method-assign]

    return make_sim(tick=tick, before_start=count_syncs), syncs


@pytest.fixture
def counted(make_sim: Callable[..., PodSimulator]) -> tuple[PodSimulator, Counter[str]]:
    return counting_simulator(make_sim)


def settle(sim: PodSimulator, name: str) -> None:
    """Every event before now has been handled: a pod created now has been run (events are handled in order)."""
    sim.tracker.create(PODS, make_pod(name), "default")
    wait_for(f"{name} to run", lambda: phase(sim, name) == "Running")


def test_a_pod_run_to_completion_is_synced_when_added_and_when_its_time_is_up(counted):
    sim, syncs = counted
    sim.tracker.create(PODS, make_pod("p", **{ANNOTATION_RUN_SECONDS: "0.2"}), "default")
    wait_for("p to succeed", lambda: phase(sim, "p") == "Succeeded")
    settle(sim, "marker")
    # added (bound and started in one sync), then its timer; its three writes came back without a sync each
    assert syncs["p"] == 2


def test_a_change_by_another_client_is_synced(counted):
    sim, syncs = counted
    sim.tracker.create(PODS, make_pod("q"), "default")
    wait_for("q to run", lambda: phase(sim, "q") == "Running")
    settle(sim, "marker")
    before = syncs["q"]
    sim.tracker.patch(PODS, "default", "q", {"metadata": {"labels": {"touched": "yes"}}}, "merge")
    wait_for("the simulator to look at q again", lambda: syncs["q"] == before + 1)


def test_a_timer_is_handled_once_when_due_whatever_else_wakes_the_simulator(make_sim):
    """Timers due within a tick are handled together, never before they are due: other pods' events during the
    last tick before a pod's exit do not make the simulator look at that pod again and again."""
    sim, syncs = counting_simulator(make_sim, tick=0.3)
    sim.tracker.create(PODS, make_pod("p", **{ANNOTATION_RUN_SECONDS: "0.6"}), "default")
    wait_for("p to run", lambda: phase(sim, "p") == "Running")
    for i in range(40):  # events all through p's last tick (each wakes the simulator)
        sim.tracker.create(PODS, make_pod(f"other-{i}"), "default")
        time.sleep(0.015)
    wait_for("p to succeed", lambda: phase(sim, "p") == "Succeeded")
    assert syncs["p"] == 2


def test_controllers_claim_by_index_never_listing_the_namespace(monkeypatch, make_sim):
    """The ReplicaSet and Deployment controllers find their pods and ReplicaSets (and orphans to adopt) by owner
    index: how many other objects the namespace holds does not matter (adoption: test_deployments)."""
    from apis import meta
    from apis.resources import DEPLOYMENTS, REPLICA_SETS

    tracker = ObjectTracker()
    for i in range(30):  # other pods in the namespace, with and without controllers
        tracker.create(PODS, {**make_pod(f"bystander-{i}"), "metadata": {"name": f"bystander-{i}", "labels": {"app": "x"}}},
                       "default")
    listed: list[str] = []  # lists made by the claiming code
    real_list = ObjectTracker.list

    def listing(self: ObjectTracker, gvr: Any, *args: Any, **kwargs: Any) -> Any:
        if sys._getframe(1).f_code.co_filename.endswith(os.path.join("kubelet", "claim.py")):
            listed.append(gvr.resource)
        return real_list(self, gvr, *args, **kwargs)

    monkeypatch.setattr(ObjectTracker, "list", listing)
    make_sim(tracker=tracker)
    labels = {"app": "web"}
    tracker.create(DEPLOYMENTS, {"metadata": {"name": "web"}, "spec": {
        "replicas": 2, "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}},
        "default")

    def ready() -> bool:
        d = tracker.get(DEPLOYMENTS, "default", "web")
        return (d.get("status") or {}).get("readyReplicas") == 2

    wait_for("the deployment to be ready", ready)
    (rs,) = [o for o in tracker.claimable(REPLICA_SETS, "default", meta.uid(tracker.get(DEPLOYMENTS, "default", "web")))]
    owned = tracker.claimable(PODS, "default", meta.uid(rs))
    assert len([p for p in owned if meta.is_controlled_by(p, rs)]) == 2
    assert listed == []
