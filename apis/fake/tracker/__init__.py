"""``ObjectTracker``: the in-memory store with kube-apiserver semantics behind the fake clientset and the sandbox.

Its parts, one concept per module: ``store`` (objects, revision, uid and owner indexes), ``registry`` (the served
resources, CRDs; ``crd``), ``admission`` (what is checked and filled in before a write: ``decoding``,
``validation``, ``immutability``, ``services``), ``strategy`` (per-kind generation and create rules), ``gc``
(deletion, finalizers, ownerReference garbage collection), ``lister`` (lists and pagination), ``watchcache``
(bounded history, watchers), ``watch`` (one watch stream; ``filter``: selectors), ``patch`` (the patch types),
``limits`` (what may be stored) and ``ttl`` (Event expiry).
"""

from .registry import BUILTIN_GROUPS
from .tracker import ObjectTracker, PatchOutcome
from .watch import TrackerWatch

__all__ = ["BUILTIN_GROUPS", "ObjectTracker", "PatchOutcome", "TrackerWatch"]
