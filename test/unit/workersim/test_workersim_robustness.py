"""Failures on purpose and by accident: steered failures, bad annotations, an LC that refuses or is gone, pods that
change under a worker, status-write conflicts, which pods are played and where reports go."""

from __future__ import annotations

import logging

import pytest
from testkit import wait_for
from testkit.workers import RecordingLC, sedna_worker_pod

from apis.errors import ConflictError
from apis.resources import PODS
from workersim import LCClient
from workersim.mounts import PodMounts
from workersim.nodefiles import NodeFiles
from workersim.workerpod import worker_pod

IL = "incrementallearningjob"
NOW = {"sandbox.sedna.io/worker-delay-seconds": "0"}


def train_pod(name="helmet-train-a", annotations=None, node="edge-1", **env):
    base = {"NAMESPACE": "default", "JOB_NAME": "helmet", "WORKER_NAME": f"w-{name}",
            "MODEL_URL": "/home/data/il/output/train/1", **env}
    return sedna_worker_pod(IL, "train", "helmet", base, name=name, node=node, host_dirs=["/il/output/train"],
                            annotations={**NOW, **(annotations or {})})


def terminated(cs, pod):
    status = cs.core_v1().pods("default").get(pod["metadata"]["name"])["status"]
    return status["containerStatuses"][0]["state"]["terminated"]


def test_fail_crash_exits_non_zero_without_a_report(make_simulator, run_pod, lc, phase, cs):
    make_simulator()
    pod = run_pod(train_pod(annotations={"sandbox.sedna.io/worker-fail": "crash",
                                         "sandbox.sedna.io/worker-exit-code": "3"}))
    wait_for("the pod to fail", lambda: phase(pod), check=lambda p: p == "Failed")
    assert lc.reports == []
    assert terminated(cs, pod)["exitCode"] == 3 and terminated(cs, pod)["reason"] == "Error"


def test_fail_report_posts_failed_then_exits_non_zero(make_simulator, run_pod, lc, phase, cs):
    make_simulator()
    eval_pod = sedna_worker_pod(IL, "eval", "helmet", {"NAMESPACE": "default", "JOB_NAME": "helmet",
                                                       "WORKER_NAME": "eval-worker-f", "MODEL_URLS": "/home/data/m.pb"},
                                annotations={**NOW, "sandbox.sedna.io/worker-fail": "report"})
    pod = run_pod(eval_pod)
    wait_for("the pod to fail", lambda: phase(pod), check=lambda p: p == "Failed")
    assert lc.bodies() == [{"name": "eval-worker-f", "namespace": "default", "ownerName": "helmet",
                            "ownerKind": IL, "kind": "eval", "status": "failed"}]
    assert terminated(cs, pod)["exitCode"] == 1


def test_bad_annotations_are_logged_and_ignored_and_never_stop_other_pods(make_simulator, run_pod, lc, phase,
                                                                          caplog):
    caplog.set_level(logging.WARNING, logger="workersim")
    make_simulator()
    bad = run_pod(train_pod("helmet-train-bad", {
        "sandbox.sedna.io/worker-delay-seconds": "soon", "sandbox.sedna.io/worker-metrics": "{not json",
        "sandbox.sedna.io/worker-fail": "maybe", "sandbox.sedna.io/worker-exit-code": "999",
        "sandbox.sedna.io/worker-simulated": "perhaps", "sandbox.sedna.io/worker-rounds": "-4"}))
    good = run_pod(train_pod("helmet-train-good"))
    for pod in (bad, good):
        wait_for("the pod to succeed", lambda pod=pod: phase(pod), check=lambda p: p == "Succeeded")
    assert {b["name"] for b in lc.bodies()} == {"w-helmet-train-bad", "w-helmet-train-good"}
    problems = {(r.msg["annotation"], r.msg["action"].split(":")[0]) for r in caplog.records
                if isinstance(r.msg, dict) and r.msg.get("event") == "bad worker annotation"}
    assert problems == {
        ("sandbox.sedna.io/worker-delay-seconds", "ignored"), ("sandbox.sedna.io/worker-metrics", "ignored"),
        ("sandbox.sedna.io/worker-fail", "ignored"), ("sandbox.sedna.io/worker-exit-code", "clamped to 255"),
        ("sandbox.sedna.io/worker-simulated", "ignored"), ("sandbox.sedna.io/worker-rounds", "clamped to 1")}
    assert {r.msg["pod"] for r in caplog.records if isinstance(r.msg, dict)
            and r.msg.get("event") == "bad worker annotation"} == {"default/helmet-train-bad"}


