"""``python -m hack.local_up --elasticaijob``: after the main job, the sample ElasticAIJob followed until it succeeds.

The sample carries ``sandbox.sedna.io/run-seconds`` (the controller copies ``sandbox.sedna.io/*`` job annotations onto
the master pod, so the simulated master runs that long and exits 0); here it gets ``--run-seconds`` instead, and
``sandbox.sedna.io/start-delay-seconds`` (``--start-delay-seconds``: the master stays Pending that long); every change of the job's phase, conditions and replica counts is printed until it has
Succeeded, then the job's events.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import yaml

from ._procs import SAMPLES, pause


def describe(job: dict[str, Any]) -> str:
    status = job.get("status") or {}
    conds = ", ".join(f"{c.get('type')}={c.get('status')}" for c in status.get("conditions") or [])
    reps = status.get("replicaStatuses") or {}
    replicas = " ".join(
        f"{role}:{r.get('active', 0)}/{r.get('succeeded', 0)}/{r.get('failed', 0)}" for role, r in reps.items()
    )
    return f"phase={status.get('phase') or '-':<9} conditions=[{conds}]" + (
        f" replicas(active/succeeded/failed)={replicas}" if replicas else ""
    )


def run_elastic_ai_job(cs: Any, args: argparse.Namespace, say: Any) -> bool:
    from apis import errors

    job = yaml.safe_load((SAMPLES / "elasticaijob.yaml").read_text(encoding="utf-8"))
    md = job.setdefault("metadata", {})
    md.setdefault("namespace", "default")
    annotations = md.setdefault("annotations", {})
    annotations["sandbox.sedna.io/start-delay-seconds"] = str(args.start_delay_seconds)
    annotations["sandbox.sedna.io/run-seconds"] = str(args.run_seconds)
    ns, name = md["namespace"], md["name"]
    try:  # the sandbox, like a cluster, only takes objects in namespaces that exist
        cs.core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    except errors.ApiError as exc:
        if not errors.is_already_exists(exc):
            raise
    jobs = cs.elasticdl_v1alpha1().elastic_ai_jobs(ns)
    jobs.create(job)
    say(f"==> created ElasticAIJob {ns}/{name} (master simulated for {args.run_seconds}s)")

    started = time.monotonic()
    last = ""
    phase = ""
    while time.monotonic() - started < args.timeout:
        try:
            current = jobs.get(name)
        except errors.ApiError as exc:
            say(f"    cannot read the job: {exc}")
            pause(0.5)
            continue
        text = describe(current)
        if text != last:
            say(f"    [{time.monotonic() - started:5.1f}s] {ns}/{name} {text}")
            last = text
        phase = (current.get("status") or {}).get("phase") or ""
        if phase in ("Succeeded", "Failed"):
            break
        pause(0.25)
    if phase == "Succeeded":
        say(f"==> ElasticAIJob {ns}/{name} succeeded")
    elif phase == "Failed":
        say(f"==> ElasticAIJob {ns}/{name} failed")
    else:
        say(f"==> timed out after {args.timeout:.0f}s waiting for {ns}/{name} to succeed")
    for ev in cs.core_v1().events(ns).list()["items"]:
        if (ev.get("involvedObject") or {}).get("name") == name:
            say(f"    event {ev.get('type')} {ev.get('reason')}: {ev.get('message')}")
    return phase == "Succeeded"
