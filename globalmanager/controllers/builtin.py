"""Registers the controllers shipped with sedna-gm (add one line per controller package)."""

from __future__ import annotations

from .elasticdl.controller import NAME as ELASTICDL_NAME
from .elasticdl.controller import new_controller as new_elasticdl_controller
from .registry import register

register(ELASTICDL_NAME, new_elasticdl_controller)
