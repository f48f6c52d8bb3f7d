"""``kubectl get`` against the sandbox prints the columns kube-apiserver's printers give each built-in kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from testkit.kubectl import MAIN_KUBECTL, Kubectl, requires_kubectl

from apis import meta
from apis.resources import (
    CONFIGMAPS,
    DEPLOYMENTS,
    EVENTS,
    HORIZONTAL_POD_AUTOSCALERS,
    JOBS,
    LEASES,
    NAMESPACES,
    NODES,
    PODS,
    REPLICA_SETS,
    SECRETS,
    SERVICES,
)

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False), requires_kubectl]


@pytest.fixture
def kubectl(sandbox, tmp_path: Path) -> Kubectl:
    return Kubectl(MAIN_KUBECTL, sandbox.kubeconfig, tmp_path / "cache")


def test_events_show_last_seen_type_reason_object_message(sandbox, kubectl: Kubectl) -> None:
    now = meta.now_rfc3339()
    sandbox.tracker.create(EVENTS, {
        "metadata": {"name": "web.1"},
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default", "fieldPath": "spec.containers{c}"},
        "reason": "Started", "message": "Started container c ", "type": "Normal", "count": 3,
        "firstTimestamp": now, "lastTimestamp": now, "source": {"component": "kubelet", "host": "node-1"},
    }, "default")
    rows = kubectl.table("events")
    assert rows[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert rows[1][1:] == ["Normal", "Started", "pod/web", "Started container c"]
    assert rows[1][0].endswith("s")
    wide = kubectl.table("events", "-o", "wide")
    assert wide[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN",
                       "COUNT", "NAME"]
    assert wide[1][4:6] == ["spec.containers{c}", "kubelet, node-1"] and wide[1][8:] == ["3", "web.1"]


def test_leases_show_their_holder(sandbox, kubectl: Kubectl) -> None:
    sandbox.tracker.create(LEASES, {"metadata": {"name": "sedna-gm"}, "spec": {"holderIdentity": "gm-0_abc"}},
                           "default")
    rows = kubectl.table("leases")
    assert rows[0] == ["NAME", "HOLDER", "AGE"] and rows[1][:2] == ["sedna-gm", "gm-0_abc"]


def test_workload_tables(sandbox, kubectl: Kubectl) -> None:
    template = {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}, {"name": "s", "image": "envoy"}]}}
    dep = sandbox.tracker.create(DEPLOYMENTS, {"metadata": {"name": "web"}, "spec": {
        "replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": template}}, "default")
    dep["status"] = {"replicas": 3, "updatedReplicas": 2, "readyReplicas": 1, "availableReplicas": 1}
    sandbox.tracker.update(DEPLOYMENTS, dep, subresource="status")
    rows = kubectl.table("deploy", "-o", "wide")
    assert rows[0] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert rows[1][:4] == ["web", "1/3", "2", "1"] and rows[1][5:] == ["c,s", "nginx:1,envoy", "app=web"]

    rs = sandbox.tracker.create(REPLICA_SETS, {"metadata": {"name": "web-abc"}, "spec": {
        "replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template}}, "default")
    rs["status"] = {"replicas": 2, "readyReplicas": 1}
    sandbox.tracker.update(REPLICA_SETS, rs, subresource="status")
    rows = kubectl.table("rs")
    assert rows[0] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"] and rows[1][:4] == ["web-abc", "2", "2", "1"]

    job = sandbox.tracker.create(JOBS, {"metadata": {"name": "train"}, "spec": {"completions": 2, "template": template}},
                                 "default")
    job["status"] = {"succeeded": 1, "startTime": "2020-01-01T00:00:00Z", "completionTime": "2020-01-01T00:05:00Z",
                     "conditions": [{"type": "Complete", "status": "True"}]}
    sandbox.tracker.update(JOBS, job, subresource="status")
    rows = kubectl.table("jobs")
    assert rows[0] == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert rows[1][:4] == ["train", "Complete", "1/2", "5m"]

    sandbox.tracker.create(HORIZONTAL_POD_AUTOSCALERS, {"metadata": {"name": "web"}, "spec": {
        "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}, "minReplicas": 1,
        "maxReplicas": 4, "metrics": [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]}}, "default")
    rows = kubectl.table("hpa")
    assert rows[0] == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert rows[1][:6] == ["web", "Deployment/web", "cpu: <unknown>/80%", "1", "4", "0"]


def test_pods_services_config_and_cluster_tables(sandbox, kubectl: Kubectl) -> None:
    pod = sandbox.tracker.create(PODS, {"metadata": {"name": "p"}, "spec": {
        "nodeName": "n1", "containers": [{"name": "a", "image": "i"}, {"name": "b", "image": "i"}]}}, "default")
    pod["status"] = {"phase": "Running", "podIP": "10.0.0.7", "containerStatuses": [
        {"name": "a", "ready": True, "restartCount": 0, "state": {"running": {}}},
        {"name": "b", "ready": False, "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
         "lastState": {"terminated": {"exitCode": 1, "finishedAt": meta.now_rfc3339()}}}]}
    sandbox.tracker.update(PODS, pod, subresource="status")
    rows = kubectl.table("pods", "-o", "wide")
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"]
    assert rows[1][:3] == ["p", "1/2", "CrashLoopBackOff"] and rows[1][3].startswith("4 (") and rows[1][5:] == [
        "10.0.0.7", "n1", "<none>", "<none>"]

    sandbox.tracker.create(SERVICES, {"metadata": {"name": "svc"}, "spec": {
        "clusterIP": "10.96.0.10", "selector": {"app": "web"}, "ports": [{"port": 5000, "targetPort": 5000}]}},
        "default")
    rows = kubectl.table("svc", "-o", "wide")
    assert rows[0] == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    assert rows[1][:5] == ["svc", "ClusterIP", "10.96.0.10", "<none>", "5000/TCP"] and rows[1][6] == "app=web"

    sandbox.tracker.create(CONFIGMAPS, {"metadata": {"name": "cm"}, "data": {"a": "1", "b": "2"}}, "default")
    assert kubectl.table("cm", "cm")[1][:2] == ["cm", "2"]
    sandbox.tracker.create(SECRETS, {"metadata": {"name": "s3"}, "type": "Opaque", "data": {"k": "dg=="}}, "default")
    rows = kubectl.table("secret", "s3")
    assert rows[0] == ["NAME", "TYPE", "DATA", "AGE"] and rows[1][:3] == ["s3", "Opaque", "1"]

    sandbox.tracker.create(NODES, {"metadata": {"name": "edge-1", "labels": {"node-role.kubernetes.io/edge": ""}},
                                   "spec": {"unschedulable": True}})
    node = sandbox.tracker.get(NODES, "", "edge-1")
    node["status"] = {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.30.0"},
                      "addresses": [{"type": "InternalIP", "address": "192.168.1.5"}]}
    sandbox.tracker.update(NODES, node, subresource="status")
    rows = kubectl.table("nodes", "edge-1", "-o", "wide")
    assert rows[0][:6] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP"]
    assert rows[1][:3] == ["edge-1", "Ready,SchedulingDisabled", "edge"] and rows[1][4:7] == [
        "v1.30.0", "192.168.1.5", "<none>"]

    sandbox.tracker.create(NAMESPACES, {"metadata": {"name": "team"}, "status": {"phase": "Active"}})
    assert kubectl.table("ns", "team")[1][:2] == ["team", "Active"]
