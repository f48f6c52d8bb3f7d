"""kube-apiserver's printers (``pkg/printers/internalversion/printers.go``, release 1.30) for the built-in kinds the
sandbox serves: the Table columns ``kubectl get`` shows, each with the function computing its cell (the workload
kinds' in ``printers_workloads``; ``Column`` and the shared helpers in ``columns``).

As on kube-apiserver, every row carries the cells of every column (``-o wide`` ones, priority 1, included); kubectl
hides the wide ones unless asked. Values the API server would have defaulted (a Service's ``type``, a
Deployment's ``replicas``) are read with the same defaults, since the sandbox stores objects undefaulted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta

from . import printers_workloads
from .columns import AGE, NAME, Cell, Column, format_labels, int_of, name_of, since, spec_of, status_of
from .eventsv1 import to_core

__all__ = ["PRINTERS", "printer_for", "row_conditions"]


# -- pods ----------------------------------------------------------------------------------------------------------
def _pod_cells(pod: Mapping[str, Any]) -> tuple[str, str, str]:
    """(READY, STATUS, RESTARTS) exactly as printPod computes them."""
    spec, status = spec_of(pod), status_of(pod)
    restarts, ready_containers, last_restart = 0, 0, ""
    total = len(spec.get("containers") or [])
    reason = status.get("reason") or status.get("phase") or ""
    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for i, container in enumerate(init_statuses):
        restarts += int_of(container.get("restartCount"))
        last_restart = max(last_restart, ((container.get("lastState") or {}).get("terminated") or {}).get("finishedAt") or "")
        state = container.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if terminated is not None and int_of(terminated.get("exitCode")) == 0:
            continue
        if terminated is not None:
            if terminated.get("reason"):
                reason = "Init:" + terminated["reason"]
            elif int_of(terminated.get("signal")):
                reason = f"Init:Signal:{terminated['signal']}"
            else:
                reason = f"Init:ExitCode:{int_of(terminated.get('exitCode'))}"
        elif waiting is not None and waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{len(spec.get('initContainers') or [])}"
        initializing = True
        break
    if not initializing:
        restarts, has_running = 0, False
        for container in reversed(status.get("containerStatuses") or []):
            restarts += int_of(container.get("restartCount"))
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
                signal = int_of(terminated.get("signal"))
                reason = f"Signal:{signal}" if signal else f"ExitCode:{int_of(terminated.get('exitCode'))}"
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
    gates = spec_of(pod).get("readinessGates") or []
    if not gates:
        return "<none>"
    conditions = {c.get("type"): c.get("status") for c in status_of(pod).get("conditions") or []}
    true = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
    return f"{true}/{len(gates)}"


_POD = [
    NAME,
    Column("Ready", "string", lambda o: _pod_cells(o)[0], description="The aggregate readiness state of this pod for accepting traffic."),
    Column("Status", "string", lambda o: _pod_cells(o)[1], description="The aggregate status of the containers in this pod."),
    Column("Restarts", "string", lambda o: _pod_cells(o)[2], description="The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
    AGE,
    Column("IP", "string", lambda o: status_of(o).get("podIP") or "<none>", priority=1),
    Column("Node", "string", lambda o: spec_of(o).get("nodeName") or "<none>", priority=1),
    Column("Nominated Node", "string", lambda o: status_of(o).get("nominatedNodeName") or "<none>", priority=1),
    Column("Readiness Gates", "string", _readiness_gates, priority=1),
]


def row_conditions(group: str, resource: str, obj: Mapping[str, Any]) -> list[dict[str, str]] | None:
    """The row conditions kube-apiserver adds: ``Completed`` for pods that succeeded or failed."""
    if (group, resource) != ("", "pods"):
        return None
    phase = status_of(obj).get("phase")
    if phase == "Succeeded":
        return [{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


# -- services, config ----------------------------------------------------------------------------------------------
def _service_external_ip(svc: Mapping[str, Any]) -> str:
    spec = spec_of(svc)
    kind = spec.get("type") or "ClusterIP"
    external = [ip for ip in spec.get("externalIPs") or [] if isinstance(ip, str)]
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "LoadBalancer":
        ingress = (status_of(svc).get("loadBalancer") or {}).get("ingress") or []
        lb = sorted({i.get("ip") or i.get("hostname") for i in ingress if i.get("ip") or i.get("hostname")})
        lb_text = ",".join(lb)
        if len(lb_text) > 16:
            lb_text = lb_text[:13] + "..."
        if external:
            return ",".join([*(lb_text.split(",") if lb_text else []), *external])
        return lb_text or "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName", ""))
    return "<unknown>"


def _service_ports(svc: Mapping[str, Any]) -> str:
    pieces = []
    for port in spec_of(svc).get("ports") or []:
        protocol = port.get("protocol") or "TCP"
        if int_of(port.get("nodePort")) > 0:
            pieces.append(f"{port.get('port')}:{port['nodePort']}/{protocol}")
        else:
            pieces.append(f"{port.get('port')}/{protocol}")
    return ",".join(pieces) or "<none>"


def _cluster_ip(svc: Mapping[str, Any]) -> str:
    ips = spec_of(svc).get("clusterIPs") or ([spec_of(svc)["clusterIP"]] if spec_of(svc).get("clusterIP") else [])
    return ips[0] if ips else "<none>"


_SERVICE = [
    NAME,
    Column("Type", "string", lambda o: spec_of(o).get("type") or "ClusterIP"),
    Column("Cluster-IP", "string", _cluster_ip),
    Column("External-IP", "string", _service_external_ip),
    Column("Port(s)", "string", _service_ports),
    AGE,
    Column("Selector", "string", lambda o: format_labels(spec_of(o).get("selector")), priority=1),
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
    Column("Holder", "string", lambda o: spec_of(o).get("holderIdentity") or ""),
    AGE,
]


# -- cluster ---------------------------------------------------------------------------------------------------------
def _node_status(node: Mapping[str, Any]) -> str:
    ready = next((c for c in status_of(node).get("conditions") or [] if c.get("type") == "Ready"), None)
    status = ["Unknown"] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    if spec_of(node).get("unschedulable"):
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
        for address in status_of(node).get("addresses") or []:
            if address.get("type") == kind:
                return str(address.get("address", ""))
        return "<none>"

    return cell


def _node_info(field: str) -> Cell:
    return lambda o: (status_of(o).get("nodeInfo") or {}).get(field) or "<unknown>"


_NODE = [
    NAME,
    Column("Status", "string", _node_status, description="The status of the node"),
    Column("Roles", "string", _node_roles, description="The roles of the node"),
    AGE,
    Column("Version", "string", lambda o: (status_of(o).get("nodeInfo") or {}).get("kubeletVersion", "")),
    Column("Internal-IP", "string", _node_address("InternalIP"), priority=1),
    Column("External-IP", "string", _node_address("ExternalIP"), priority=1),
    Column("OS-Image", "string", _node_info("osImage"), priority=1),
    Column("Kernel-Version", "string", _node_info("kernelVersion"), priority=1),
    Column("Container-Runtime", "string", _node_info("containerRuntimeVersion"), priority=1),
]
_NAMESPACE = [
    NAME,
    Column("Status", "string", lambda o: status_of(o).get("phase", ""), description="The status of the namespace"),
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
        return int_of(series.get("count"))
    return int_of(event.get("count")) or 1  # singleton events of the new API carry no count


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
    Column("Name", "string", name_of, priority=1, format="name"),
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
    ("apps", "deployments"): printers_workloads.DEPLOYMENT,
    ("apps", "replicasets"): printers_workloads.REPLICA_SET,
    ("batch", "jobs"): printers_workloads.JOB,
    ("batch", "cronjobs"): printers_workloads.CRON_JOB,
    ("autoscaling", "horizontalpodautoscalers"): printers_workloads.HPA,
    ("coordination.k8s.io", "leases"): _LEASE,
    ("apiextensions.k8s.io", "customresourcedefinitions"): _CRD,
}


def printer_for(group: str, resource: str) -> list[Column] | None:
    """The columns kube-apiserver prints for a built-in resource, or None (then: Name and Age)."""
    return PRINTERS.get((group, resource))
