"""The status a kubelet writes when a pod's containers exited: ``Succeeded`` for exit code 0, else ``Failed``, each
container ``terminated`` (``Completed``/``Error``) and the pod no longer ready. Written here from the Pod API (the
worker simulator talks to any API server; it never imports the sandbox's pod simulator)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

__all__ = ["terminated_status"]


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def terminated_status(pod: Mapping[str, Any], exit_code: int) -> dict[str, Any]:
    now = _now()
    status = dict(pod.get("status") or {})
    succeeded = exit_code == 0
    reason = "Completed" if succeeded else "Error"
    previous = {cs.get("name"): cs for cs in status.get("containerStatuses") or [] if isinstance(cs, Mapping)}
    containers = []
    for container in (pod.get("spec") or {}).get("containers") or []:
        name = container.get("name", "")
        old = previous.get(name) or {}
        started = ((old.get("state") or {}).get("running") or {}).get("startedAt") or status.get("startTime") or now
        containers.append({
            "name": name, "image": container.get("image", ""), "imageID": old.get("imageID", ""),
            "containerID": old.get("containerID", ""), "ready": False, "started": False,
            "restartCount": old.get("restartCount", 0), "lastState": old.get("lastState") or {},
            "state": {"terminated": {"exitCode": exit_code, "reason": reason, "startedAt": started,
                                     "finishedAt": now}},
        })
    not_ready = "PodCompleted" if succeeded else "PodFailed"
    conditions = [{"type": t, "status": s, "lastProbeTime": None, "lastTransitionTime": now,
                   **({"reason": not_ready} if s == "False" and t != "PodScheduled" else {})}
                  for t, s in (("PodScheduled", "True"), ("Initialized", "True"), ("ContainersReady", "False"),
                               ("Ready", "False"))]
    status.update(phase="Succeeded" if succeeded else "Failed", conditions=conditions, containerStatuses=containers)
    return status
