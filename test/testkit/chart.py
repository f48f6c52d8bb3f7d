"""The Helm chart (``charts/sedna``) rendered by Helm's own engine (the ``helm-python-sdk`` wheel bundles Helm's Go
SDK), and its objects created in a sandbox.

    from testkit.chart import render_chart, chart_objects
    docs = chart_objects({"edge": {"tls": {"enabled": True, ...}}})   # every rendered object, parsed

A test calling these skips (with the reason) when the renderer is not installed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

from .procs import REPO

__all__ = ["CHART", "RELEASE", "NAMESPACE", "chart_objects", "find", "helm", "render_chart"]

CHART = REPO / "charts" / "sedna"
RELEASE = "sedna"
NAMESPACE = "sedna"


def helm() -> Any:
    """The ``helm_python`` module; skips the calling test when it is not installed."""
    import pytest

    return pytest.importorskip("helm_python", reason="helm-python-sdk (Helm's engine) is not installed: "
                                                       "pip install -e '.[test]'")


def render_chart(values: dict[str, Any] | None = None, release: str = RELEASE, namespace: str = NAMESPACE,
                 is_upgrade: bool = False) -> dict[str, str]:
    """``helm template``: template path → rendered text (NOTES.txt included), as an install (or an upgrade)."""
    engine = helm()
    with engine.Chart.load(str(CHART)) as chart:
        return dict(chart.render(values or {}, name=release, namespace=namespace, is_install=not is_upgrade,
                                 is_upgrade=is_upgrade))


def chart_objects(values: dict[str, Any] | None = None, release: str = RELEASE,
                  namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    """Every object the chart renders (templates only; the CRDs are in ``crds/``), in template order."""
    objects: list[dict[str, Any]] = []
    for path, text in sorted(render_chart(values, release, namespace).items()):
        if not path.endswith((".yaml", ".yml")):
            continue
        objects.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return objects


def find(objects: Iterable[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    """The one object of ``kind`` (and ``name``) among ``objects``."""
    found = [o for o in objects if o.get("kind") == kind and (name is None or o["metadata"]["name"] == name)]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {[o['metadata']['name'] for o in found]}"
    return found[0]
