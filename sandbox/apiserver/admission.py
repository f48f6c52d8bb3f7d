"""The NamespaceLifecycle admission plugin of kube-apiserver, as the sandbox runs it before a write reaches the
tracker: objects are created (or changed) only in namespaces that exist and are not terminating, and the
namespaces ``default``, ``kube-system`` and ``kube-public`` may not be deleted.

With ``enabled=False`` (the sandbox's lenient mode) a missing namespace is not an error and every namespace may be
deleted; creation in a terminating namespace is refused either way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from apis import meta
from apis.errors import ForbiddenError, new_not_found
from apis.resources import NAMESPACES

from .request import ResourceRequest

if TYPE_CHECKING:  # context.py imports the endpoints through eventsv1
    from .context import ServedTracker

__all__ = ["IMMORTAL_NAMESPACES", "NamespaceLifecycle"]

IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


def _forbidden(req: ResourceRequest, name: str, why: str, causes: list[dict[str, str]] | None = None) -> ForbiddenError:
    group = f".{req.gvr.group}" if req.gvr.group else ""
    details: dict[str, Any] = {"name": name, "group": req.gvr.group, "kind": req.gvr.resource}
    if causes:
        details["causes"] = causes
    return ForbiddenError(403, "Forbidden", f'{req.gvr.resource}{group} "{name}" is forbidden: {why}', details=details)


class NamespaceLifecycle:
    """``admit(operation, req, name)`` for "create", "update" and "delete" requests on ``tracker``."""

    def __init__(self, tracker: ServedTracker, enabled: bool) -> None:
        self.tracker = tracker
        self.enabled = enabled

    def admit(self, operation: str, req: ResourceRequest, name: str) -> None:
        """Raise the error kube-apiserver's plugin answers (404 NotFound for a missing namespace, 403 Forbidden for
        a terminating one or an immortal namespace's deletion); return when the request may proceed."""
        if req.gvr == NAMESPACES:
            if operation == "delete" and self.enabled and name in IMMORTAL_NAMESPACES:
                raise _forbidden(req, name, "this namespace may not be deleted")
            return
        if not req.namespace or operation == "delete":
            return
        namespace = self.tracker.peek(NAMESPACES, "", req.namespace)  # read only: no copy
        if namespace is None:
            if self.enabled:
                raise new_not_found(NAMESPACES.resource, req.namespace, NAMESPACES.group)  # 404 namespaces "<ns>" ...
            return
        terminating = meta.deletion_timestamp(namespace) or (namespace.get("status") or {}).get("phase") == "Terminating"
        if operation == "create" and terminating:
            why = f"unable to create new content in namespace {req.namespace} because it is being terminated"
            cause = {"type": "NamespaceTerminating", "message": f"namespace {req.namespace} is being terminated", "field": "metadata.namespace"}
            raise _forbidden(req, name, why, [cause])
