"""Object builders shared by the fake tracker / clientset tests (importable thanks to conftest.py)."""

from __future__ import annotations

from typing import Any


def make_pod(name: str, namespace: str = "default", **extra: Any) -> dict[str, Any]:
    labels = extra.pop("labels", None)
    owners = extra.pop("owner_references", None)
    finalizers = extra.pop("finalizers", None)
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }
    if labels is not None:
        obj["metadata"]["labels"] = labels
    if owners is not None:
        obj["metadata"]["ownerReferences"] = owners
    if finalizers is not None:
        obj["metadata"]["finalizers"] = finalizers
    obj.update(extra)
    return obj


def owner_ref(owner: dict[str, Any], block: bool = True, controller: bool = True) -> dict[str, Any]:
    """A reference to ``owner``; an object may have one controller reference only (422 otherwise)."""
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": controller,
        "blockOwnerDeletion": block,
    }


WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                "operator": {"type": "string", "enum": [">=", ">", "<"], "default": ">="},
                "label": {"type": "string", "pattern": "^[a-z]+$"},
            },
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


def widget_crd(scope: str = "Namespaced", status: bool = True) -> dict[str, Any]:
    version: dict[str, Any] = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": WIDGET_SCHEMA},
    }
    if status:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "scope": scope,
            "versions": [version, {"name": "v0", "served": False, "storage": False}],
        },
    }


def make_widget(name: str, size: int = 3, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"size": size, **spec},
    }
