"""How a ``Status`` goes on the wire: ``apis.errors`` keeps a cause's type under ``type`` (as ``field.Error``
names it), metav1.StatusCause serializes it as ``reason``; an empty reason (StatusReasonUnknown) is omitted."""

from __future__ import annotations

from typing import Any

__all__ = ["wire_status"]


def wire_status(status: dict[str, Any]) -> dict[str, Any]:
    """``status`` as kube-apiserver serializes a metav1.Status (a new dict; ``status`` is not changed)."""
    out = dict(status)
    if not out.get("reason"):
        out.pop("reason", None)
    details = out.get("details")
    if isinstance(details, dict) and details.get("causes"):
        causes = []
        for cause in details["causes"]:
            wired = {k: v for k, v in cause.items() if k != "type"}
            if cause.get("type"):
                wired = {"reason": cause["type"], **wired}
            causes.append(wired)
        out["details"] = {**details, "causes": causes}
    return out
