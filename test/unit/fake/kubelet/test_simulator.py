"""PodSimulator on a real ObjectTracker: pod phases, annotations, client-set status, deployments, nodes."""

from __future__ import annotations

import pytest
from testkit import wait_for

from apis.errors import NotFoundError
from apis.fake import ObjectTracker
from apis.resources import DEPLOYMENTS, NODES, PODS, REPLICA_SETS
from apis.watch import ListOptions
from sandbox.simulator import PodSimulator
from sandbox.steering import ANNOTATION_EXIT_CODE, ANNOTATION_RUN_SECONDS, ANNOTATION_START_DELAY


def make_pod(name: str, node: str = "", **annotations: str) -> dict:
    spec: dict = {"containers": [{"name": "main", "image": "busybox"}, {"name": "side", "image": "envoy"}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "annotations": annotations}, "spec": spec}


def get_pod(sim: PodSimulator, name: str) -> dict:
    return sim.tracker.get(PODS, "default", name)


def phase(pod: dict) -> str:
    return (pod.get("status") or {}).get("phase", "")


def conditions(pod: dict) -> dict[str, str]:
    return {c["type"]: c["status"] for c in (pod.get("status") or {}).get("conditions", [])}


def test_registers_default_node_and_runs_an_unsteered_pod(sim: PodSimulator) -> None:
    node = sim.tracker.get(NODES, "", "sandbox-node")
    assert conditions(node) == {"Ready": "True"} and node["status"]["addresses"][0]["type"] == "InternalIP"
    sim.tracker.create(PODS, make_pod("p"), "default")
    pod = wait_for("the pod", lambda: get_pod(sim, "p"), check=lambda p: phase(p) == "Running")
    assert pod["spec"]["nodeName"] == "sandbox-node"
    assert pod["status"]["hostIP"] == node["status"]["addresses"][0]["address"] and pod["status"]["podIP"]
    assert pod["status"]["startTime"]
    assert conditions(pod) == {"PodScheduled": "True", "Initialized": "True", "ContainersReady": "True", "Ready": "True"}
    statuses = pod["status"]["containerStatuses"]
    assert [(s["name"], s["image"], s["ready"], s["restartCount"]) for s in statuses] == [
        ("main", "busybox", True, 0),
        ("side", "envoy", True, 0),
    ]
    assert all(s["state"]["running"]["startedAt"] for s in statuses)


def test_start_delay_keeps_the_pod_pending_then_runs_it(sim: PodSimulator) -> None:
    created = sim.tracker.create(PODS, make_pod("slow", **{ANNOTATION_START_DELAY: "0.2"}), "default")
    watch = sim.tracker.watch(
        PODS, "default", ListOptions(resource_version=created["metadata"]["resourceVersion"], timeout_seconds=5)
    )
    seen = []
    try:
        for event in watch:  # bounded by timeout_seconds
            seen.append(event.object)
            if phase(event.object) == "Running":
                break
    finally:
        watch.stop()
    assert phase(seen[-1]) == "Running" and seen[-1]["status"]["containerStatuses"][0]["state"]["running"]
    pending = [p for p in seen if phase(p) == "Pending" and "PodScheduled" in conditions(p)]
    assert pending, "the pod never showed a scheduled Pending state during its start delay"
    assert pending[0]["spec"]["nodeName"] == "sandbox-node"
    creating = [p for p in pending if p["status"].get("containerStatuses")]  # after the binding: the kubelet's report
    assert creating and creating[0]["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating"


@pytest.mark.parametrize(("exit_code", "expected_phase", "reason"), [("0", "Succeeded", "Completed"), ("3", "Failed", "Error")])
def test_run_seconds_and_exit_code(sim: PodSimulator, exit_code: str, expected_phase: str, reason: str) -> None:
    sim.tracker.create(
        PODS, make_pod("job", **{ANNOTATION_RUN_SECONDS: "0.1", ANNOTATION_EXIT_CODE: exit_code}), "default"
    )
    done = wait_for("the pod", lambda: get_pod(sim, "job"), check=lambda p: phase(p) in ("Succeeded", "Failed"))
    assert phase(done) == expected_phase
    for status in done["status"]["containerStatuses"]:
        terminated = status["state"]["terminated"]
        assert terminated["exitCode"] == int(exit_code) and terminated["reason"] == reason
        assert terminated["startedAt"] and terminated["finishedAt"] and status["ready"] is False
    assert conditions(done)["Ready"] == "False"


def test_client_set_terminal_status_is_never_overwritten(sim: PodSimulator) -> None:
    tracker = sim.tracker
    tracker.create(PODS, make_pod("mine", **{ANNOTATION_RUN_SECONDS: "0.2", ANNOTATION_EXIT_CODE: "1"}), "default")
    running = wait_for("the pod", lambda: get_pod(sim, "mine"), check=lambda p: phase(p) == "Running")
    running["status"] = {"phase": "Succeeded", "message": "set by the test"}
    tracker.update(PODS, running, "default", subresource="status")
    # A marker pod that runs 0.3 s; once it has finished, the simulator has long passed "mine"'s run time.
    tracker.create(PODS, make_pod("marker", **{ANNOTATION_RUN_SECONDS: "0.3"}), "default")
    wait_for("the pod", lambda: get_pod(sim, "marker"), check=lambda p: phase(p) == "Succeeded")
    assert get_pod(sim, "mine")["status"] == {"phase": "Succeeded", "message": "set by the test"}


def test_client_can_drive_a_pending_pod_to_failed(sim: PodSimulator) -> None:
    tracker = sim.tracker
    tracker.create(PODS, make_pod("held", **{ANNOTATION_START_DELAY: "0.2"}), "default")
    pod = wait_for("the pod", lambda: get_pod(sim, "held"), check=lambda p: p["spec"].get("nodeName"))
    pod = tracker.get(PODS, "default", "held")
    pod["status"] = {"phase": "Failed", "reason": "Evicted"}
    tracker.update(PODS, pod, "default", subresource="status")
    tracker.create(PODS, make_pod("marker", **{ANNOTATION_START_DELAY: "0.3"}), "default")
    wait_for("the pod", lambda: get_pod(sim, "marker"), check=lambda p: phase(p) == "Running")
    assert get_pod(sim, "held")["status"] == {"phase": "Failed", "reason": "Evicted"}


def test_node_not_ready_holds_pods_and_unreadies_running_ones(sim: PodSimulator) -> None:
    sim.add_node("edge", ready=False)
    sim.tracker.create(PODS, make_pod("edge-pod", node="edge"), "default")
    # The single worker handles events in order: once a later pod runs, "edge-pod" was seen and held.
    sim.tracker.create(PODS, make_pod("marker"), "default")
    wait_for("the pod", lambda: get_pod(sim, "marker"), check=lambda p: phase(p) == "Running")
    assert phase(get_pod(sim, "edge-pod")) == "Pending"

    sim.set_node_ready("edge", True)
    running = wait_for("the pod", lambda: get_pod(sim, "edge-pod"), check=lambda p: phase(p) == "Running")
    assert conditions(running)["Ready"] == "True"

    sim.set_node_ready("edge", False)
    unready = wait_for("the pod", lambda: get_pod(sim, "edge-pod"), check=lambda p: conditions(p)["Ready"] == "False")
    assert phase(unready) == "Running" and unready["status"]["containerStatuses"][0]["ready"] is False
    assert conditions(sim.tracker.get(NODES, "", "edge"))["Ready"] == "False"
    with pytest.raises(NotFoundError):
        sim.set_node_ready("no-such-node", True)


def test_pod_pinned_to_an_unknown_node_registers_it(sim: PodSimulator) -> None:
    sim.tracker.create(PODS, make_pod("pinned", node="edge-7"), "default")
    wait_for("the pod", lambda: get_pod(sim, "pinned"), check=lambda p: phase(p) == "Running")
    assert conditions(sim.tracker.get(NODES, "", "edge-7")) == {"Ready": "True"}


def _deployment(replicas: int) -> dict:
    labels = {"app": "web"}
    return {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        },
    }


