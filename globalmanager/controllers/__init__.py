"""sedna-gm controllers, one sub-package per kind, found through ``registry``."""

from .registry import ControllerContext, register, registered, select

__all__ = ["ControllerContext", "register", "registered", "select"]
