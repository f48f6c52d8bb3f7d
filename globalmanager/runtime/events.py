"""The ``EventRecorder`` lives in the library (``apis.record``); this name is kept for existing imports."""

from apis.record import NORMAL, WARNING, EventRecorder

__all__ = ["EventRecorder", "NORMAL", "WARNING"]
