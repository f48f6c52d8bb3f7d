"""Sedna-gm test objects: an ElasticAIJob the sandbox's pod simulator runs to completion, its phase, the lease."""

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
