"""Objects a job references by name (Models, Datasets, their Secrets), resolved for building its workers.

A missing one raises ``MissingReference`` with a reason a kind puts in its status (``ModelNotFound``,
``DatasetNotFound``, ``SecretNotFound``) and a message naming it. Models and Datasets are read from informer caches
(``BaseController.watch_references`` wakes the job when they appear); Secrets are read from the API server when
needed (the GM does not cache Secrets), so a missing one is retried later.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import errors
from apis.client import ClientsetBase

from .secrets import get_secret

__all__ = ["MissingReference", "get_credential", "get_referenced"]


class MissingReference(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def get_referenced(lister: Any, kind: str, namespace: str, name: str, what: str = "") -> dict[str, Any]:
    """The ``kind`` object ``namespace/name`` from ``lister``; ``MissingReference("<kind>NotFound")`` if absent."""
    try:
        return lister.namespaced(namespace).get(name)
    except errors.NotFoundError:
        raise MissingReference(f"{kind}NotFound", f"{kind.lower()} {namespace}/{name}{what} not found") from None


def get_credential(
    clientset: ClientsetBase, namespace: str, secret_name: str, owner: str
) -> Mapping[str, Any] | None:
    """The Secret ``secret_name`` (``None`` when no name is given); ``MissingReference("SecretNotFound")``."""
    if not secret_name:
        return None
    secret = get_secret(clientset, namespace, secret_name)
    if secret is None:
        raise MissingReference("SecretNotFound", f"secret {namespace}/{secret_name} of {owner} not found")
    return secret
