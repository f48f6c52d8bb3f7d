"""sedna-gm controllers, one sub-package per kind, listed in ``registry.CONTROLLERS``."""

from .context import ControllerContext
from .registry import register, registered, select

__all__ = ["ControllerContext", "register", "registered", "select"]
