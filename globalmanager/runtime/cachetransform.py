"""What ``sedna-gm``'s informers keep of an object: ``strip_unread_fields``, the transform of its shared informer
factory (client-go's ``SetTransform``), drops before an object is cached or handed to a handler what no controller
reads:

* ``metadata.managedFields`` of every object. No controller reads it, and nothing is lost when an object from the
  cache is written back: an update without ``managedFields`` keeps the server's (kube-apiserver reads an absent
  field as "unchanged"), and a recreated object never carries them (``selfheal.object_for_recreation``).
* the annotation ``kubectl.kubernetes.io/last-applied-configuration`` (the whole object as last ``kubectl
  apply``-ed) of the Sedna and ElasticDL custom resources: the GM writes them back only through their status
  subresource, where the API server ignores metadata. Built-in kinds keep it: Deployments and HPAs are updated whole
  from the cache, and deleted pods and Deployments are recreated from it.

An object is never changed in place (the same decoded object may be shared): a stripped object is a copy of its top
level and metadata, the rest shared; an object with nothing to strip is returned as it is. Idempotent.
"""

from __future__ import annotations

from typing import Any

from apis.resources import ELASTICDL_GROUP, SEDNA_GROUP

__all__ = ["LAST_APPLIED_ANNOTATION", "STRIPPED_ANNOTATION_GROUPS", "strip_unread_fields"]

LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
# API groups whose objects lose the last-applied annotation (objects of other groups keep it)
STRIPPED_ANNOTATION_GROUPS = frozenset({SEDNA_GROUP, ELASTICDL_GROUP})
_NO_ANNOTATIONS: dict[str, Any] = {}  # stands in for missing or malformed annotations; never changed


def strip_unread_fields(obj: Any) -> Any:
    """``obj`` without the fields listed in the module doc (anything but an object with metadata is returned as is)."""
    if obj.__class__ is not dict:
        return obj
    md = obj.get("metadata")
    if md.__class__ is not dict:
        return obj
    drop_managed = "managedFields" in md
    annotations = md.get("annotations")
    if not isinstance(annotations, dict):
        annotations = _NO_ANNOTATIONS
    drop_applied = (
        LAST_APPLIED_ANNOTATION in annotations
        and str(obj.get("apiVersion") or "").partition("/")[0] in STRIPPED_ANNOTATION_GROUPS
    )
    if not (drop_managed or drop_applied):
        return obj
    md = dict(md)
    if drop_managed:
        del md["managedFields"]
    if drop_applied:
        md["annotations"] = {k: v for k, v in annotations.items() if k != LAST_APPLIED_ANNOTATION}
    out = dict(obj)
    out["metadata"] = md
    return out
