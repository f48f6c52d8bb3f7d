"""Helpers shared by the pod simulator tests (importable thanks to conftest.py)."""

from __future__ import annotations

from apis.resources import PODS
from sandbox.simulator import PodSimulator


def make_pod(name: str, **annotations: str) -> dict:
    """A one-container pod in no namespace yet, steered by ``annotations``."""
    return {"metadata": {"name": name, "annotations": annotations}, "spec": {"containers": [{"name": "c", "image": "i"}]}}


def phase(sim: PodSimulator, name: str) -> str:
    """The phase of pod ``default/name`` as ``sim``'s tracker holds it ("" before any)."""
    return (sim.tracker.get(PODS, "default", name).get("status") or {}).get("phase", "")
