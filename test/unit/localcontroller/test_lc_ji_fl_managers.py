"""sedna-lc's joint-inference and federated-learning managers against a GM written in the test from the protocol
(``testkit.FakeGM``): the object the GM sends is held (and persisted), worker reports posted to the worker API as
Sedna's SDK posts them go upstream exactly as Go Sedna's LC marshals them, reports about objects this node does not
hold are kept until they arrive (the SDK's quirks included: a report for the SDK's default owner ``sedna`` goes to the
one service of its kind the node holds in its namespace)."""

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
        (JI, f"{NS}/other"), (FL, f"{NS}/other"), ("default", f"{NS}/other"), (JI, "elsewhere/helmet")]
    assert metric_value(edge.lc.url + "/metrics", "sedna_lc_worker_reports_total", result="pending") == 4
    assert metric_value(edge.lc.url + "/metrics", "sedna_lc_worker_reports_total", result="unhandled") == 1
    assert edge.lc.lc.store.pending_usage()[0] == 4 and edge.lc.lc.store.pending_reports() == 0


ATTRIBUTED = "worker report for ownerName 'sedna'"


def test_a_report_for_the_sdks_default_owner_goes_to_the_one_service_of_its_kind_in_its_namespace(edge):
    """Issue 39 item 2: Go's GM gives a joint inference worker no JOB_NAME, so the SDK reports for owner ``sedna``
    (its JOB_NAME default shadows SERVICE_NAME); the one JointInferenceService this node holds in the report's
    namespace is the job of that worker, and the report goes to it, with a log line saying so."""
    edge.send(JI, "insert", ji_service())
    edge.send(FL, "insert", fl_job())  # another kind: not a candidate
    edge.wait_held(JI, "helmet")
    edge.wait_held(FL, "surface")
    with structlog.testing.capture_logs() as logs:
        post(edge.lc, ji_report(owner="sedna"))
        post(edge.lc, ji_report(owner="sedna"))
    for _ in range(2):
        header, content = edge.next_status()
        assert header == {"namespace": NS, "resourceKind": JI, "resourceName": "helmet", "operation": "status"}
        assert content["output"]["ownerInfo"] == OWNER_INFO
    said = [e for e in logs if e["event"].startswith(ATTRIBUTED)]
    assert [(e["log_level"], e["object"], e["worker"]) for e in said] == [
        ("info", f"{NS}/helmet", "edgeworker-abcde"), ("debug", f"{NS}/helmet", "edgeworker-abcde")]
    assert metric_value(edge.lc.url + "/metrics", "sedna_lc_worker_reports_total", result="ok") == 2


def test_a_report_for_the_sdks_default_owner_is_kept_while_its_service_is_not_the_only_one(edge):
    edge.send(JI, "insert", ji_service())
    edge.send(JI, "insert", ji_service("second"))
    edge.wait_held(JI, "second")
    with structlog.testing.capture_logs() as logs:
        post(edge.lc, ji_report(owner="sedna", namespace="other"))  # no service in its namespace
        post(edge.lc, ji_report(owner="sedna"))  # two services in the namespace: which one is not known
    kept = [e for e in logs if e["event"].startswith("kept a worker report")]
    assert [e["object"] for e in kept] == ["other/sedna", f"{NS}/sedna"]
    assert all("JOB_NAME" in e["hint"] for e in kept)
    assert not [e for e in logs if e["event"].startswith(ATTRIBUTED)]
    assert edge.lc.lc.store.pending_usage()[0] == 2 and edge.lc.lc.store.pending_reports() == 0


def test_reports_kept_for_the_sdks_default_owner_go_to_the_service_that_arrives_alone(edge):
    post(edge.lc, ji_report(owner="sedna", ownerInfo={**OWNER_INFO, "inferenceNumber": 1}))
    post(edge.lc, ji_report(owner="sedna", namespace="elsewhere"))  # another namespace: stays kept
    with structlog.testing.capture_logs() as logs:
        edge.send(JI, "insert", ji_service())
        header, content = edge.next_status()
    assert header["resourceName"] == "helmet" and content["output"]["ownerInfo"]["inferenceNumber"] == 1
    assert [e["object"] for e in logs if e["event"].startswith(ATTRIBUTED)] == [f"{NS}/helmet"]
    wait_for("the attributed report handed over", lambda: edge.lc.lc.store.pending_usage()[0], check=lambda n: n == 1)


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
