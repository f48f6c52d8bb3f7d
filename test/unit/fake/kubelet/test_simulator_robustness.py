"""No single object stops the pod simulator (issue 11 item 3): absurd steering values are clamped, and an error
on one pod or deployment is logged with its key while every other object keeps being simulated."""

from __future__ import annotations

from kubelet_test_helpers import make_pod, phase
from testkit import wait_for
from testkit.logs import capture_library_logs

from apis.resources import DEPLOYMENTS, PODS
from sandbox.controllers.replicasets import BURST_REPLICAS
from sandbox.simulator import PodSimulator
from sandbox.steering import ANNOTATION_EXIT_CODE, ANNOTATION_RUN_SECONDS, ANNOTATION_START_DELAY


def test_absurd_steering_values_are_clamped_and_later_pods_still_run(sim: PodSimulator) -> None:
    with capture_library_logs() as logs:
        sim.tracker.create(PODS, make_pod("forever", **{ANNOTATION_START_DELAY: "1e308"}), "default")
        sim.tracker.create(PODS, make_pod("inf-run", **{ANNOTATION_RUN_SECONDS: "inf", ANNOTATION_EXIT_CODE: "9" * 400}), "default")
        sim.tracker.create(PODS, make_pod("after"), "default")
        wait_for("a pod created after the absurd ones", lambda: phase(sim, "after"), check=lambda p: p == "Running")
        wait_for("the pod with an infinite run", lambda: phase(sim, "inf-run"), check=lambda p: p == "Running")
    assert phase(sim, "forever") == "Pending"
    assert all(t.is_alive() for t in sim._threads)
    warned = {(e.get("key"), e.get("annotation")) for e in logs if e["log_level"] == "warning"}
    assert ("default/forever", ANNOTATION_START_DELAY) in warned and ("default/inf-run", ANNOTATION_RUN_SECONDS) in warned


def test_a_pod_whose_event_cannot_be_handled_is_logged_and_skipped(sim: PodSimulator, monkeypatch) -> None:
    handle = sim._on_event

    def failing(gvr, event_type, obj):  # noqa: ANN001 - the simulator's own signature
        if obj["metadata"]["name"] == "poison":
            raise TypeError("cannot handle this object")
        handle(gvr, event_type, obj)

    monkeypatch.setattr(sim, "_on_event", failing)
    with capture_library_logs() as logs:
        sim.tracker.create(PODS, make_pod("poison"), "default")
        sim.tracker.create(PODS, make_pod("after"), "default")
        wait_for("a pod created after the poison", lambda: phase(sim, "after"), check=lambda p: p == "Running")
    assert any(e.get("key") == "default/poison" and e["log_level"] == "error" for e in logs)
    assert all(t.is_alive() for t in sim._threads)


def test_a_failing_deployment_sync_is_logged_with_its_key(sim: PodSimulator, monkeypatch) -> None:
    sync = sim.deployments.sync

    def failing(namespace: str, name: str) -> None:
        if name == "broken":
            raise RuntimeError("boom")
        sync(namespace, name)

    monkeypatch.setattr(sim.deployments, "sync", failing)
    with capture_library_logs() as logs:
        sim.tracker.create(DEPLOYMENTS, deployment("broken", 1), "default")
        sim.tracker.create(PODS, make_pod("after"), "default")
        wait_for("a pod created after the broken deployment", lambda: phase(sim, "after"), check=lambda p: p == "Running")
    assert any(e.get("key") == "default/broken" for e in logs)


def test_a_huge_deployment_does_not_starve_the_simulator(sim: PodSimulator) -> None:
    sim.tracker.create(DEPLOYMENTS, deployment("huge", 10**6), "default")
    wait_for("the first burst", lambda: len(sim.tracker.list(PODS, "default")["items"]), check=lambda n: n >= BURST_REPLICAS)
    sim.tracker.create(PODS, make_pod("after"), "default")
    wait_for("a pod created after the huge deployment", lambda: phase(sim, "after"), check=lambda p: p == "Running")
    sim.tracker.delete(DEPLOYMENTS, "default", "huge")  # its pods are collected; the simulator stops creating


def deployment(name: str, replicas: int) -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        },
    }
