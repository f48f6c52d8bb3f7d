"""Pod status documents written by the pod simulator, shaped like a kubelet's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta

__all__ = [
    "pending_status",
    "unschedulable_status",
    "running_status",
    "terminated_status",
    "crash_loop_status",
    "with_readiness",
    "has_condition",
]


def pending_status(pod: Mapping[str, Any]) -> dict[str, Any]:
    """Bound, containers being created."""
    now = meta.now_rfc3339()
    status = dict(pod.get("status") or {})
    status.update(
        phase="Pending",
        conditions=[_cond("PodScheduled", True, now)],
        containerStatuses=[
            {
                "name": c.get("name", ""),
                "image": c.get("image", ""),
                "imageID": "",
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {"waiting": {"reason": "ContainerCreating"}},
                "lastState": {},
            }
            for c in _containers(pod)
        ],
    )
    return status


def unschedulable_status(pod: Mapping[str, Any], message: str) -> dict[str, Any]:
    """Pending on a node that does not exist: ``PodScheduled`` False, reason ``Unschedulable``."""
    status = dict(pod.get("status") or {})
    condition = _cond("PodScheduled", False, meta.now_rfc3339())
    condition.update(reason="Unschedulable", message=message)
    status.update(phase="Pending", conditions=[condition])
    return status


def _running(pod: Mapping[str, Any], pod_ip: str, host_ip: str, now: str) -> dict[str, Any]:
    """The pod's status in phase Running on its node (the IPs it already has are kept)."""
    status = dict(pod.get("status") or {})
    pod_ip, host_ip = status.get("podIP") or pod_ip, status.get("hostIP") or host_ip
    status.update(
        phase="Running",
        hostIP=host_ip,
        hostIPs=[{"ip": host_ip}],
        podIP=pod_ip,
        podIPs=[{"ip": pod_ip}],
        startTime=status.get("startTime") or now,
        qosClass=status.get("qosClass") or "BestEffort",
    )
    return status


def running_status(pod: Mapping[str, Any], pod_ip: str, host_ip: str) -> dict[str, Any]:
    """Running and ready, one running containerStatus per container."""
    now = meta.now_rfc3339()
    status = _running(pod, pod_ip, host_ip, now)
    status.update(
        conditions=_started_conditions(now, ready=True),
        containerStatuses=[
            _started_container_status(pod, c, running=True, state={"running": {"startedAt": now}})
            for c in _containers(pod)
        ],
    )
    return status


def terminated_status(pod: Mapping[str, Any], exit_code: int) -> dict[str, Any]:
    """Succeeded (exit code 0) or Failed, containers terminated with Completed/Error."""
    now = meta.now_rfc3339()
    status = dict(pod.get("status") or {})
    reason = "Completed" if exit_code == 0 else "Error"
    started = {
        cs.get("name"): ((cs.get("state") or {}).get("running") or {}).get("startedAt")
        for cs in status.get("containerStatuses") or []
    }
    status.update(
        phase="Succeeded" if exit_code == 0 else "Failed",
        conditions=_started_conditions(now, ready=False, reason="PodCompleted" if exit_code == 0 else "PodFailed"),
        containerStatuses=[
            _started_container_status(
                pod,
                c,
                running=False,
                state={
                    "terminated": {
                        "exitCode": exit_code,
                        "reason": reason,
                        "startedAt": started.get(c.get("name")) or status.get("startTime") or now,
                        "finishedAt": now,
                    }
                },
            )
            for c in _containers(pod)
        ],
    )
    return status


def crash_loop_status(pod: Mapping[str, Any], pod_ip: str, host_ip: str, restarts: int, exit_code: int,
                      back_off: str) -> dict[str, Any]:
    """Running but never ready: every container exited with ``exit_code`` and waits in CrashLoopBackOff, restarted
    ``restarts`` times (as a kubelet reports a container that keeps crashing)."""
    now = meta.now_rfc3339()
    status = _running(pod, pod_ip, host_ip, now)
    names = [c.get("name", "") for c in _containers(pod)]
    conditions = _started_conditions(now, ready=False, reason="ContainersNotReady")
    for cond in conditions:
        if cond["type"] in ("Ready", "ContainersReady"):
            cond["message"] = f"containers with unready status: [{' '.join(names)}]"
    status.update(
        conditions=conditions,
        containerStatuses=[
            {
                **_started_container_status(pod, c, running=False, state={"waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": f"back-off {back_off} restarting failed container={c.get('name', '')} "
                               f"pod={meta.name(pod)}_{meta.namespace(pod)}({meta.uid(pod)})",
                }}),
                "restartCount": restarts,
                "lastState": {"terminated": {"exitCode": exit_code, "reason": "Error", "startedAt": now, "finishedAt": now}},
            }
            for c in _containers(pod)
        ],
    )
    return status


def _containers(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list((pod.get("spec") or {}).get("containers") or [])


def _started_conditions(now: str, ready: bool, reason: str | None = None) -> list[dict[str, Any]]:
    """The conditions of a pod whose containers were started: ``ready`` (with ``reason``) for Ready and
    ContainersReady."""
    return [
        _cond("Initialized", True, now),
        _cond("Ready", ready, now, reason),
        _cond("ContainersReady", ready, now, reason),
        _cond("PodScheduled", True, now),
    ]


def _started_container_status(
    pod: Mapping[str, Any], container: Mapping[str, Any], running: bool, state: dict[str, Any]
) -> dict[str, Any]:
    """The status of a container that was started: ready and started while ``running``."""
    name = container.get("name", "")
    return {
        "name": name,
        "image": container.get("image", ""),
        "imageID": "",
        "containerID": f"sandbox://{meta.uid(pod)}/{name}",
        "ready": running,
        "started": running,
        "restartCount": 0,
        "state": state,
        "lastState": {},
    }


def _cond(ctype: str, ok: bool, now: str, reason: str | None = None) -> dict[str, Any]:
    cond: dict[str, Any] = {"type": ctype, "status": "True" if ok else "False", "lastProbeTime": None, "lastTransitionTime": now}
    if reason:
        cond["reason"] = reason
    return cond


def has_condition(pod: Mapping[str, Any], ctype: str) -> bool:
    return any(c.get("type") == ctype for c in (pod.get("status") or {}).get("conditions") or [])


def with_readiness(pod: Mapping[str, Any], ready: bool) -> dict[str, Any]:
    """The pod's status with Ready/ContainersReady (and container readiness) set to ``ready``."""
    now = meta.now_rfc3339()
    status = meta.deep_copy(pod.get("status") or {})
    for cond in status.get("conditions") or []:
        if cond.get("type") in ("Ready", "ContainersReady"):
            cond["status"] = "True" if ready else "False"
            cond["lastTransitionTime"] = now
            if ready:
                cond.pop("reason", None)
            else:
                cond["reason"] = "NodeNotReady"
    for cs in status.get("containerStatuses") or []:
        cs["ready"] = ready
    return status
