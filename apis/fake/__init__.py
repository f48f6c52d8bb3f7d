"""Test doubles that behave like a Kubernetes API server: ``ObjectTracker`` (the store) and ``FakeClientset``.

The sandbox API server and the pod simulator that put them behind the Kubernetes HTTP API are the top-level
``sandbox`` package (``python -m apis.fake.apiserver`` still starts it: see ``apis/fake/apiserver.py``).
"""

from .clientset import Action, FakeClientset
from .tracker import ObjectTracker, TrackerWatch

__all__ = ["Action", "FakeClientset", "ObjectTracker", "TrackerWatch"]
