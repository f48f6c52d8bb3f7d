"""What ``kubectl describe pod`` and ``kubectl logs`` show against the sandbox (issue 27 item 4): the scheduler's and
kubelet's Events, strict nodes (a pod for an unknown node stays Pending with a FailedScheduling Event), and pod
logs served from ``--pod-logs-dir``."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from testkit.kubectl import MAIN_KUBECTL, Kubectl, requires_kubectl
from testkit.wait import wait_for

from apis.resources import EVENTS, PODS

pytestmark = [pytest.mark.integration, requires_kubectl]


def _kubectl(sandbox, tmp_path: Path) -> Kubectl:
    assert MAIN_KUBECTL is not None
    return Kubectl(MAIN_KUBECTL, sandbox.kubeconfig, tmp_path / "cache")


def _pod(name: str, node: str = "", annotations: dict[str, str] | None = None, containers: int = 1) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": "busybox:1.36"} for i in range(containers)]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": annotations or {}},
            "spec": spec}


def _events(sandbox, pod: str) -> list[tuple[str, str, str]]:
    items = sandbox.tracker.list(EVENTS, "default")["items"]
    return [(e["type"], e["reason"], e["message"]) for e in items if e["involvedObject"]["name"] == pod]


def _phase(sandbox, name: str) -> str:
    return sandbox.tracker.get(PODS, "default", name)["status"].get("phase", "")


def test_describe_pod_shows_the_scheduler_and_kubelet_events(sandbox, tmp_path: Path) -> None:
    k = _kubectl(sandbox, tmp_path)
    sandbox.tracker.create(PODS, _pod("web"), "default")
    wait_for("web running", lambda: _phase(sandbox, "web") == "Running")
    wait_for("web started", lambda: ("Normal", "Started", "Started container c0") in _events(sandbox, "web"))
    described = k("describe", "pod", "web").stdout
    for line in (
        "Successfully assigned default/web to sandbox-node",
        'Container image "busybox:1.36" already present on machine',
        "Created container c0",
        "Started container c0",
    ):
        assert line in described, described
    assert ("Normal", "Scheduled", "Successfully assigned default/web to sandbox-node") in _events(sandbox, "web")
    started = next(e for e in sandbox.tracker.list(EVENTS, "default")["items"] if e["reason"] == "Started")
    assert started["source"] == {"component": "kubelet", "host": "sandbox-node"}
    assert started["involvedObject"]["fieldPath"] == "spec.containers{c0}"

    k("delete", "pod", "web", "--wait=false")
    wait_for("killing", lambda: ("Normal", "Killing", "Stopping container c0") in _events(sandbox, "web"))


def test_a_crash_looping_pod_gets_back_off_events(sandbox) -> None:
    sandbox.tracker.create(PODS, _pod("crashy", annotations={"sandbox.sedna.io/crash-loop": "true"}), "default")
    uid = sandbox.tracker.get(PODS, "default", "crashy")["metadata"]["uid"]
    wait_for("back-off", lambda: ("Warning", "BackOff",
                                  f"Back-off restarting failed container c0 in pod crashy_default({uid})")
             in _events(sandbox, "crashy"))


@pytest.mark.sandbox(strict_nodes=True, nodes=["edge-1"])
def test_strict_nodes_keep_a_pod_for_an_unknown_node_pending_and_say_why(sandbox, tmp_path: Path) -> None:
    k = _kubectl(sandbox, tmp_path)
    assert [row[0] for row in k.table("nodes")[1:]] == ["edge-1", "sandbox-node"]
    sandbox.tracker.create(PODS, _pod("known", node="edge-1"), "default")
    sandbox.tracker.create(PODS, _pod("typo", node="edge-nope"), "default")
    wait_for("known running", lambda: _phase(sandbox, "known") == "Running")
    wait_for("failed scheduling", lambda: any(r == "FailedScheduling" for _, r, _ in _events(sandbox, "typo")))
    assert _phase(sandbox, "typo") == "Pending"
    described = k("describe", "pod", "typo").stdout
    assert 'pod is bound to node "edge-nope", which does not exist' in described
    conditions = sandbox.tracker.get(PODS, "default", "typo")["status"]["conditions"]
    assert conditions[0]["type"] == "PodScheduled" and conditions[0]["status"] == "False"
    assert "edge-nope" not in k("get", "nodes", "-o", "name").stdout
    sandbox.kubelet.add_node("edge-nope")  # the node joins: its pod starts, as a kubelet registering would do
    wait_for("typo running once its node exists", lambda: _phase(sandbox, "typo") == "Running")


def test_lenient_nodes_register_a_pods_node_by_default(sandbox) -> None:
    sandbox.tracker.create(PODS, _pod("anywhere", node="edge-anything"), "default")
    wait_for("running", lambda: _phase(sandbox, "anywhere") == "Running")


@pytest.fixture
def logs_dir(tmp_path: Path) -> Path:
    return tmp_path / "pod-logs"


def test_logs_come_from_the_pod_logs_directory(make_sandbox, logs_dir: Path, tmp_path: Path) -> None:
    sandbox = make_sandbox(pod_logs_dir=logs_dir)
    k = _kubectl(sandbox, tmp_path)
    sandbox.tracker.create(PODS, _pod("worker"), "default")
    sandbox.tracker.create(PODS, _pod("two", containers=2), "default")
    sandbox.tracker.create(PODS, _pod("slow", annotations={"sandbox.sedna.io/start-delay-seconds": "3600"}),
                           "default")
    wait_for("worker running", lambda: _phase(sandbox, "worker") == "Running")
    assert k("logs", "worker").stdout == ""  # nothing written yet: an empty log
    (logs_dir / "default").mkdir(parents=True)
    (logs_dir / "default" / "worker.log").write_text("one\ntwo\nthree\n")
    assert k("logs", "worker").stdout == "one\ntwo\nthree\n"
    assert k("logs", "worker", "--tail=2").stdout == "two\nthree\n"
    assert k("logs", "worker", "--limit-bytes=6").stdout == "one\ntw"
    assert k("logs", "worker", "-c", "c0").stdout == "one\ntwo\nthree\n"
    bad = k("logs", "worker", "-c", "nope", check=False)
    assert bad.returncode != 0 and "container nope is not valid for pod worker" in bad.stderr
    wait_for("two running", lambda: _phase(sandbox, "two") == "Running")
    assert k("logs", "two", "-c", "c1").stdout == ""
    pending = k("logs", "slow", check=False)
    assert pending.returncode != 0
    assert 'container "c0" in pod "slow" is waiting to start: ContainerCreating' in pending.stderr


def test_logs_follow_streams_appended_lines_until_the_pod_ends(make_sandbox, logs_dir: Path, tmp_path: Path) -> None:
    sandbox = make_sandbox(pod_logs_dir=logs_dir)
    k = _kubectl(sandbox, tmp_path)
    sandbox.tracker.create(PODS, _pod("worker"), "default")
    wait_for("worker running", lambda: _phase(sandbox, "worker") == "Running")
    log_file = logs_dir / "default" / "worker.log"
    log_file.parent.mkdir(parents=True)
    log_file.write_text("first\n")
    out_path = tmp_path / "follow.out"
    with out_path.open("w") as out:
        cmd = [k.binary, f"--kubeconfig={k.kubeconfig}", f"--cache-dir={k.cache_dir}", "logs", "-f", "worker"]
        follower = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_for("first line", lambda: out_path.read_text() == "first\n")
            with log_file.open("a") as f:
                f.write("second\n")
            wait_for("appended line", lambda: out_path.read_text() == "first\nsecond\n")
            pod = sandbox.tracker.get(PODS, "default", "worker")
            pod["status"]["phase"] = "Succeeded"
            sandbox.tracker.update(PODS, pod, "default", subresource="status")
            assert follower.wait(timeout=10) == 0
        finally:
            if follower.poll() is None:
                follower.kill()
                follower.wait()


@pytest.mark.sandbox(crd_dirs=[str(Path(__file__).resolve().parents[2] / "charts" / "sedna" / "crds")])
def test_lenient_nodes_register_the_nodes_a_sedna_object_names_before_storing_it(sandbox) -> None:
    from apis.resources import DATASETS, NODES

    sandbox.tracker.create(DATASETS, {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": "d"},
                                      "spec": {"url": "/d.txt", "format": "txt", "nodeName": "edge-far"}}, "default")
    node = sandbox.tracker.get(NODES, "", "edge-far")
    dataset = sandbox.tracker.get(DATASETS, "default", "d")
    assert int(node["metadata"]["resourceVersion"]) < int(dataset["metadata"]["resourceVersion"])


@pytest.mark.sandbox(crd_dirs=[str(Path(__file__).resolve().parents[2] / "charts" / "sedna" / "crds")],
                     strict_nodes=True)
def test_strict_nodes_register_nothing_a_sedna_object_names(sandbox) -> None:
    from apis.resources import DATASETS, NODES

    sandbox.tracker.create(DATASETS, {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": "d"},
                                      "spec": {"url": "/d.txt", "format": "txt", "nodeName": "edge-far"}}, "default")
    assert sandbox.tracker.peek(NODES, "", "edge-far") is None
