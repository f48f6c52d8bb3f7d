"""kube-apiserver's printers (``pkg/printers/internalversion/printers.go``, release 1.30) for the built-in kinds the
sandbox serves: the Table columns ``kubectl get`` shows, each with the function computing its cell.

As on kube-apiserver, every row carries the cells of every column (``-o wide`` ones, priority 1, included); kubectl
hides the wide ones unless asked. Values the API server would have defaulted (a Service's ``type``, a
Deployment's ``replicas``) are read with the same defaults, since the sandbox stores objects undefaulted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ... import meta
from .eventsv1 import to_core

__all__ = ["Cell", "Column", "PRINTERS", "age", "human_duration", "printer_for", "row_conditions", "since"]

Cell = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Column:
    """One Table column: its definition and the function computing its cell from an object."""

    name: str
    type: str
    cell: Cell
    priority: int = 0
    format: str = ""
    description: str = ""

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description or self.name,
            "priority": self.priority,
        }


def human_duration(seconds: float) -> str:
    """apimachinery's HumanDuration: ``45s``, ``3m20s``, ``5h``, ``3d4h``, ``2y10d`` …"""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 24 * 8:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    if h < 24 * 365 * 8:
        days = h // 24 - (h // 24 // 365) * 365
        return f"{h // 24 // 365}y{days}d" if days else f"{h // 24 // 365}y"
    return f"{h // 24 // 365}y"


def since(timestamp: Any) -> str:
    """translateTimestampSince: the time since an RFC 3339 timestamp, ``<unknown>`` when unset."""
    if not isinstance(timestamp, str) or not timestamp:
        return "<unknown>"
    try:
        return human_duration((datetime.now(timezone.utc) - meta.parse_time(timestamp)).total_seconds())
    except ValueError:
        return "<invalid>"


def age(obj: Mapping[str, Any]) -> str:
    return since(meta.creation_timestamp(obj))


