"""Dataset → LC: the object as it is sent (Go Sedna's ``dataset/downstream.go``).

The copy sent carries ``kind``/``apiVersion`` and, with ``spec.credentialName``, the ``sedna.io/credential``
annotation from that Secret; the cached object is never changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis.client import ClientsetBase
from globalmanager.runtime.credential import edge_copy, with_kind

__all__ = ["API_VERSION", "KIND", "bare", "node_of", "prepare"]

API_VERSION = "sedna.io/v1alpha1"
KIND = "Dataset"


def node_of(dataset: Mapping[str, Any]) -> str:
    return (dataset.get("spec") or {}).get("nodeName") or ""


def bare(dataset: Mapping[str, Any]) -> dict[str, Any]:
    """The Dataset as sent with a ``delete``: no credential (the node drops it)."""
    return with_kind(dataset, API_VERSION, KIND)


def prepare(dataset: Mapping[str, Any], clientset: ClientsetBase) -> dict[str, Any]:
    """The Dataset as sent to its node; raises the API error when its credential Secret cannot be read."""
    return edge_copy(dataset, clientset, API_VERSION, KIND)
