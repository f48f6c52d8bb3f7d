"""The simulated Deployment and ReplicaSet controllers on a real ObjectTracker (and a FakeClientset): ReplicaSets
per template, rolling and Recreate updates, revisions and history, status and conditions with kube's reasons,
progress deadline, pod creation failures, direct ReplicaSets, adoption, scaling, pausing, cascading deletion."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from testkit import wait_for

from apis import meta
from apis.fake import FakeClientset, ObjectTracker
from apis.resources import DEPLOYMENTS, EVENTS, PODS, REPLICA_SETS
from apis.watch import DELETED, ListOptions
from sandbox.controllers.rollout import pod_template_hash
from sandbox.simulator import PodSimulator
from sandbox.steering import ANNOTATION_CRASH_LOOP, ANNOTATION_FAIL_POD_CREATION

NS = "default"


@pytest.fixture
def sim() -> Iterator[PodSimulator]:
    simulator = PodSimulator(ObjectTracker(), tick=0.01).start()
    yield simulator
    simulator.stop()


def deployment(name: str = "web", replicas: int = 2, image: str = "nginx:1", **spec: object) -> dict:
    labels = {"app": name}
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": image}]}},
            **spec,
        },
    }


def conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def replica_sets(tracker, app: str = "web") -> list[dict]:
    items = tracker.list(REPLICA_SETS, NS, ListOptions(label_selector=f"app={app}"))["items"]
    return sorted(items, key=lambda rs: int(meta.annotations(rs).get("deployment.kubernetes.io/revision", "0")))


def active_pods(tracker, app: str = "web") -> list[dict]:
    pods = tracker.list(PODS, NS, ListOptions(label_selector=f"app={app}"))["items"]
    return [p for p in pods if p["status"].get("phase") not in ("Succeeded", "Failed")]


def rolled_out(tracker, name: str = "web") -> dict:
    """The Deployment once its rollout completed (NewReplicaSetAvailable for its current generation)."""
    return wait_for(
        f"deployment {name} rolled out",
        lambda: tracker.get(DEPLOYMENTS, NS, name),
        check=lambda d: d.get("status", {}).get("observedGeneration") == d["metadata"]["generation"]
        and conditions(d).get("Progressing", {}).get("reason") == "NewReplicaSetAvailable"
        and d["status"].get("availableReplicas", 0) == d["spec"]["replicas"],
    )


def change_image(tracker, image: str, name: str = "web") -> None:
    d = tracker.get(DEPLOYMENTS, NS, name)
    d["spec"]["template"]["spec"]["containers"][0]["image"] = image
    tracker.update(DEPLOYMENTS, d, NS)


def test_a_deployment_gets_a_replica_set_with_hash_revision_and_status(sim: PodSimulator) -> None:
    tracker = sim.tracker
    created = tracker.create(DEPLOYMENTS, deployment(replicas=2), NS)
    d = rolled_out(tracker)
    [rs] = replica_sets(tracker)
    pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert pod_hash == pod_template_hash(created["spec"]["template"])
    assert rs["metadata"]["name"] == f"web-{pod_hash}"
    assert rs["metadata"]["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                                  "uid": created["metadata"]["uid"], "controller": True,
                                                  "blockOwnerDeletion": True}]
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", "pod-template-hash": pod_hash}}
    assert rs["spec"]["template"]["metadata"]["labels"] == {"app": "web", "pod-template-hash": pod_hash}
    assert {k: v for k, v in rs["metadata"]["annotations"].items() if k.startswith("deployment.kubernetes.io/")} == {
        "deployment.kubernetes.io/revision": "1",
        "deployment.kubernetes.io/desired-replicas": "2",
        "deployment.kubernetes.io/max-replicas": "3",  # 2 + maxSurge 25% rounded up
    }
    assert rs["status"] == {"replicas": 2, "fullyLabeledReplicas": 2, "readyReplicas": 2, "availableReplicas": 2,
                            "observedGeneration": 1}
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert {k: d["status"][k] for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")} == {
        "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2}
    assert "unavailableReplicas" not in d["status"]  # zero is omitted, as kube-apiserver serializes it
    assert [c["type"] for c in d["status"]["conditions"]] == ["Available", "Progressing"]
    available, progressing = conditions(d)["Available"], conditions(d)["Progressing"]
    assert (available["status"], available["reason"], available["message"]) == (
        "True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
    assert (progressing["status"], progressing["message"]) == ("True", f'ReplicaSet "web-{pod_hash}" has successfully progressed.')
    pods = active_pods(tracker)
    assert len(pods) == 2 and all(p["metadata"]["generateName"] == f"web-{pod_hash}-" for p in pods)
    assert all(p["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"] for p in pods)
    messages = {e["message"] for e in tracker.list(EVENTS, NS)["items"]}
    assert f"Scaled up replica set web-{pod_hash} from 0 to 2" in messages
    assert any(m.startswith(f"Created pod: web-{pod_hash}-") for m in messages)


def test_rolling_update_stays_within_max_surge_and_max_unavailable(sim: PodSimulator) -> None:
    tracker = sim.tracker
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    tracker.create(DEPLOYMENTS, deployment(replicas=4, strategy=strategy), NS)
    rolled_out(tracker)
    [first] = replica_sets(tracker)
    sizes = {first["metadata"]["name"]: 4}
    available = {first["metadata"]["name"]: 4}
    watch = tracker.watch(REPLICA_SETS, NS, ListOptions(resource_version=tracker.resource_version()))
    change_image(tracker, "nginx:2")
    d = rolled_out(tracker)
    watch.stop()
    for event in watch:
        name = event.object["metadata"]["name"]
        sizes[name] = event.object["spec"]["replicas"]
        available[name] = event.object.get("status", {}).get("availableReplicas", 0)
        assert sum(sizes.values()) <= 5  # replicas + maxSurge
        assert sum(available.values()) >= 4  # replicas - maxUnavailable
    old, new = replica_sets(tracker)
    assert (old["spec"]["replicas"], new["spec"]["replicas"]) == (0, 4)  # the old one is kept for history
    assert meta.annotations(new)["deployment.kubernetes.io/revision"] == "2"
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert conditions(d)["Progressing"]["message"] == f'ReplicaSet "{new["metadata"]["name"]}" has successfully progressed.'
    pods = active_pods(tracker)
    assert len(pods) == 4 and {p["spec"]["containers"][0]["image"] for p in pods} == {"nginx:2"}


def test_recreate_removes_every_old_pod_before_creating_new_ones(sim: PodSimulator) -> None:
    tracker = sim.tracker
    tracker.create(DEPLOYMENTS, deployment(replicas=3, strategy={"type": "Recreate"}), NS)
    rolled_out(tracker)
    old_pods = {p["metadata"]["name"] for p in active_pods(tracker)}
    watch = tracker.watch(PODS, NS, ListOptions(resource_version=tracker.resource_version()))
    change_image(tracker, "nginx:2")
    rolled_out(tracker)
    watch.stop()
    remaining = set(old_pods)
    for event in watch:
        name = event.object["metadata"]["name"]
        if event.type == DELETED:
            remaining.discard(name)
        elif name not in old_pods:
            assert not remaining, f"new pod {name} created while old pods {remaining} still existed"
    assert {p["spec"]["containers"][0]["image"] for p in active_pods(tracker)} == {"nginx:2"}


def test_revision_history_limit_deletes_the_oldest_replica_sets(sim: PodSimulator) -> None:
    tracker = sim.tracker
    tracker.create(DEPLOYMENTS, deployment(replicas=1, revisionHistoryLimit=1), NS)
    rolled_out(tracker)
    for image in ("nginx:2", "nginx:3", "nginx:4"):
        change_image(tracker, image)
        rolled_out(tracker)
    rss = wait_for("old replica sets cleaned up", lambda: replica_sets(tracker), check=lambda r: len(r) == 2)
    assert [meta.annotations(rs)["deployment.kubernetes.io/revision"] for rs in rss] == ["3", "4"]
    assert [rs["spec"]["replicas"] for rs in rss] == [0, 1]


def test_crash_looping_pods_exceed_the_progress_deadline(sim: PodSimulator) -> None:
    tracker = sim.tracker
    spec = deployment(replicas=2, progressDeadlineSeconds=1)
    spec["metadata"]["annotations"] = {ANNOTATION_CRASH_LOOP: "true"}  # on the Deployment: its pods crash
    tracker.create(DEPLOYMENTS, spec, NS)
    d = wait_for("the deadline", lambda: tracker.get(DEPLOYMENTS, NS, "web"),
                 check=lambda d: conditions(d).get("Progressing", {}).get("reason") == "ProgressDeadlineExceeded")
    [rs] = replica_sets(tracker)
    progressing, available = conditions(d)["Progressing"], conditions(d)["Available"]
    assert progressing["status"] == "False"
    assert progressing["message"] == f'ReplicaSet "{rs["metadata"]["name"]}" has timed out progressing.'
    assert (available["status"], available["reason"]) == ("False", "MinimumReplicasUnavailable")
    assert d["status"]["unavailableReplicas"] == 2 and "availableReplicas" not in d["status"]
    for pod in active_pods(tracker):
        container = pod["status"]["containerStatuses"][0]
        assert pod["status"]["phase"] == "Running" and container["ready"] is False
        assert container["state"]["waiting"]["reason"] == "CrashLoopBackOff" and container["restartCount"] >= 1
        assert container["lastState"]["terminated"]["exitCode"] == 1


def test_pods_that_cannot_be_created_set_replica_failure(sim: PodSimulator) -> None:
    tracker = sim.tracker
    spec = deployment(replicas=2)
    spec["spec"]["template"]["metadata"]["annotations"] = {ANNOTATION_FAIL_POD_CREATION: "exceeded quota: compute"}
    tracker.create(DEPLOYMENTS, spec, NS)
    d = wait_for("ReplicaFailure", lambda: tracker.get(DEPLOYMENTS, NS, "web"),
                 check=lambda d: "ReplicaFailure" in conditions(d))
    [rs] = replica_sets(tracker)
    message = f'pods "{rs["metadata"]["name"]}-" is forbidden: exceeded quota: compute'
    failure = conditions(rs)["ReplicaFailure"]
    assert (failure["status"], failure["reason"], failure["message"]) == ("True", "FailedCreate", message)
    assert (conditions(d)["ReplicaFailure"]["reason"], conditions(d)["ReplicaFailure"]["message"]) == ("FailedCreate", message)
    assert conditions(d)["Available"]["status"] == "False" and active_pods(tracker) == []
    assert any(e["reason"] == "FailedCreate" and e["type"] == "Warning" for e in tracker.list(EVENTS, NS)["items"])


def test_replica_set_created_directly_adopts_replaces_and_scales(sim: PodSimulator) -> None:
    tracker = sim.tracker
    orphan = tracker.create(PODS, {"metadata": {"name": "orphan", "labels": {"app": "db"}},
                                   "spec": {"containers": [{"name": "c", "image": "pg"}]}}, NS)
    rs = tracker.create(REPLICA_SETS, {"metadata": {"name": "db"}, "spec": {
        "replicas": 2, "minReadySeconds": 1, "selector": {"matchLabels": {"app": "db"}},
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "pg"}]}}}}, NS)
    wait_for("ready", lambda: tracker.get(REPLICA_SETS, NS, "db").get("status", {}), check=lambda s: s.get("readyReplicas") == 2)
    assert tracker.get(REPLICA_SETS, NS, "db").get("status", {}).get("availableReplicas", 0) < 2  # minReadySeconds not over
    wait_for("available", lambda: tracker.get(REPLICA_SETS, NS, "db").get("status", {}),
             check=lambda s: s.get("availableReplicas") == 2)
    adopted = tracker.get(PODS, NS, "orphan")
    assert adopted["metadata"]["uid"] == orphan["metadata"]["uid"]
    assert meta.get_controller_of(adopted)["uid"] == rs["metadata"]["uid"]
    assert len(active_pods(tracker, "db")) == 2

    tracker.delete(PODS, NS, "orphan")
    wait_for("a replacement", lambda: active_pods(tracker, "db"),
             check=lambda pods: len(pods) == 2 and "orphan" not in {p["metadata"]["name"] for p in pods})
    current = tracker.get(REPLICA_SETS, NS, "db")
    current["spec"]["replicas"] = 1
    tracker.update(REPLICA_SETS, current, NS)
    wait_for("scaled down", lambda: tracker.get(REPLICA_SETS, NS, "db").get("status", {}),
             check=lambda s: s.get("replicas") == 1 and s.get("observedGeneration") == 2)
    assert len(active_pods(tracker, "db")) == 1


def test_scaling_and_pausing(sim: PodSimulator) -> None:
    tracker = sim.tracker
    tracker.create(DEPLOYMENTS, deployment(replicas=2), NS)
    rolled_out(tracker)
    d = tracker.get(DEPLOYMENTS, NS, "web")
    d["spec"]["replicas"] = 4
    tracker.update(DEPLOYMENTS, d, NS)
    d = wait_for("scaled", lambda: tracker.get(DEPLOYMENTS, NS, "web"),
                 check=lambda d: d["status"].get("availableReplicas") == 4)
    [rs] = replica_sets(tracker)  # a scale is not a rollout
    assert rs["spec"]["replicas"] == 4 and meta.annotations(rs)["deployment.kubernetes.io/desired-replicas"] == "4"

    d["spec"]["paused"] = True
    tracker.update(DEPLOYMENTS, d, NS)
    wait_for("paused", lambda: tracker.get(DEPLOYMENTS, NS, "web"),
             check=lambda d: conditions(d).get("Progressing", {}).get("reason") == "DeploymentPaused")
    change_image(tracker, "nginx:2")
    paused = wait_for("observed", lambda: tracker.get(DEPLOYMENTS, NS, "web"),
                      check=lambda d: d["status"].get("observedGeneration") == d["metadata"]["generation"])
    assert conditions(paused)["Progressing"]["status"] == "Unknown" and len(replica_sets(tracker)) == 1
    paused["spec"]["paused"] = False
    tracker.update(DEPLOYMENTS, paused, NS)
    rolled_out(tracker)
    assert len(replica_sets(tracker)) == 2


def test_deleting_a_deployment_cascades_to_replica_sets_and_pods() -> None:
    cs = FakeClientset()
    sim = PodSimulator(cs.tracker, tick=0.01).start()
    try:
        cs.apps_v1().deployments(NS).create({"apiVersion": "apps/v1", "kind": "Deployment", **deployment(replicas=2)})
        rolled_out(cs.tracker)
        cs.apps_v1().deployments(NS).delete("web")
        assert replica_sets(cs.tracker) == [] and cs.core_v1().pods(NS).list()["items"] == []
    finally:
        sim.stop()