def _name(obj: Mapping[str, Any]) -> str:
    return meta.name(obj)


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def _status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("status") or {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


NAME = Column("Name", "string", _name, format="name", description="Name must be unique within a namespace.")
AGE = Column("Age", "string", age, description="CreationTimestamp: when this object was created.")


def _template_containers(template_path: tuple[str, ...]) -> tuple[Column, Column]:
    """The wide ``Containers`` and ``Images`` columns of a kind with a pod template at ``spec.<path>``."""

    def containers(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        cur: Any = _spec(obj)
        for part in template_path:
            cur = cur.get(part) if isinstance(cur, Mapping) else None
        return [c for c in ((cur or {}).get("containers") or []) if isinstance(c, Mapping)]

    return (
        Column("Containers", "string", lambda o: ",".join(c.get("name", "") for c in containers(o)), priority=1,
               description="Names of each container in the template."),
        Column("Images", "string", lambda o: ",".join(c.get("image", "") for c in containers(o)), priority=1,
               description="Images referenced by each container in the template."),
    )


def _label_selector(selector: Any, empty: str = "<none>") -> str:
    """metav1.FormatLabelSelector: ``a=b,c in (x)``; ``<none>`` for an empty one, ``<error>`` for a bad one."""
    if not isinstance(selector, Mapping):
        return empty
    try:
        text = str(meta.selector_from_label_selector(selector))
    except ValueError:
        return "<error>"
    return text or empty


def _format_labels(labels: Any) -> str:
    """labels.FormatLabels: ``a=b,c=d`` sorted by key, ``<none>`` when empty."""
    if not isinstance(labels, Mapping) or not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


# -- pods ----------------------------------------------------------------------------------------------------------
def _pod_cells(pod: Mapping[str, Any]) -> tuple[str, str, str]:
    """(READY, STATUS, RESTARTS) exactly as printPod computes them."""
    spec, status = _spec(pod), _status(pod)
    restarts, ready_containers, last_restart = 0, 0, ""
    total = len(spec.get("containers") or [])
    reason = status.get("reason") or status.get("phase") or ""
    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for i, container in enumerate(init_statuses):
        restarts += _int(container.get("restartCount"))
        last_restart = max(last_restart, ((container.get("lastState") or {}).get("terminated") or {}).get("finishedAt") or "")
        state = container.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if terminated is not None and _int(terminated.get("exitCode")) == 0:
            continue
        if terminated is not None:
            if terminated.get("reason"):
                reason = "Init:" + terminated["reason"]
            elif _int(terminated.get("signal")):
                reason = f"Init:Signal:{terminated['signal']}"
            else:
                reason = f"Init:ExitCode:{_int(terminated.get('exitCode'))}"
        elif waiting is not None and waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{len(spec.get('initContainers') or [])}"
        initializing = True
        break
    if not initializing:
        restarts, has_running = 0, False
        for container in reversed(status.get("containerStatuses") or []):
            restarts += _int(container.get("restartCount"))
            last_restart = max(
                last_restart, ((container.get("lastState") or {}).get("terminated") or {}).get("finishedAt") or ""
            )
            state = container.get("state") or {}
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated is not None and terminated.get("reason"):
                reason = terminated["reason"]
            elif terminated is not None:
                signal = _int(terminated.get("signal"))
                reason = f"Signal:{signal}" if signal else f"ExitCode:{_int(terminated.get('exitCode'))}"
            elif container.get("ready") and state.get("running") is not None:
                has_running = True
                ready_containers += 1
        if reason == "Completed" and has_running:
            ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
            reason = "Running" if ready else "NotReady"
    if meta.deletion_timestamp(pod):
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif status.get("phase") not in ("Succeeded", "Failed"):
            reason = "Terminating"
    restarts_text = f"{restarts} ({since(last_restart)} ago)" if last_restart else str(restarts)
    return f"{ready_containers}/{total}", reason, restarts_text


def _readiness_gates(pod: Mapping[str, Any]) -> str:
    gates = _spec(pod).get("readinessGates") or []
    if not gates:
        return "<none>"
    conditions = {c.get("type"): c.get("status") for c in _status(pod).get("conditions") or []}
    true = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
    return f"{true}/{len(gates)}"


_POD = [
    NAME,
    Column("Ready", "string", lambda o: _pod_cells(o)[0], description="The aggregate readiness state of this pod for accepting traffic."),
    Column("Status", "string", lambda o: _pod_cells(o)[1], description="The aggregate status of the containers in this pod."),
    Column("Restarts", "string", lambda o: _pod_cells(o)[2], description="The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
    AGE,
    Column("IP", "string", lambda o: _status(o).get("podIP") or "<none>", priority=1),
    Column("Node", "string", lambda o: _spec(o).get("nodeName") or "<none>", priority=1),
    Column("Nominated Node", "string", lambda o: _status(o).get("nominatedNodeName") or "<none>", priority=1),
    Column("Readiness Gates", "string", _readiness_gates, priority=1),
]


def row_conditions(group: str, resource: str, obj: Mapping[str, Any]) -> list[dict[str, str]] | None:
    """The row conditions kube-apiserver adds: ``Completed`` for pods that succeeded or failed."""
    if (group, resource) != ("", "pods"):
        return None
    phase = _status(obj).get("phase")
    if phase == "Succeeded":
        return [{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


# -- workloads -----------------------------------------------------------------------------------------------------
_DEPLOYMENT = [
    NAME,
    Column("Ready", "string", lambda o: f"{_int(_status(o).get('readyReplicas'))}/{_spec(o).get('replicas', 1)}",
           description="Number of the pod with ready state"),
    Column("Up-to-date", "string", lambda o: _int(_status(o).get("updatedReplicas"))),
    Column("Available", "string", lambda o: _int(_status(o).get("availableReplicas"))),
    AGE,
    *_template_containers(("template", "spec")),
    Column("Selector", "string", lambda o: _label_selector(_spec(o).get("selector"), ""), priority=1),
]
_REPLICA_SET = [
    NAME,
    Column("Desired", "integer", lambda o: _spec(o).get("replicas", 1)),
    Column("Current", "integer", lambda o: _int(_status(o).get("replicas"))),
    Column("Ready", "integer", lambda o: _int(_status(o).get("readyReplicas"))),
    AGE,
    *_template_containers(("template", "spec")),
    Column("Selector", "string", lambda o: _label_selector(_spec(o).get("selector")), priority=1),
]


def _job_completions(job: Mapping[str, Any]) -> str:
    succeeded = _int(_status(job).get("succeeded"))
    completions = _spec(job).get("completions")
    if isinstance(completions, int):
        return f"{succeeded}/{completions}"
    parallelism = _int(_spec(job).get("parallelism"))
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def _job_duration(job: Mapping[str, Any]) -> str:
    start, end = _status(job).get("startTime"), _status(job).get("completionTime")
    if not start:
        return ""
    if not end:
        return since(start)
    try:
        return human_duration((meta.parse_time(end) - meta.parse_time(start)).total_seconds())
    except ValueError:
        return "<invalid>"


def _job_status(job: Mapping[str, Any]) -> str:
    true = {c.get("type") for c in _status(job).get("conditions") or [] if c.get("status") == "True"}
    if "Complete" in true:
        return "Complete"
    if "Failed" in true:
        return "Failed"
    if meta.deletion_timestamp(job):
        return "Terminating"
    if "Suspended" in true:
        return "Suspended"
    if "FailureTarget" in true:
        return "FailureTarget"
    return "Running"


_JOB = [
    NAME,
    Column("Status", "string", _job_status, description="Status of the job."),
    Column("Completions", "string", _job_completions),
    Column("Duration", "string", _job_duration, description="Time required to complete the job."),
    AGE,
    *_template_containers(("template", "spec")),
    Column("Selector", "string", lambda o: _label_selector(_spec(o).get("selector")), priority=1),
]


def _bool_ptr(value: Any) -> str:
    return "<unset>" if not isinstance(value, bool) else ("True" if value else "False")


_CRON_JOB = [
    NAME,
    Column("Schedule", "string", lambda o: _spec(o).get("schedule", "")),
    Column("Timezone", "string", lambda o: _spec(o).get("timeZone") or "<none>"),
    Column("Suspend", "boolean", lambda o: _bool_ptr(_spec(o).get("suspend"))),
    Column("Active", "integer", lambda o: len(_status(o).get("active") or [])),
    Column("Last Schedule", "string",
           lambda o: since(_status(o)["lastScheduleTime"]) if _status(o).get("lastScheduleTime") else "<none>"),
    AGE,
    *_template_containers(("jobTemplate", "spec", "template", "spec")),
    Column("Selector", "string",
           lambda o: _label_selector(((_spec(o).get("jobTemplate") or {}).get("spec") or {}).get("selector")), priority=1),
]


def _hpa_metrics(hpa: Mapping[str, Any]) -> str:
    """formatHPAMetrics for Resource metrics (``cpu: 30%/80%``); other metric types show their target only."""
    specs = _spec(hpa).get("metrics") or []
    if not specs:
        return "<none>"
    current = {
        (m.get("resource") or {}).get("name"): (m.get("resource") or {}).get("current") or {}
        for m in _status(hpa).get("currentMetrics") or []
        if m.get("type") == "Resource"
    }
    parts = []
    for spec in specs[:2]:
        kind = spec.get("type", "")
        if kind == "Resource":
            resource = spec.get("resource") or {}
            target, now = resource.get("target") or {}, current.get(resource.get("name")) or {}
            if target.get("averageValue") is not None:
                shown = now.get("averageValue", "<unknown>")
                parts.append(f"{resource.get('name')}: {shown}/{target['averageValue']}")
            else:
                utilization = now.get("averageUtilization")
                shown = f"{utilization}%" if utilization is not None else "<unknown>"
                parts.append(f"{resource.get('name')}: {shown}/{target.get('averageUtilization', '<auto>')}%")
        else:
            target = (spec.get(kind[:1].lower() + kind[1:]) or {}).get("target") or {}
            value = target.get("averageValue", target.get("value", target.get("averageUtilization", "<unset>")))
            parts.append(f"<unknown>/{value}")
    text = ", ".join(parts)
    return text + f" + {len(specs) - 2} more..." if len(specs) > 2 else text


_HPA = [
    NAME,
    Column("Reference", "string",
           lambda o: f"{(_spec(o).get('scaleTargetRef') or {}).get('kind', '')}/{(_spec(o).get('scaleTargetRef') or {}).get('name', '')}"),
    Column("Targets", "string", _hpa_metrics),
    Column("MinPods", "string", lambda o: str(_spec(o)["minReplicas"]) if _spec(o).get("minReplicas") is not None else "<unset>"),
    Column("MaxPods", "string", lambda o: _int(_spec(o).get("maxReplicas"))),
    Column("Replicas", "string", lambda o: _int(_status(o).get("currentReplicas"))),
    AGE,
]


# -- services, config ----------------------------------------------------------------------------------------------
def _service_external_ip(svc: Mapping[str, Any]) -> str:
    spec = _spec(svc)
    kind = spec.get("type") or "ClusterIP"
    external = [ip for ip in spec.get("externalIPs") or [] if isinstance(ip, str)]
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "LoadBalancer":
        ingress = (_status(svc).get("loadBalancer") or {}).get("ingress") or []
        lb = sorted({i.get("ip") or i.get("hostname") for i in ingress if i.get("ip") or i.get("hostname")})
        lb_text = ",".join(lb)
        if len(lb_text) > 16:
            lb_text = lb_text[:13] + "..."
        if external:
            return ",".join([*(lb_text.split(",") if lb_text else []), *external])
        return lb_text or "<pending>"
    if kind == "ExternalName":
        return spec.get("externalName", "")
    return "<unknown>"


def _service_ports(svc: Mapping[str, Any]) -> str:
    pieces = []
    for port in _spec(svc).get("ports") or []:
        protocol = port.get("protocol") or "TCP"
        if _int(port.get("nodePort")) > 0:
            pieces.append(f"{port.get('port')}:{port['nodePort']}/{protocol}")
        else:
            pieces.append(f"{port.get('port')}/{protocol}")
    return ",".join(pieces) or "<none>"


def _cluster_ip(svc: Mapping[str, Any]) -> str:
    ips = _spec(svc).get("clusterIPs") or ([_spec(svc)["clusterIP"]] if _spec(svc).get("clusterIP") else [])
    return ips[0] if ips else "<none>"


_SERVICE = [
    NAME,
    Column("Type", "string", lambda o: _spec(o).get("type") or "ClusterIP"),
    Column("Cluster-IP", "string", _cluster_ip),
    Column("External-IP", "string", _service_external_ip),
    Column("Port(s)", "string", _service_ports),
    AGE,
    Column("Selector", "string", lambda o: _format_labels(_spec(o).get("selector")), priority=1),
]
_CONFIG_MAP = [
    NAME,
    Column("Data", "string", lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {})),
    AGE,
]
_SECRET = [
    NAME,
    Column("Type", "string", lambda o: o.get("type") or "Opaque"),
    Column("Data", "string", lambda o: len(o.get("data") or {})),
    AGE,
]
_LEASE = [
    NAME,
    Column("Holder", "string", lambda o: _spec(o).get("holderIdentity") or ""),
    AGE,
]


# -- cluster ---------------------------------------------------------------------------------------------------------
def _node_status(node: Mapping[str, Any]) -> str:
    ready = next((c for c in _status(node).get("conditions") or [] if c.get("type") == "Ready"), None)
    status = ["Unknown"] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    if _spec(node).get("unschedulable"):
        status.append("SchedulingDisabled")
    return ",".join(status)


def _node_roles(node: Mapping[str, Any]) -> str:
    roles = set()
    for key, value in meta.labels(node).items():
        if key.startswith("node-role.kubernetes.io/") and key[len("node-role.kubernetes.io/"):]:
            roles.add(key[len("node-role.kubernetes.io/"):])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def _node_address(kind: str) -> Cell:
    def cell(node: Mapping[str, Any]) -> str:
        for address in _status(node).get("addresses") or []:
            if address.get("type") == kind:
                return address.get("address", "")
        return "<none>"

    return cell


def _node_info(field: str) -> Cell:
    return lambda o: (_status(o).get("nodeInfo") or {}).get(field) or "<unknown>"


_NODE = [
    NAME,
    Column("Status", "string", _node_status, description="The status of the node"),
    Column("Roles", "string", _node_roles, description="The roles of the node"),
    AGE,
    Column("Version", "string", lambda o: (_status(o).get("nodeInfo") or {}).get("kubeletVersion", "")),
    Column("Internal-IP", "string", _node_address("InternalIP"), priority=1),
    Column("External-IP", "string", _node_address("ExternalIP"), priority=1),
    Column("OS-Image", "string", _node_info("osImage"), priority=1),
    Column("Kernel-Version", "string", _node_info("kernelVersion"), priority=1),
    Column("Container-Runtime", "string", _node_info("containerRuntimeVersion"), priority=1),
]
_NAMESPACE = [
    NAME,
    Column("Status", "string", lambda o: _status(o).get("phase", ""), description="The status of the namespace"),
    AGE,
]
_CRD = [
    NAME,
    Column("Created At", "date", lambda o: meta.creation_timestamp(o), description="CreationTimestamp"),
]


# -- events ------------------------------------------------------------------------------------------------------------
def _event_first_seen(event: Mapping[str, Any]) -> str:
    return since(event.get("firstTimestamp") or event.get("eventTime"))


def _event_last_seen(event: Mapping[str, Any]) -> str:
    series = event.get("series")
    if isinstance(series, Mapping):
        return since(series.get("lastObservedTime"))
    return since(event["lastTimestamp"]) if event.get("lastTimestamp") else _event_first_seen(event)


def _event_count(event: Mapping[str, Any]) -> int:
    series = event.get("series")
    if isinstance(series, Mapping):
        return _int(series.get("count"))
    return _int(event.get("count")) or 1  # singleton events of the new API carry no count


def _event_object(event: Mapping[str, Any]) -> str:
    involved = event.get("involvedObject") or {}
    kind = str(involved.get("kind") or "").lower()
    return f"{kind}/{involved['name']}" if involved.get("name") else kind


def _event_source(event: Mapping[str, Any]) -> str:
    source = event.get("source") or {}
    component = source.get("component") or event.get("reportingComponent") or ""
    instance = source.get("host") or event.get("reportingInstance") or ""
    return f"{component}, {instance}" if instance else component


_EVENT = [
    Column("Last Seen", "string", _event_last_seen),
    Column("Type", "string", lambda o: o.get("type", "")),
    Column("Reason", "string", lambda o: o.get("reason", "")),
    Column("Object", "string", _event_object),
    Column("Subobject", "string", lambda o: (o.get("involvedObject") or {}).get("fieldPath", ""), priority=1),
    Column("Source", "string", _event_source, priority=1),
    Column("Message", "string", lambda o: str(o.get("message") or "").strip()),
    Column("First Seen", "string", _event_first_seen, priority=1),
    Column("Count", "string", _event_count, priority=1),
    Column("Name", "string", _name, priority=1, format="name"),
]


def _of_core_event(column: Column) -> Column:
    cell = column.cell
    return Column(column.name, column.type, lambda o: cell(to_core(o)), column.priority, column.format,
                  column.description)


# (group, resource) → columns; events.k8s.io events are printed from their core/v1 form.
PRINTERS: dict[tuple[str, str], list[Column]] = {
    ("", "pods"): _POD,
    ("", "services"): _SERVICE,
    ("", "configmaps"): _CONFIG_MAP,
    ("", "secrets"): _SECRET,
    ("", "nodes"): _NODE,
    ("", "namespaces"): _NAMESPACE,
    ("", "events"): _EVENT,
    ("events.k8s.io", "events"): [_of_core_event(c) for c in _EVENT],
    ("apps", "deployments"): _DEPLOYMENT,
    ("apps", "replicasets"): _REPLICA_SET,
    ("batch", "jobs"): _JOB,
    ("batch", "cronjobs"): _CRON_JOB,
    ("autoscaling", "horizontalpodautoscalers"): _HPA,
    ("coordination.k8s.io", "leases"): _LEASE,
    ("apiextensions.k8s.io", "customresourcedefinitions"): _CRD,
}


def printer_for(group: str, resource: str) -> list[Column] | None:
    """The columns kube-apiserver prints for a built-in resource, or None (then: Name and Age)."""
    return PRINTERS.get((group, resource))
