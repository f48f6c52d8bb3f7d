"""Test doubles that behave like a Kubernetes API server: ``ObjectTracker`` (the store) and ``FakeClientset``.

The sandbox API server and the pod simulator live in submodules (``apis.fake.apiserver``, ``apis.fake.kubelet``)
and are imported explicitly.
"""

from .clientset import Action, FakeClientset
from .tracker import ObjectTracker, TrackerWatch

__all__ = ["Action", "FakeClientset", "ObjectTracker", "TrackerWatch"]
