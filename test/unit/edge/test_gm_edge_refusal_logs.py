"""Refusals on the GM's edge port cannot flood its log (issue 38 item 4): refused upgrades are logged at most once
per source and interval, the line saying how many were not logged, while the counter counts every one; bad frames
and refused reports likewise per node and reason."""

from __future__ import annotations

import structlog
from testkit import GoLC, wait_for

from apis.tokenfile import TokenFile
from globalmanager.messagelayer.tokens import EdgeTokens
from globalmanager.runtime.edge import NotEntitled

from .test_gm_edge_identity import refused_status
from .test_gm_edge_server import Edge

REFUSALS = 200


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def events(logs: list[dict], name: str) -> list[dict]:
    return [e for e in logs if e["event"] == name]


def test_a_flood_of_refused_upgrades_writes_one_line_per_source_and_interval(tmp_path):
    token = tmp_path / "token"
    token.write_text("right-token\n")
    edge = Edge(ping_interval=5, token=EdgeTokens(TokenFile(str(token))))
    clock = edge.server.refusal_log.clock = Clock()
    try:
        with structlog.testing.capture_logs() as logs:
            statuses = {refused_status(edge.url, "edge-1", {"Authorization": "Bearer wrong"})
                        for _ in range(REFUSALS)}
            assert statuses == {401}
            assert edge.metric("sedna_gm_edge_rejected_connections_total", reason="unauthorized") == REFUSALS
            refused = events(logs, "refused a connection")
            assert [(e["source"], e["reason"], e["untold"]) for e in refused] == [("127.0.0.1", "unauthorized", 0)]

            edge.server.flush_logs()  # within the interval: nothing yet
            clock.now += edge.server.refusal_log.interval
            edge.server.flush_logs()  # the source went quiet: one line with the rest
            edge.server.flush_logs()
            told = events(logs, "refused connections not logged one by one")
            assert [(e["source"], e["untold"]) for e in told] == [("127.0.0.1", REFUSALS - 1)]

            clock.now += 1
            refused_status(edge.url, "edge-1", {})  # within the new interval: counted, not logged
            clock.now += edge.server.refusal_log.interval
            refused_status(edge.url, "edge-1", {})
            refused = events(logs, "refused a connection")
            assert [e["untold"] for e in refused] == [0, 1]
            assert edge.metric("sedna_gm_edge_rejected_connections_total", reason="unauthorized") == REFUSALS + 2
    finally:
        edge.close()


def test_bad_frames_and_refused_reports_are_logged_once_per_node_reason_and_interval():
    edge = Edge(ping_interval=5)
    clock = edge.layer.refusal_log.clock = Clock()
    edge.state["edge-1"] = [{"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset",
                             "metadata": {"namespace": "default", "name": "d1", "resourceVersion": "1"},
                             "spec": {"nodeName": "edge-1"}}]
    edge.handler_error = NotEntitled("not this node's worker")
    lc = GoLC(edge.url, "edge-1")
    try:
        lc.recv()
        with structlog.testing.capture_logs() as logs:
            for _ in range(50):
                lc.send_raw("{not json")
                lc.send_status("default", "Dataset", "d1", {"numberOfSamples": 1})

            def counted() -> bool:
                return (edge.metric("sedna_gm_edge_rejected_frames_total", reason="not_json") == 50
                        and edge.metric("sedna_gm_edge_rejected_frames_total", reason="not_entitled") == 50)

            wait_for("every refusal counted", counted)
            dropped = events(logs, "dropped a bad frame from a node")
            refused = events(logs, "refused a report from a node")
            assert [(e["node"], e["reason"]) for e in dropped] == [("edge-1", "not_json")]
            assert [(e["node"], e["reason"], e["detail"]) for e in refused] == [
                ("edge-1", "not_entitled", "not this node's worker")]
            clock.now += edge.layer.refusal_log.interval
            edge.server.flush_logs()
            told = {(e["node"], e["reason"]): e["untold"] for e in events(logs, "refusals not logged one by one")}
            assert told == {("edge-1", "not_json"): 49, ("edge-1", "not_entitled"): 49}
    finally:
        lc.close()
        edge.close()
