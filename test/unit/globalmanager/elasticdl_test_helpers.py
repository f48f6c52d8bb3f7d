"""Shared steps of the ElasticAIJob controller tests (the harness itself is built by conftest's fixtures)."""

from __future__ import annotations

from typing import Any

KEY = "default/mnist"
MASTER = "elasticdl-mnist-master"


def started(make_harness: Any, new_job: Any, *extra: dict[str, Any], **spec: Any) -> Any:
    """A harness (holding ``extra`` objects too) whose job has had its first sync: master pod created, caches
    refreshed."""
    h = make_harness(new_job(**spec), *extra)
    h.refresh()
    assert h.controller.sync(KEY) is None
    h.refresh()
    return h


def conditions(job: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The job's status conditions by type."""
    return {c["type"]: c for c in job["status"].get("conditions", [])}
