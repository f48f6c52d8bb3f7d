"""sedna-lc's joint-inference and federated-learning managers against a GM written in the test from the protocol
(``testkit.FakeGM``): the object the GM sends is held (and persisted), worker reports posted to the worker API as
Sedna's SDK posts them go upstream exactly as Go Sedna's LC marshals them, reports about objects this node does not
hold are dropped with the reason logged (the SDK's quirks included)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog.testing
from testkit import FakeGM, make_frame, metric_value, wait_for
from testkit.lc import RunningLC

from workersim import LCClient

NS = "default"
JI = "jointinferenceservice"
FL = "federatedlearningjob"
OWNER_INFO = {"startTime": "2026-01-02 03:04:05", "updateTime": "2026-01-02 03:04:35", "inferenceNumber": 10,
              "hardExampleNumber": 3, "uploadCloudRatio": 0.3}
ROUND_MODEL = [{"format": "pb", "url": "/fl/model/model.pb", "metrics": {"accuracy": [0.6], "loss": [0.4]}}]


def ji_service(name: str = "helmet", image: str = "edge:v1") -> dict[str, Any]:
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "JointInferenceService",
            "metadata": {"namespace": NS, "name": name, "uid": "u-ji"},
            "spec": {"edgeWorker": {"model": {"name": "little"}, "template": {"spec": {
                "nodeName": "edge-1", "containers": [{"name": "infer", "image": image}]}}},
                "cloudWorker": {"model": {"name": "big"}, "template": {"spec": {"containers": []}}}}}


def fl_job(name: str = "surface") -> dict[str, Any]:
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "FederatedLearningJob",
            "metadata": {"namespace": NS, "name": name, "uid": "u-fl"},
            "spec": {"aggregationWorker": {"model": {"name": "agg"}, "template": {}},
                     "trainingWorkers": [{"dataset": {"name": "d1"}, "template": {"spec": {"nodeName": "edge-1"}}}]}}


def ji_report(owner: str = "helmet", **extra: Any) -> dict[str, Any]:
    """What the SDK's ``LCReporter`` posts (no ``status``, empty ``results``)."""
    return {"name": "edgeworker-abcde", "namespace": NS, "ownerName": owner, "ownerKind": JI, "kind": "inference",
            "results": [], "ownerInfo": OWNER_INFO, **extra}


def fl_report(owner: str = "surface", round_number: int = 1, status: str = "running", **extra: Any) -> dict[str, Any]:
    """What the SDK's ``FederatedLearning.train`` posts per round (``JobBase.report_task_info``)."""
    return {"name": "trainworker-fghij", "namespace": NS, "ownerName": owner, "ownerKind": FL, "kind": "train",
            "status": status, "results": ROUND_MODEL,
            "ownerInfo": {"currentRound": round_number, "sampleCount": 100, "startTime": "2026-01-02 03:04:05",
                          "updateTime": "2026-01-02 03:04:06"}, **extra}


def post(lc: RunningLC, body: dict[str, Any]) -> None:
    assert LCClient(attempts=1, retry_wait=0, timeout=5).send(lc.url, body["name"], body)


def is_status(header: dict[str, Any], content: Any) -> bool:
    return header.get("operation") == "status"


class Edge:
    def __init__(self, lc: RunningLC, gm: FakeGM) -> None:
        self.lc, self.gm = lc, gm

    def send(self, kind: str, operation: str, obj: dict[str, Any]) -> None:
        md = obj["metadata"]
        self.gm.send(make_frame(md["namespace"], kind, md["name"], operation, obj))

    def held(self, kind: str, name: str) -> Any:
        return self.lc.lc.store.get_resource(kind, NS, name)

    def wait_held(self, kind: str, name: str, check: Any = lambda obj: obj is not None) -> None:
        wait_for(f"the LC to hold {kind} {name}", lambda: self.held(kind, name), check=check)

    def next_status(self) -> tuple[dict[str, Any], Any]:
        _, header, content = self.gm.next_frame(is_status)
        return header, content


def running_edge(tmp_path: Path, features: list[str] | None) -> Iterator[Edge]:
    gm = FakeGM(features=features)
    lc = RunningLC(tmp_path, gm)
    try:
        lc.wait_connected()
        yield Edge(lc, gm)
    finally:
        lc.close()
        gm.close()


@pytest.fixture
def go_edge(tmp_path: Path) -> Iterator[Edge]:
    """Against Go Sedna's GM: never answers the hello (the LC waits 2 s), no acks, bare headers."""
    yield from running_edge(tmp_path, None)


@pytest.fixture
def edge(tmp_path: Path) -> Iterator[Edge]:
    """Against a GM that answers the hello with no feature: the same wire as Go's, at once."""
    yield from running_edge(tmp_path, [])


def test_ji_edge_worker_reports_go_upstream_as_go_sedna_marshals_them(go_edge):
    edge = go_edge
    edge.send(JI, "insert", ji_service())
    edge.wait_held(JI, "helmet")
    assert edge.held(JI, "helmet") == ji_service()
    post(edge.lc, ji_report())
    header, content = edge.next_status()
    assert header == {"namespace": NS, "resourceKind": JI, "resourceName": "helmet", "operation": "status"}
    assert content == {"phase": "inference", "status": "", "output": {"models": None, "ownerInfo": OWNER_INFO}}


