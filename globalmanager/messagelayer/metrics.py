"""Edge-link metrics of sedna-gm (one ``EdgeMetrics`` per registry: the message layer creates it once)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

__all__ = ["EdgeMetrics"]


class EdgeMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.connected_nodes = Gauge(
            "sedna_gm_edge_connected_nodes", "LocalControllers connected to this GM now.", registry=registry
        )
        self.frames = Counter(
            "sedna_gm_edge_frames",
            "Frames exchanged with LocalControllers, by direction (up: LC → GM, down: GM → LC) and operation.",
            ["direction", "operation"],
            registry=registry,
        )
        self.rejected_frames = Counter(
            "sedna_gm_edge_rejected_frames",
            "Frames from LocalControllers that were dropped, by reason (not_json, bad_shape, bad_base64, "
            "bad_content, unknown_operation, unknown_kind, not_routed, invalid_report, not_entitled, too_large).",
            ["reason"],
            registry=registry,
        )
        self.pending_messages = Gauge(
            "sedna_gm_edge_pending_messages",
            "Messages waiting for delivery to a node (at most one per object).",
            ["node"],
            registry=registry,
        )
        self.rejected_connections = Counter(
            "sedna_gm_edge_rejected_connections",
            "Websocket upgrades refused and live connections closed for their credential, by reason (bad_node_name, "
            "bad_header, unauthorized, forbidden, revoked).",
            ["reason"],
            registry=registry,
        )

