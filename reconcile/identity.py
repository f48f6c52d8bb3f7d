"""``object_identity``: what a log line may say about an object a handler cannot use."""

from __future__ import annotations

from collections.abc import Mapping

from informers import DeletedFinalStateUnknown

__all__ = ["object_identity"]


def object_identity(obj: object) -> dict[str, str]:
    """Its type and, where it has them, its key and kind; never its content (it may be anything, a Secret
    included)."""
    fields = {"type": type(obj).__name__}
    if isinstance(obj, DeletedFinalStateUnknown):
        fields["key"] = str(obj.key)
        obj = obj.obj
    if isinstance(obj, Mapping):
        md = obj.get("metadata")
        if isinstance(md, Mapping):
            fields.setdefault("key", f"{md.get('namespace') or ''}/{md.get('name') or ''}")
        kind = obj.get("kind")
        if isinstance(kind, str):
            fields["kind"] = kind
    return fields