def test_a_refused_report_is_retried_as_the_sdk_does(make_simulator, run_pod, lc, phase):
    make_simulator(lc_client=LCClient(attempts=5, retry_wait=0.01))
    lc.fail_next = 2
    pod = run_pod(train_pod())
    wait_for("the pod to succeed", lambda: phase(pod), check=lambda p: p == "Succeeded")
    assert lc.refused == 2 and len(lc.bodies()) == 1


def test_an_unreachable_lc_does_not_stop_the_worker(make_simulator, run_pod, lc, phase):
    gone = RecordingLC()
    gone.close()
    make_simulator(default_lc=gone.url, lc_client=LCClient(attempts=2, retry_wait=0.01, timeout=1))
    pod = run_pod(train_pod())
    wait_for("the pod to succeed", lambda: phase(pod), check=lambda p: p == "Succeeded")
    assert lc.reports == []


def test_a_pod_deleted_or_ended_mid_work_stops_its_worker_quietly(make_simulator, run_pod, lc, cs, phase):
    simulator = make_simulator()
    # mid work until stopped: a delay the test never waits out (0.5 s ran out first in a starved test process, and
    # the deleted pod's worker reported before the simulator saw the delete)
    slow = {"sandbox.sedna.io/worker-delay-seconds": "3600"}
    deleted = run_pod(train_pod("helmet-train-del", slow))
    ended = run_pod(train_pod("helmet-train-end", slow))
    wait_for("both workers", simulator.active_workers, check=lambda w: len(w) == 2)
    pods = cs.core_v1().pods("default")
    pods.delete("helmet-train-del")
    current = pods.get("helmet-train-end")
    pods.update_status({**current, "status": {**current["status"], "phase": "Failed", "reason": "Evicted"}})
    wait_for("no worker left", simulator.active_workers, check=lambda w: w == [])
    # once their threads ended, nothing of them can report any more
    wait_for("no worker thread left", simulator.worker_threads, check=lambda t: t == [])
    assert lc.reports == []
    assert pods.get("helmet-train-end")["status"]["reason"] == "Evicted"  # not overwritten
    assert deleted and phase(ended) == "Failed"


def test_status_conflicts_are_retried_from_a_fresh_read(make_simulator, run_pod, cs, phase):
    conflicts = []

    def conflict_once(action):
        if action.subresource == "status" and not conflicts:
            conflicts.append(action.name)
            return True, None, ConflictError("the object has been modified")
        return False, None, None

    make_simulator()
    pod = run_pod(train_pod(annotations={"sandbox.sedna.io/worker-delay-seconds": "0.3"}))
    cs.prepend_reactor("update", "pods", conflict_once)
    wait_for("the pod to succeed", lambda: phase(pod), check=lambda p: p == "Succeeded")
    assert conflicts == [pod["metadata"]["name"]]


@pytest.mark.parametrize("seen", ["ended meanwhile", "replaced by a pod of the same name"])
def test_the_end_of_a_worker_never_overwrites_an_ended_or_other_pod(make_simulator, run_pod, cs, lc, seen):
    simulator = make_simulator()
    pod = run_pod(train_pod(annotations={"sandbox.sedna.io/worker-delay-seconds": "0.2"}))
    writes = []

    def as_seen(action):
        if action.verb == "get" and action.name == pod["metadata"]["name"]:
            current = cs.tracker.get(action.gvr, "default", action.name)
            if seen == "ended meanwhile":
                return True, {**current, "status": {**current["status"], "phase": "Succeeded"}}, None
            return True, {**current, "metadata": {**current["metadata"], "uid": "another-uid"}}, None
        if action.verb == "update" and action.subresource == "status":
            writes.append(action.name)
        return False, None, None

    cs.prepend_reactor("*", "pods", as_seen)
    wait_for("the report", lc.bodies, check=lambda b: len(b) == 1)
    # the end of the worker (its status write, if it made one) comes before its thread ends
    wait_for("no worker thread left", simulator.worker_threads, check=lambda t: t == [])
    assert writes == [] and cs.tracker.get(PODS, "default", pod["metadata"]["name"])["status"]["phase"] == \
        "Running"