def _active_pods(sim: PodSimulator) -> list[dict]:
    return [p for p in sim.tracker.list(PODS, "default")["items"] if not p["metadata"].get("deletionTimestamp")]


def test_deployment_replicas_status_and_scale_down(sim: PodSimulator) -> None:
    tracker = sim.tracker
    created = tracker.create(DEPLOYMENTS, _deployment(3), "default")
    status = wait_for(
        "the deployment status",
        lambda: tracker.get(DEPLOYMENTS, "default", "web").get("status", {}),
        check=lambda s: s.get("readyReplicas") == 3,
    )
    assert status["replicas"] == status["availableReplicas"] == status["updatedReplicas"] == 3
    assert status["observedGeneration"] == 1
    assert {c["type"]: c["status"] for c in status["conditions"]}["Available"] == "True"
    pods = _active_pods(sim)
    assert len(pods) == 3
    [rs] = tracker.list(REPLICA_SETS, "default")["items"]  # pods belong to the Deployment's ReplicaSet
    assert rs["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    for pod in pods:
        ref = pod["metadata"]["ownerReferences"][0]
        assert ref["kind"] == "ReplicaSet" and ref["uid"] == rs["metadata"]["uid"] and ref["controller"] is True
        assert pod["metadata"]["labels"]["app"] == "web" and pod["metadata"]["name"].startswith(rs["metadata"]["name"])
        assert phase(pod) == "Running"

    dep = tracker.get(DEPLOYMENTS, "default", "web")
    dep["spec"]["replicas"] = 1
    tracker.update(DEPLOYMENTS, dep, "default")
    status = wait_for(
        "the deployment status",
        lambda: tracker.get(DEPLOYMENTS, "default", "web").get("status", {}),
        check=lambda s: s.get("replicas") == 1 and s.get("observedGeneration") == 2,
    )
    assert status["readyReplicas"] == 1 and len(_active_pods(sim)) == 1

    # A deleted pod is replaced; deleting the deployment garbage-collects its pods.
    tracker.delete(PODS, "default", _active_pods(sim)[0]["metadata"]["name"])
    wait_for("the pod", lambda: _active_pods(sim), check=lambda pods: len(pods) == 1 and phase(pods[0]) == "Running")
    tracker.delete(DEPLOYMENTS, "default", "web")
    assert _active_pods(sim) == []


def test_stop_is_idempotent_and_joins_threads() -> None:
    sim = PodSimulator(ObjectTracker()).start()
    threads = list(sim._threads)
    sim.stop()
    sim.stop()
    assert threads and not any(t.is_alive() for t in threads)
