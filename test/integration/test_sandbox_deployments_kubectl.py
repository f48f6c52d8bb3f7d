"""Deployments on the sandbox as kubectl sees them: ReplicaSets, rollout status/history/undo, scale, a rollout that
exceeds its progress deadline, cascading delete."""

from __future__ import annotations

from pathlib import Path

import pytest
from testkit import wait_for
from testkit.kubectl import MAIN_KUBECTL, Kubectl, requires_kubectl

from apis.resources import PODS, REPLICA_SETS

pytestmark = [pytest.mark.integration, requires_kubectl]

CRASHING = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: bad
  annotations: {sandbox.sedna.io/crash-loop: "true"}
spec:
  replicas: 1
  progressDeadlineSeconds: 1
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: bad}}
    spec: {containers: [{name: c, image: busybox}]}
"""


@pytest.fixture
def kubectl(sandbox, tmp_path: Path) -> Kubectl:
    return Kubectl(MAIN_KUBECTL, sandbox.kubeconfig, tmp_path / "cache")


def test_rollout_status_replica_sets_history_undo_scale_delete(sandbox, kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    assert 'deployment "web" successfully rolled out' in kubectl("rollout", "status", "deploy/web", "--timeout=20s").stdout
    rows = kubectl.table("rs")
    assert rows[0] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert rows[1][0].startswith("web-") and rows[1][1:4] == ["2", "2", "2"]
    first_rs = rows[1][0]

    kubectl("set", "image", "deployment/web", "nginx=nginx:2")
    assert "successfully rolled out" in kubectl("rollout", "status", "deploy/web", "--timeout=20s").stdout
    rows = {r[0]: r[1:4] for r in kubectl.table("rs")[1:]}
    assert rows[first_rs] == ["0", "0", "0"] and len(rows) == 2
    history = kubectl("rollout", "history", "deploy/web").stdout
    assert "REVISION" in history and "1" in history.split() and "2" in history.split()

    kubectl("rollout", "undo", "deploy/web")
    assert "successfully rolled out" in kubectl("rollout", "status", "deploy/web", "--timeout=20s").stdout
    images = {p["spec"]["containers"][0]["image"] for p in sandbox.tracker.list(PODS, "default")["items"]}
    assert images == {"nginx:1"}
    back = sandbox.tracker.get(REPLICA_SETS, "default", first_rs)
    assert back["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert back["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"

    assert "deployment.apps/web scaled" in kubectl("scale", "deploy/web", "--replicas=3").stdout
    assert "successfully rolled out" in kubectl("rollout", "status", "deploy/web", "--timeout=20s").stdout
    assert kubectl.table("deploy", "web")[1][:4] == ["web", "3/3", "3", "3"]

    kubectl("delete", "deployment", "web")
    wait_for("garbage collection", lambda: sandbox.tracker.list(PODS, "default")["items"], check=lambda items: not items)
    assert sandbox.tracker.list(REPLICA_SETS, "default")["items"] == []


def test_rollout_status_reports_an_exceeded_progress_deadline(sandbox, kubectl: Kubectl) -> None:
    kubectl.apply(CRASHING)
    result = kubectl("rollout", "status", "deploy/bad", "--timeout=30s", check=False)
    assert result.returncode != 0 and 'deployment "bad" exceeded its progress deadline' in result.stderr
    pods = kubectl.table("pods", "-l", "app=bad")
    assert pods[1][1:3] == ["0/1", "CrashLoopBackOff"]
