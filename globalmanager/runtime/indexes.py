"""Informer indexes controllers look objects up by, so that no sync lists a whole namespace and filters it.

* ``CONTROLLER_UID_INDEX`` (``controller-uid``): an object → the UID of its controller ownerReference. A job's pods,
  Deployments, Services and HPAs are ``by_index(CONTROLLER_UID_INDEX, job_uid)``.
* ``ensure_index(informer, name, fn)``: registers an index on a shared informer once, however many controllers ask
  for it (they share the informer); a second, different function under the same name is an error.
* ``reference_index_func(refs)``: an index of jobs by the objects they reference (``namespace/name`` of a Model,
  Dataset...), so that a Model event wakes exactly the jobs that use it.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from apis import meta
from informers import SharedIndexInformer

__all__ = [
    "CONTROLLER_UID_INDEX",
    "controller_uid_index_func",
    "ensure_index",
    "reference_index_func",
]

CONTROLLER_UID_INDEX = "controller-uid"

IndexFunc = Callable[[Any], list[str]]

_lock = threading.Lock()


def controller_uid_index_func(obj: Any) -> list[str]:
    ref = meta.get_controller_of(obj) if isinstance(obj, Mapping) else None
    uid = (ref or {}).get("uid")
    return [uid] if uid else []


def ensure_index(informer: SharedIndexInformer, name: str, fn: IndexFunc) -> None:
    """Add index ``name`` to ``informer`` unless it is already there with the same function."""
    with _lock:
        existing = informer.get_indexer().get_indexers().get(name)
        if existing is None:
            informer.add_indexers({name: fn})
        elif existing is not fn:
            raise ValueError(f"index {name!r} is already registered with another function")


@functools.cache
def reference_index_func(refs: Callable[[Mapping[str, Any]], Iterable[str]]) -> IndexFunc:
    """An index function mapping a job to ``<namespace>/<name>`` of each object ``refs(job)`` names (the same
    function for the same ``refs``, so that several controllers over one informer share the index)."""

    def index(obj: Any) -> list[str]:
        if not isinstance(obj, Mapping):
            return []
        ns = meta.namespace(obj)
        return sorted({f"{ns}/{name}" for name in refs(obj) if name})

    return index
