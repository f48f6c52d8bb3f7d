"""Object helpers for tests that write while a controller writes too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apis import errors


def update_with_retry(client: Any, name: str, change: Callable[[dict[str, Any]], None], attempts: int = 20) -> dict[str, Any]:
    """Get ``name``, apply ``change`` to it and ``update`` it, again on a 409 (a controller wrote its status meanwhile)."""
    for attempt in range(attempts):
        obj = client.get(name)
        change(obj)
        try:
            return client.update(obj)
        except errors.ConflictError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def gone(client: Any, name: str) -> bool:
    """Whether ``client.get(name)`` answers 404."""
    try:
        client.get(name)
        return False
    except errors.NotFoundError:
        return True


def deployment_rolled_out(deployment: dict[str, Any], replicas: int = 1) -> bool:
    """Whether a Deployment's status shows its current template rolled out: observed, ``replicas`` updated and
    available, no other replica left (judged by status, whoever owns the pods)."""
    status = deployment.get("status") or {}
    generation = (deployment.get("metadata") or {}).get("generation", 0)
    return (status.get("observedGeneration", 0) >= generation and status.get("updatedReplicas") == replicas
            and status.get("availableReplicas") == replicas and status.get("replicas") == replicas)


def controlled_pods(pods: Any, owner: dict[str, Any], generation: int | None = None) -> list[dict[str, Any]]:
    """The pods (from the pods client ``pods``) controlled by ``owner`` and not being deleted; with ``generation``,
    only those built from that generation of it (annotation ``sedna.io/job-generation``)."""
    uid = (owner.get("metadata") or {}).get("uid")
    out = []
    for pod in pods.list()["items"]:
        md = pod.get("metadata") or {}
        controller = next((r for r in md.get("ownerReferences") or [] if r.get("controller")), {})
        if controller.get("uid") != uid or md.get("deletionTimestamp"):
            continue
        if generation is None or (md.get("annotations") or {}).get("sedna.io/job-generation") == str(generation):
            out.append(pod)
    return out
