"""Typed view of ElasticDL's ``elasticdl.org/v1alpha1`` ElasticAIJob (see ``elasticaijob``)."""

from __future__ import annotations

from . import elasticaijob
from .elasticaijob import *  # noqa: F403

__all__: list[str] = []
__all__ += elasticaijob.__all__  # the module lists its exports; the package re-exports them
