"""Synthetic Kubernetes objects for the benchmarks: realistic Deployment-owned pods and watch-event streams."""

from __future__ import annotations

import random
from typing import Any

import orjson

__all__ = ["make_pod", "make_stream"]


def make_pod(i: int, rv: int, rng: random.Random, namespace: str | None = None) -> dict[str, Any]:
    """A realistic Deployment-owned pod, about 3.5 KB of JSON (in ``team-<i % 37>`` unless ``namespace`` is given)."""
    ns = namespace or f"team-{i % 37}"
    app = f"svc-{i % 211}"
    name = f"{app}-{i:06d}-{rng.randrange(16**5):05x}"
    node = f"node-{i % 500:03d}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": f"{app}-{i:06d}-",
            "namespace": ns,
            "uid": f"{rng.getrandbits(128):032x}",
            "resourceVersion": str(rv),
            "creationTimestamp": "2026-01-02T03:04:05Z",
            "labels": {"app": app, "pod-template-hash": f"{i % 9973:x}", "tier": "backend", "team": ns},
            "annotations": {
                "kubectl.kubernetes.io/restartedAt": "2026-01-02T03:00:00Z",
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "9090",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{app}-{i % 9973:x}",
                    "uid": f"{rng.getrandbits(128):032x}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": f"registry.example.com/{app}:v1.{i % 17}.3",
                    "args": ["--port=8080", "--log-level=info", f"--shard={i % 8}"],
                    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"},
                              {"containerPort": 9090, "name": "metrics", "protocol": "TCP"}],
                    "env": [{"name": f"ENV_{k}", "value": f"value-{k}-{i % 13}"} for k in range(6)],
                    "resources": {"limits": {"cpu": "1", "memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
                    "volumeMounts": [{"name": "data", "mountPath": "/data"},
                                     {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}],
                    "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10,
                                      "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
                    "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 5,
                                       "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "volumes": [
                {"name": "data", "emptyDir": {}},
                {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}},
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "nodeName": node,
            "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ],
            "priority": 0,
            "enableServiceLinks": True,
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": "2026-01-02T03:04:10Z"}
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": f"10.0.{i % 250}.{i % 200}",
            "podIP": f"172.16.{i % 250}.{(i * 7) % 250}",
            "podIPs": [{"ip": f"172.16.{i % 250}.{(i * 7) % 250}"}],
            "startTime": "2026-01-02T03:04:06Z",
            "containerStatuses": [
                {"name": "main", "ready": True, "restartCount": rv % 3, "started": True,
                 "image": f"registry.example.com/{app}:v1.{i % 17}.3",
                 "imageID": f"registry.example.com/{app}@sha256:{rng.getrandbits(256):064x}",
                 "containerID": f"containerd://{rng.getrandbits(256):064x}",
                 "state": {"running": {"startedAt": "2026-01-02T03:04:08Z"}}, "lastState": {}}
            ],
            "qosClass": "Burstable",
        },
    }


def make_stream(n_events: int, n_pods: int, seed: int = 1) -> list[bytes]:
    """Watch-event lines: every pod ADDED, then MODIFIED (90%), DELETED (5%) and new ADDED (5%)."""
    rng = random.Random(seed)
    lines: list[bytes] = []
    rv = 1000
    alive: list[int] = []
    next_id = 0

    def emit(etype: str, i: int) -> None:
        nonlocal rv
        rv += 1
        lines.append(orjson.dumps({"type": etype, "object": make_pod(i, rv, random.Random(i))}))

    while len(lines) < n_events and next_id < n_pods:
        alive.append(next_id)
        emit("ADDED", next_id)
        next_id += 1
    while len(lines) < n_events:
        roll = rng.random()
        if roll < 0.90 and alive:
            emit("MODIFIED", alive[rng.randrange(len(alive))])
        elif roll < 0.95 and alive:
            pos = rng.randrange(len(alive))
            victim = alive[pos]
            last = alive.pop()
            if pos < len(alive):
                alive[pos] = last
            emit("DELETED", victim)
        else:
            alive.append(next_id)
            emit("ADDED", next_id)
            next_id += 1
    return lines
