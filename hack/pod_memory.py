"""What ``sedna-gm``'s cache transform (``globalmanager.runtime.cachetransform``) saves per pod: a running pod as
kube-apiserver serves it, with the managedFields of its creator and its kubelet, decoded as the informer decodes it,
measured with ``tracemalloc`` before and after the transform. Used by ``hack.bench_gm`` (its ``cache_memory_per_pod``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hack.bench_gm_kinds import elastic_ai_job

__all__ = ["cache_memory_per_pod", "served_pod"]


def _fields_v1(value: Any, depth: int = 0) -> Any:
    """The ``fieldsV1`` set of ``value`` as kube-apiserver's field manager writes it: non-empty maps below the top
    sections marked with ``.``, list items with a merge key as ``k:{...}``, other lists and scalars as leaves."""
    if isinstance(value, dict):
        out: dict[str, Any] = {".": {}} if depth > 1 and value else {}
        out.update({f"f:{k}": _fields_v1(v, depth + 1) for k, v in value.items()})
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for merge_key in ("uid", "mountPath", "name", "type", "ip", "containerPort"):
            if all(merge_key in v for v in value):
                return {f"k:{json.dumps({merge_key: v[merge_key]}, separators=(',', ':'))}": _fields_v1(v, 2)
                        for v in value}
    return {}


def served_pod(i: int) -> dict[str, Any]:
    """An ElasticDL master pod as kube-apiserver serves it once its kubelet reported it running: defaulted spec (the
    service-account token volume included), kubelet status, and the two managedFields entries (the creator's and
    the kubelet's)."""
    from globalmanager.controllers.elasticdl.pods import build_master_pod
    from globalmanager.controllers.elasticdl.spec import parse_spec

    job = elastic_ai_job(f"job-{i:05d}", 1.0)
    job["metadata"]["uid"] = f"5b3c6a2e-0000-4000-8000-{i:012d}"
    pod = build_master_pod(job, parse_spec(job))
    md = pod["metadata"]
    md.update(uid=f"9d1f0c3a-0000-4000-8000-{i:012d}", resourceVersion=str(100000 + i),
              creationTimestamp="2026-01-02T03:04:05Z")
    created = json.loads(json.dumps({"metadata": {k: md[k] for k in ("annotations", "labels", "ownerReferences")},
                                     "spec": pod["spec"]}))  # what the creator sent (defaults are nobody's)
    spec = pod["spec"]
    token = f"kube-api-access-{i % 99999:05d}"
    for c in spec["containers"]:
        c.update(imagePullPolicy="IfNotPresent", terminationMessagePath="/dev/termination-log",
                 terminationMessagePolicy="File", resources=c.get("resources", {}))
        c.setdefault("volumeMounts", []).append({"name": token, "readOnly": True,
                                                 "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"})
    spec.update(dnsPolicy="ClusterFirst", enableServiceLinks=True, nodeName="node-1", preemptionPolicy="PreemptLowerPriority",
                priority=0, schedulerName="default-scheduler", securityContext={}, serviceAccount="default",
                serviceAccountName="default", terminationGracePeriodSeconds=30,
                tolerations=[{"key": f"node.kubernetes.io/{t}", "operator": "Exists", "effect": "NoExecute",
                              "tolerationSeconds": 300} for t in ("not-ready", "unreachable")])
    spec.setdefault("volumes", []).append({"name": token, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                      "fieldPath": "metadata.namespace"}}]}}]}})
    t = "2026-01-02T03:04:07Z"
    name = spec["containers"][0]["name"]
    pod["status"] = {
        "phase": "Running", "hostIP": "10.0.0.11", "hostIPs": [{"ip": "10.0.0.11"}], "podIP": f"10.244.1.{i % 250}",
        "podIPs": [{"ip": f"10.244.1.{i % 250}"}], "qosClass": "Burstable", "startTime": t,
        "conditions": [{"type": ct, "status": "True", "lastProbeTime": None, "lastTransitionTime": t}
                       for ct in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                                  "PodScheduled")],
        "containerStatuses": [{"name": name, "image": "docker.io/elasticdl/elasticdl:bench",
                               "imageID": "docker.io/elasticdl/elasticdl@sha256:" + "ab" * 32,
                               "containerID": "containerd://" + f"{i:064x}", "ready": True, "restartCount": 0,
                               "started": True, "lastState": {}, "state": {"running": {"startedAt": t}}}],
    }
    md["managedFields"] = [
        {"manager": "sedna-gm", "operation": "Update", "apiVersion": "v1", "time": "2026-01-02T03:04:05Z",
         "fieldsType": "FieldsV1", "fieldsV1": _fields_v1(created)},
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": t, "fieldsType": "FieldsV1",
         "fieldsV1": _fields_v1({"status": pod["status"]}), "subresource": "status"},
    ]
    return pod


def cache_memory_per_pod(count: int = 2000) -> dict[str, Any]:
    """Bytes a decoded ``served_pod`` holds (``tracemalloc``, ``count`` distinct pods decoded from JSON as the
    informer decodes them), as served and after ``strip_unread_fields``."""
    import gc
    import tracemalloc

    import orjson

    from globalmanager.runtime.cachetransform import strip_unread_fields

    raw = [orjson.dumps(served_pod(i)) for i in range(count)]

    def held(transform: Callable[[Any], Any]) -> tuple[float, list[Any]]:
        """Bytes per pod the transformed objects hold, and the objects (measured before they are returned)."""
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        kept = [transform(orjson.loads(b)) for b in raw]
        gc.collect()
        size = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        return size / count, kept

    before = held(lambda obj: obj)[0]  # the served objects are freed before the stripped ones are decoded
    after, stripped = held(strip_unread_fields)
    return {"pods": count, "json_bytes": round(sum(map(len, raw)) / count),
            "json_bytes_without_managed_fields": round(sum(len(orjson.dumps(obj)) for obj in stripped) / count),
            "decoded_bytes": round(before), "decoded_bytes_stripped": round(after),
            "saved_bytes": round(before - after), "saved_share": round(1 - after / before, 3)}