def test_only_running_worker_pods_are_played(make_simulator, run_pod, cs, lc):
    simulator = make_simulator()
    pods = cs.core_v1().pods("default")
    pods.create(train_pod("helmet-train-pending"))  # never Running
    plain = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain", "namespace": "default",
                                                              "labels": {"app": "x"}},
             "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    run_pod(plain)
    optout = run_pod(train_pod("helmet-train-optout", {"sandbox.sedna.io/worker-simulated": "false"}))
    other_kind = sedna_worker_pod(IL, "train", "x", {"WORKER_NAME": "w"}, name="unknown-kind")
    other_kind["metadata"]["labels"] = {"elasticaijob.sedna.io/worker-type": "train"}
    run_pod(other_kind)
    # a later positive signal: a worker pod made Running after them is played (the simulator sees pods in order)
    marker = run_pod(train_pod("helmet-train-marker", {"sandbox.sedna.io/worker-delay-seconds": "3600"}))
    wait_for("the marker's worker", simulator.active_workers, check=lambda w: w != [])
    assert simulator.active_workers() == [f"default/{marker['metadata']['name']}"] and lc.reports == []
    assert pods.get(optout["metadata"]["name"])["status"]["phase"] == "Running"


def test_reports_go_to_the_lc_of_the_pods_node_else_to_its_lc_server(make_simulator, run_pod, phase):
    edge2 = RecordingLC()
    fallback = RecordingLC()
    try:
        make_simulator(lc_urls={"edge-2": edge2.url}, default_lc=None)
        on_edge2 = run_pod(train_pod("helmet-train-e2", node="edge-2"))
        elsewhere = run_pod(train_pod("helmet-train-e3", node="edge-3", LC_SERVER=fallback.url))
        for pod in (on_edge2, elsewhere):
            wait_for("the pod to succeed", lambda pod=pod: phase(pod), check=lambda p: p == "Succeeded")
        assert [n for n, _ in edge2.reports] == ["w-helmet-train-e2"]
        assert [n for n, _ in fallback.reports] == ["w-helmet-train-e3"]
    finally:
        edge2.close()
        fallback.close()


def test_node_files_and_pod_mounts_never_leave_the_rootfs(rootfs, tmp_path):
    files = NodeFiles(rootfs)
    (rootfs / "link").symlink_to(tmp_path)
    for path in ("/../outside", "/a/../../outside", "/link/outside"):
        with pytest.raises(ValueError):
            files.path(path)
    pod = worker_pod(sedna_worker_pod(IL, "train", "j", {"WORKER_NAME": "w"}, host_dirs=["/out"]))
    mounts = PodMounts(pod, files)
    try:
        (rootfs / "out" / "link").symlink_to(tmp_path)
        for path in ("/home/data/out/../../outside", "/home/data/out/link/outside", "/elsewhere/x"):
            with pytest.raises((ValueError, OSError)):
                mounts.write(path, b"x")
            assert mounts.read(path) is None and not mounts.is_file(path)
        assert not (tmp_path / "outside").exists()
        mounts.write("/home/data/out/a/b/c.txt", b"data")
        assert mounts.read("/home/data/out/a/b/c.txt") == b"data" and mounts.is_file("/home/data/out/a/b/c.txt")
        assert (rootfs / "out/a/b/c.txt").read_bytes() == b"data"
    finally:
        mounts.close()


def test_a_path_on_no_host_volume_is_pod_private():
    pod = worker_pod(sedna_worker_pod(IL, "train", "j", {"WORKER_NAME": "w"}, host_dirs=["/out/train"],
                                      host_mounts={"/var/lib/hot": "/model-hot-update"}))
    assert pod.host_path("/home/data/out/train/1/model.pb") == "/out/train/1/model.pb"
    assert pod.host_path("/home/data/out/train") == "/out/train"
    assert pod.host_path("/model-hot-update/model_config.json") == "/var/lib/hot/model_config.json"
    assert pod.host_path("/home/data/out/training/x") is None  # a sibling, not under the mount
    assert pod.host_path("/home/data/out/train/../../elsewhere") is None
    assert pod.host_path("/downloads/model.pb") is None and pod.host_path("s3://bucket/key") is None