def test_fl_round_reports_carry_the_results_as_models(edge):
    edge.send(FL, "insert", fl_job())
    edge.wait_held(FL, "surface")
    post(edge.lc, fl_report(round_number=1))
    post(edge.lc, fl_report(round_number=2, status="completed"))
    first, second = edge.next_status(), edge.next_status()
    assert first[0] == {"namespace": NS, "resourceKind": FL, "resourceName": "surface", "operation": "status"}
    assert first[1] == {"phase": "train", "status": "running",
                        "output": {"models": ROUND_MODEL, "ownerInfo": fl_report()["ownerInfo"]}}
    assert second[1]["status"] == "completed" and second[1]["output"]["ownerInfo"]["currentRound"] == 2
    # a failed worker's report (the SDK sends no results, no ownerInfo): Go's nil slices and maps are null
    body = fl_report(status="failed")
    del body["results"], body["ownerInfo"]
    post(edge.lc, body)
    assert edge.next_status()[1] == {"phase": "train", "status": "failed",
                                     "output": {"models": None, "ownerInfo": None}}


def test_reports_about_objects_the_node_does_not_hold_are_kept_not_relayed(edge):
    edge.send(JI, "insert", ji_service())
    edge.send(FL, "insert", fl_job())
    edge.wait_held(JI, "helmet")
    edge.wait_held(FL, "surface")
    with structlog.testing.capture_logs() as logs:
        post(edge.lc, ji_report(owner="other"))
        post(edge.lc, ji_report(owner="sedna"))  # the SDK: JOB_NAME's default shadows SERVICE_NAME
        post(edge.lc, fl_report(owner="other"))
        post(edge.lc, fl_report(owner="other", ownerKind="default"))  # no object of that name yet
        post(edge.lc, ji_report(namespace="elsewhere"))
        post(edge.lc, ji_report(owner="nobody", ownerKind="nosuchkind"))  # no manager: 200 and dropped, as Go's LC
        post(edge.lc, ji_report())
    # only the last report went upstream: the first status frame the GM sees is it
    header, content = edge.next_status()
    assert header["resourceName"] == "helmet" and content["output"]["ownerInfo"] == OWNER_INFO
    kept = [e for e in logs if e["event"].startswith("kept a worker report")]
    assert [(e["owner_kind"], e["object"]) for e in kept] == [
        (JI, f"{NS}/other"), (JI, f"{NS}/sedna"), (FL, f"{NS}/other"), ("default", f"{NS}/other"),
        (JI, "elsewhere/helmet")]
    assert "JOB_NAME" in kept[1]["hint"] and "hint" not in kept[0]
    assert metric_value(edge.lc.url + "/metrics", "sedna_lc_worker_reports_total", result="pending") == 5
    assert metric_value(edge.lc.url + "/metrics", "sedna_lc_worker_reports_total", result="unhandled") == 1
    assert edge.lc.lc.store.pending_usage()[0] == 5 and edge.lc.lc.store.pending_reports() == 0


def test_a_report_of_the_sdks_default_kind_reaches_the_one_object_of_its_name(edge):
    # Sedna's SDK FederatedLearning never sets its kind (ownerKind "default"); Go's LC drops its reports
    edge.send(FL, "insert", fl_job())
    edge.wait_held(FL, "surface")
    post(edge.lc, fl_report(round_number=1, ownerKind="default"))
    header, content = edge.next_status()
    assert header == {"namespace": NS, "resourceKind": FL, "resourceName": "surface", "operation": "status"}
    assert content["output"]["ownerInfo"]["currentRound"] == 1
    assert metric_value(edge.lc.url + "/metrics", "sedna_lc_worker_reports_total", result="ok") == 1


def test_update_replaces_the_held_object_and_delete_stops_the_relay(edge):
    edge.send(JI, "insert", ji_service())
    edge.wait_held(JI, "helmet")
    edge.send(JI, "update", ji_service(image="edge:v2"))  # Go's GM sends JI changes as update
    edge.wait_held(JI, "helmet", check=lambda obj: obj and "edge:v2" in str(obj))
    assert edge.lc.lc.ctx.manager(JI).get(NS, "helmet") == ji_service(image="edge:v2")
    edge.send(JI, "delete", ji_service(image="edge:v2"))
    edge.send(FL, "insert", fl_job())
    wait_for("the service to be dropped", lambda: edge.held(JI, "helmet"), check=lambda obj: obj is None)
    edge.wait_held(FL, "surface")
    assert edge.lc.lc.ctx.manager(JI).get(NS, "helmet") is None
    post(edge.lc, ji_report())
    post(edge.lc, fl_report())
    assert edge.next_status()[0]["resourceKind"] == FL  # the JI report was dropped


def test_a_restarted_lc_holds_its_objects_at_once_and_keeps_reports_until_a_gm_takes_them(tmp_path):
    gm = FakeGM(features=[])
    lc = RunningLC(tmp_path, gm)
    try:
        lc.wait_connected()
        gm.send(make_frame(NS, FL, "surface", "insert", fl_job()))
        wait_for("the job to be stored", lambda: lc.lc.store.get_resource(FL, NS, "surface"))
    finally:
        assert lc.close() == 0
        gm.close()
    again = RunningLC(tmp_path, None, gm_address="127.0.0.1:1")  # no GM reachable
    try:
        post(again, fl_report())
        assert again.lc.store.pending_reports() == 1
        assert again.lc.ctx.manager(FL).get(NS, "surface") == fl_job()
    finally:
        assert again.close() == 0
