"""Sedna-gm test objects: an ElasticAIJob the sandbox's pod simulator runs to completion, its phase, the lease, the
round reports of a FederatedLearningJob."""

from __future__ import annotations

from typing import Any

from apis import errors


def create_job(cs: Any, name: str, run_seconds: str = "1", namespace: str = "default",
               start_delay_seconds: str = "0") -> None:
    """An ElasticAIJob whose master pod the sandbox starts after ``start_delay_seconds`` (at once by default: the
    tests that use it are not about start-up time), runs for ``run_seconds`` and then succeeds."""
    cs.elasticdl_v1alpha1().elastic_ai_jobs(namespace).create({
        "apiVersion": "elasticdl.org/v1alpha1",
        "kind": "ElasticAIJob",
        "metadata": {"name": name, "namespace": namespace,
                     "annotations": {"sandbox.sedna.io/run-seconds": run_seconds,
                                     "sandbox.sedna.io/start-delay-seconds": start_delay_seconds}},
        "spec": {"jobArgs": ["--model_zoo /model_zoo"], "master": {"image": "elasticdl:ci"}},
    })


def job_phase(cs: Any, name: str, namespace: str = "default") -> str:
    """The job's ``status.phase`` ("" before the first status write)."""
    return (cs.elasticdl_v1alpha1().elastic_ai_jobs(namespace).get(name).get("status") or {}).get("phase") or ""


def lease_holder(cs: Any, namespace: str = "sedna", name: str = "sedna-gm") -> str | None:
    """The lease's holder ("" when released), None when there is no lease."""
    try:
        return cs.coordination_v1().leases(namespace).get(name)["spec"].get("holderIdentity") or ""
    except errors.NotFoundError:
        return None


def fl_round_reports(cs: Any, name: str, namespace: str = "default") -> list[str]:
    """The round reports (``Round <n> reaches at <updateTime>``) a FederatedLearningJob's GM recorded, oldest first:
    Go's GM appends a ``Training`` condition per report; ours shows the latest in its one ``Training`` condition and
    records each report as a ``DoTraining`` Event (named ``<job>.<hex nanoseconds>``: by name is by time)."""
    job = cs.sedna_v1alpha1().federated_learning_jobs(namespace).get(name)
    shown = [c.get("message", "") for c in (job.get("status") or {}).get("conditions") or []
             if c.get("type") == "Training"]
    events = sorted((e for e in cs.core_v1().events(namespace).list()["items"]
                     if e.get("reason") == "DoTraining" and (e.get("involvedObject") or {}).get("name") == name),
                    key=lambda e: e["metadata"]["name"])
    recorded = [e.get("message", "") for e in events]
    return recorded + [m for m in shown if m not in recorded]
