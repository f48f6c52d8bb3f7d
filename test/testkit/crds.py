"""CustomResourceDefinitions built for tests."""

from __future__ import annotations

from typing import Any

__all__ = ["minimal_crd"]


def minimal_crd(group: str, plural: str, kind: str, scope: str = "Namespaced", version: str = "v1") -> dict[str, Any]:
    """A CRD serving one version without a schema: its objects are stored as sent (no pruning or validation)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "kind": kind},
            "versions": [{"name": version, "served": True, "storage": True}],
        },
    }
