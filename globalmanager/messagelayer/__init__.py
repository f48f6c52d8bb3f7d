"""The GM ↔ LC message layer: ``MessageLayer`` (the ``EdgeLink`` controllers use) and ``EdgeServer`` (the
websocket server LCs connect to). Wire format: ``apis.edge``; details: docs/edge.md."""

from .layer import MessageLayer
from .server import (
    DEFAULT_MAX_FRAME_BYTES,
    DEFAULT_PING_INTERVAL,
    EdgeServer,
    edge_server_from_config,
    read_token,
    valid_node_name,
)

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "DEFAULT_PING_INTERVAL",
    "EdgeServer",
    "MessageLayer",
    "edge_server_from_config",
    "read_token",
    "valid_node_name",
]
