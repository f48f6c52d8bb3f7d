"""Object helpers, errors, resources, watch/list types and clientsets for sedna-controlplane.

``apis`` imports nothing else of this project (``informers``, ``globalmanager``, ``localcontroller``, ``workersim``
and ``examples`` build on it).
"""

from . import errors, meta, resources
from .client import ClientsetBase, ResourceClient
from .resources import GroupVersionKind, GroupVersionResource, ResourceInfo
from .watch import ListOptions, Watch, WatchEvent

__all__ = [
    "Clientset",
    "ClientsetBase",
    "GroupVersionKind",
    "GroupVersionResource",
    "ListOptions",
    "ResourceClient",
    "ResourceInfo",
    "Watch",
    "WatchEvent",
    "errors",
    "meta",
    "resources",
]


def __getattr__(attr: str):  # lazy: the real clientset pulls in urllib3 and its configuration loaders
    if attr == "Clientset":
        from .clientset import Clientset

        return Clientset
    raise AttributeError(f"module 'apis' has no attribute {attr!r}")
