"""sedna-lc managers, one module per kind, found through ``base.register``/``base.factories``."""

from .base import Manager, ManagerContext, ManagerFactory, Reporter, factories, register

__all__ = ["Manager", "ManagerContext", "ManagerFactory", "Reporter", "factories", "register"]
