"""kube-apiserver's Table columns for the workload kinds (``pkg/printers/internalversion/printers.go``, 1.30):
Deployments, ReplicaSets, Jobs, CronJobs and HorizontalPodAutoscalers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta

from .columns import (
    AGE,
    NAME,
    Column,
    human_duration,
    int_of,
    label_selector,
    since,
    spec_of,
    status_of,
    template_containers,
)

__all__ = ["CRON_JOB", "DEPLOYMENT", "HPA", "JOB", "REPLICA_SET"]

DEPLOYMENT = [
    NAME,
    Column("Ready", "string", lambda o: f"{int_of(status_of(o).get('readyReplicas'))}/{spec_of(o).get('replicas', 1)}",
           description="Number of the pod with ready state"),
    Column("Up-to-date", "string", lambda o: int_of(status_of(o).get("updatedReplicas"))),
    Column("Available", "string", lambda o: int_of(status_of(o).get("availableReplicas"))),
    AGE,
    *template_containers(("template", "spec")),
    Column("Selector", "string", lambda o: label_selector(spec_of(o).get("selector"), ""), priority=1),
]
REPLICA_SET = [
    NAME,
    Column("Desired", "integer", lambda o: spec_of(o).get("replicas", 1)),
    Column("Current", "integer", lambda o: int_of(status_of(o).get("replicas"))),
    Column("Ready", "integer", lambda o: int_of(status_of(o).get("readyReplicas"))),
    AGE,
    *template_containers(("template", "spec")),
    Column("Selector", "string", lambda o: label_selector(spec_of(o).get("selector")), priority=1),
]


def _job_completions(job: Mapping[str, Any]) -> str:
    succeeded = int_of(status_of(job).get("succeeded"))
    completions = spec_of(job).get("completions")
    if isinstance(completions, int):
        return f"{succeeded}/{completions}"
    parallelism = int_of(spec_of(job).get("parallelism"))
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def _job_duration(job: Mapping[str, Any]) -> str:
    start, end = status_of(job).get("startTime"), status_of(job).get("completionTime")
    if not start:
        return ""
    if not end:
        return since(start)
    try:
        return human_duration((meta.parse_time(end) - meta.parse_time(start)).total_seconds())
    except ValueError:
        return "<invalid>"


def _job_status(job: Mapping[str, Any]) -> str:
    true = {c.get("type") for c in status_of(job).get("conditions") or [] if c.get("status") == "True"}
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


JOB = [
    NAME,
    Column("Status", "string", _job_status, description="Status of the job."),
    Column("Completions", "string", _job_completions),
    Column("Duration", "string", _job_duration, description="Time required to complete the job."),
    AGE,
    *template_containers(("template", "spec")),
    Column("Selector", "string", lambda o: label_selector(spec_of(o).get("selector")), priority=1),
]


def _bool_ptr(value: object) -> str:
    return "<unset>" if not isinstance(value, bool) else ("True" if value else "False")


CRON_JOB = [
    NAME,
    Column("Schedule", "string", lambda o: spec_of(o).get("schedule", "")),
    Column("Timezone", "string", lambda o: spec_of(o).get("timeZone") or "<none>"),
    Column("Suspend", "boolean", lambda o: _bool_ptr(spec_of(o).get("suspend"))),
    Column("Active", "integer", lambda o: len(status_of(o).get("active") or [])),
    Column("Last Schedule", "string",
           lambda o: since(status_of(o)["lastScheduleTime"]) if status_of(o).get("lastScheduleTime") else "<none>"),
    AGE,
    *template_containers(("jobTemplate", "spec", "template", "spec")),
    Column("Selector", "string",
           lambda o: label_selector(((spec_of(o).get("jobTemplate") or {}).get("spec") or {}).get("selector")), priority=1),
]


def _hpa_metrics(hpa: Mapping[str, Any]) -> str:
    """formatHPAMetrics for Resource metrics (``cpu: 30%/80%``); other metric types show their target only."""
    specs = spec_of(hpa).get("metrics") or []
    if not specs:
        return "<none>"
    current = {
        (m.get("resource") or {}).get("name"): (m.get("resource") or {}).get("current") or {}
        for m in status_of(hpa).get("currentMetrics") or []
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


HPA = [
    NAME,
    Column("Reference", "string",
           lambda o: f"{(spec_of(o).get('scaleTargetRef') or {}).get('kind', '')}/{(spec_of(o).get('scaleTargetRef') or {}).get('name', '')}"),
    Column("Targets", "string", _hpa_metrics),
    Column("MinPods", "string", lambda o: str(spec_of(o)["minReplicas"]) if spec_of(o).get("minReplicas") is not None else "<unset>"),
    Column("MaxPods", "string", lambda o: int_of(spec_of(o).get("maxReplicas"))),
    Column("Replicas", "string", lambda o: int_of(status_of(o).get("currentReplicas"))),
    AGE,
]
