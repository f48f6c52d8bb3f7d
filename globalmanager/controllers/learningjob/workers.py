"""Worker pieces IL and LL build their pods with: the Secrets of one pod, and the original-dataset mount."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis.client import ClientsetBase
from apis.meta import Obj
from globalmanager.runtime.references import get_credential
from globalmanager.runtime.storage import MountURL, WorkerMount

__all__ = ["Secrets", "original_dataset_mount", "url_of"]


class Secrets:
    """The Secrets one pod is built with, read from the API server once each (``SecretNotFound`` if missing)."""

    def __init__(self, clientset: ClientsetBase, namespace: str) -> None:
        self.clientset, self.namespace = clientset, namespace
        self._got: dict[str, Obj | None] = {}

    def of(self, obj: Obj, what: str) -> Obj | None:
        """The Secret named by ``obj``'s ``spec.credentialName`` (``None`` when it names none)."""
        name = str((obj.get("spec") or {}).get("credentialName") or "")
        if name not in self._got:
            self._got[name] = get_credential(self.clientset, self.namespace, name, what)
        return self._got[name]


def url_of(obj: Obj) -> str:
    return str((obj.get("spec") or {}).get("url") or "")


def original_dataset_mount(dataset: Obj, inp: Mapping[str, Any], secret: Obj | None, name: str = "") -> WorkerMount:
    """``ORIGINAL_DATASET_URL``: the LC's index file (``input.dataIndexURL``) when it wrote one, else the Dataset's
    URL; mounted ``Indirect`` when they differ (Sedna issue #35); downloaded, with the Dataset's Secret."""
    original = str(inp.get("dataIndexURL") or "") or url_of(dataset)
    url = MountURL(url=original, secret=secret, download_by_initializer=True, indirect=url_of(dataset) != original)
    return WorkerMount(name=name, url=url, env_name="ORIGINAL_DATASET_URL")
