"""What the request-serving parts of the sandbox API server need from the server that owns them.

``SandboxContext`` is the server as the request handler sees it; ``ServingContext`` is the narrower view that the
resource endpoints, the watch streamer and the subresources are handed, whose tracker may be the events.k8s.io/v1
view of the real one (``eventsv1.for_resource``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias

from apis.fake import ObjectTracker
from apis.watch import Watch
from sandbox.faults import Faults

if TYPE_CHECKING:  # both import the endpoints, which are typed by this module
    from apis.fake.tracker.watch import TrackerWatch

    from .eventsv1 import EventsV1Tracker, EventsV1Watch
    from .rbac import AccessControl

__all__ = ["SandboxContext", "ServedTracker", "ServedWatch", "ServingContext"]

ServedTracker: TypeAlias = "ObjectTracker | EventsV1Tracker"
ServedWatch: TypeAlias = "TrackerWatch | EventsV1Watch"  # what ServedTracker.watch hands out


class ServingContext(Protocol):
    """What serves one resource request: the store, the fault knobs, shutdown, and the open-watch registry."""

    @property
    def tracker(self) -> ServedTracker: ...

    @property
    def faults(self) -> Faults: ...

    @property
    def stopping(self) -> threading.Event: ...

    @property
    def namespace_lifecycle(self) -> bool: ...

    def track_watch(self, watch: Watch) -> None: ...

    def untrack_watch(self, watch: Watch) -> None: ...


class SandboxContext(ServingContext, Protocol):
    """What the request handler needs from the server that owns it."""

    @property
    def tracker(self) -> ObjectTracker: ...

    @property
    def access(self) -> AccessControl: ...

    @property
    def pod_logs_dir(self) -> Path | None: ...

    @property
    def server_address_text(self) -> str: ...
