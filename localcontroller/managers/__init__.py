"""sedna-lc managers, one module per kind, listed in ``registry.MANAGERS``."""

from .base import Manager, ManagerContext, ManagerFactory, Reporter

__all__ = ["Manager", "ManagerContext", "ManagerFactory", "Reporter"]
