"""sedna-lc's worker API (exactly as Sedna's SDK calls it) and probes, and the dataset and model managers."""

from __future__ import annotations

import http.client
import io
import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
import structlog.testing
from prometheus_client import CollectorRegistry
from testkit import json_log_lines
from testkit.logs import restored_process_logging

from localcontroller.config import LCConfig
from localcontroller.logging import configure_logging
from localcontroller.managers import ManagerContext
from localcontroller.managers.dataset import DatasetManager, count_samples, parse_samples
from localcontroller.managers.model import ModelManager
from localcontroller.metrics import LCMetrics
from localcontroller.server import DELIVERED, UNHANDLED, LCServer
from localcontroller.store import Store
from localcontroller.worker import WorkerMessage

SDK_BODY = {  # what sedna.common.class_factory / LCClient.send posts (JobBase.report_task_info)
    "name": "il-job-train-worker", "namespace": "default", "ownerName": "il-job", "ownerKind": "incrementallearningjob",
    "kind": "train", "status": "completed", "results": [{"format": "pb", "url": "/models/m.pb"}],
    "ownerInfo": {"startTime": "2026-01-01 00:00:00"},
}


class Served:
    def __init__(self) -> None:
        self.store_ready = False
        self.delivered: list[WorkerMessage] = []
        self.connected = threading.Event()
        self.registry = CollectorRegistry()
        self.metrics = LCMetrics(self.registry, lambda: 3)
        self.server = LCServer("127.0.0.1", 0, self.metrics, self.deliver, self.connected.is_set)
        self.server.start()

    def deliver(self, message: WorkerMessage, client: str = "") -> str:
        self.delivered.append(message)
        return UNHANDLED if message.owner_kind == "unknownkind" else DELIVERED

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=5)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, resp.read().decode()
        finally:
            conn.close()

    def post(self, worker: str, body: Any) -> tuple[int, dict]:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        status, text = self.request("POST", f"/sedna/workers/{worker}/info", raw,
                                    {"Content-Type": "application/json"})
        return status, json.loads(text)


@pytest.fixture
def served() -> Iterator[Served]:
    s = Served()
    yield s
    s.server.stop()


def test_a_worker_report_as_the_sdk_sends_it_is_accepted(served):
    status, body = served.post("il-job-train-worker", SDK_BODY)
    assert (status, body) == (200, {"Status": 200, "Message": "OK"})
    m = served.delivered[0]
    assert (m.name, m.namespace, m.owner_name, m.owner_kind, m.kind, m.status) == (
        "il-job-train-worker", "default", "il-job", "incrementallearningjob", "train", "completed")
    assert m.results == SDK_BODY["results"] and m.owner_info == SDK_BODY["ownerInfo"]
    assert served.registry.get_sample_value("sedna_lc_worker_reports_total", {"result": "ok"}) == 1


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "not JSON"),
        ([1], "JSON object"),
        ({**SDK_BODY, "name": "someone-else"}, "different"),
        ({k: v for k, v in SDK_BODY.items() if k != "ownerKind"}, "ownerKind is required"),
        ({**SDK_BODY, "results": {"a": 1}}, "results"),
        ({**SDK_BODY, "status": 3}, "status must be a string"),
    ],
)
def test_a_bad_body_gets_400_with_the_reason(served, body, reason):
    status, answer = served.post("il-job-train-worker", body)
    assert status == 400 and answer["Status"] == 400 and reason in answer["Message"]
    assert not served.delivered
    assert served.registry.get_sample_value("sedna_lc_worker_reports_total", {"result": "bad_request"}) == 1


def test_a_report_no_manager_handles_is_answered_ok_and_counted(served):
    status, _ = served.post("w", {**SDK_BODY, "name": "w", "ownerKind": "UnknownKind"})
    assert status == 200
    assert served.registry.get_sample_value("sedna_lc_worker_reports_total", {"result": "unhandled"}) == 1


def test_probes_and_metrics(served):
    assert served.request("GET", "/healthz") == (200, "ok\n")
    assert served.request("GET", "/readyz")[0] == 503
    served.connected.set()
    assert served.request("GET", "/readyz") == (200, "ok\n")
    status, text = served.request("GET", "/metrics")
    assert status == 200 and "sedna_lc_upstream_pending 3.0" in text and "sedna_lc_gm_connected" in text
    assert served.request("GET", "/nope")[0] == 404


# -- dataset manager ------------------------------------------------------------------------------------------------
class Reports(list):
    def __call__(self, namespace: str, kind: str, name: str, content: dict) -> None:
        self.append((namespace, kind, name, dict(content)))


@pytest.fixture
def dataset_env(tmp_path):
    rootfs = tmp_path / "rootfs"
    (rootfs / "data").mkdir(parents=True)
    store = Store(str(tmp_path / "lc.db"))
    reports = Reports()
    ctx = ManagerContext(LCConfig(rootfs=str(rootfs), dataset_check_period=3600), store, reports)
    yield DatasetManager(ctx), rootfs, reports, store
    store.close()


def dataset_obj(url: str = "/data/a.txt", fmt: str = "txt", name: str = "d1") -> dict:
    return {"kind": "Dataset", "metadata": {"namespace": "default", "name": name},
            "spec": {"url": url, "format": fmt, "nodeName": "edge-1"}}


def test_counts_txt_and_csv_samples(tmp_path):
    (tmp_path / "a.txt").write_text("a\n\nb\n  \nc")
    (tmp_path / "b.csv").write_text("h1,h2\n1,2\n3,4\n")
    (tmp_path / "empty.csv").write_text("")
    assert count_samples(str(tmp_path / "a.txt"), "txt") == 3
    assert count_samples(str(tmp_path / "b.csv"), "CSV") == 2
    assert count_samples(str(tmp_path / "empty.csv"), "csv") == 0
    with pytest.raises(ValueError):
        count_samples(str(tmp_path / "a.txt"), "json")


def test_csv_samples_keep_their_header_apart():
    assert parse_samples(["a,b", "1,2", "", "3,4"], "csv") == ("a,b", ["1,2", "3,4"])
    assert parse_samples([], "csv") == ("", [])
    assert parse_samples(["x", " ", "y"], "TXT") == ("", ["x", "y"])


def test_dataset_urls_stay_below_the_rootfs_and_other_schemes_are_refused(dataset_env):
    manager, rootfs, reports, _ = dataset_env
    (rootfs / "data/a.txt").write_text("1\n")
    with structlog.testing.capture_logs() as logs:
        manager.insert(dataset_obj(url="/../../data/a.txt"))
        assert manager.check("default/d1") is None
        manager.insert(dataset_obj(url="http://x/a.txt"))
        assert manager.check("default/d1") is None
        manager.insert(dataset_obj(url="/data/../data/a.txt"))
        assert manager.check("default/d1") == 1
    errors = [e["error"] for e in logs if e["event"].startswith("cannot count")]
    assert "resolves outside the rootfs" in errors[0] and "unsupported scheme 'http'" in errors[1]


def test_reports_only_when_the_count_changes_and_follows_a_changed_url(dataset_env):
    manager, rootfs, reports, _ = dataset_env
    (rootfs / "data/a.txt").write_text("1\n2\n")
    (rootfs / "data/b.txt").write_text("1\n2\n3\n4\n5\n")
    manager.insert(dataset_obj())
    assert manager.check("default/d1") == 2
    assert manager.check("default/d1") == 2
    assert reports == [("default", "Dataset", "d1", {"numberOfSamples": 2})]
    with open(rootfs / "data/a.txt", "a") as fh:
        fh.write("3\n")
    manager.check("default/d1")
    manager.insert(dataset_obj(url="/data/b.txt"))
    manager.check("default/d1")
    assert [r[3]["numberOfSamples"] for r in reports] == [2, 3, 5]


def test_a_missing_file_is_logged_once_per_change_and_never_raises(dataset_env):
    manager, rootfs, reports, _ = dataset_env
    with structlog.testing.capture_logs() as logs:
        manager.insert(dataset_obj(url="/data/missing.txt"))
        for _ in range(3):
            assert manager.check("default/d1") is None
        manager.insert(dataset_obj(url="s3://bucket/x.txt"))  # no credential annotation
        manager.check("default/d1")
        manager.check("default/d1")
        (rootfs / "data/missing.txt").write_text("x\n")
        manager.insert(dataset_obj(url="/data/missing.txt"))
        assert manager.check("default/d1") == 1
    problems = [e for e in logs if e["event"].startswith("cannot count")]
    assert [e["url"] for e in problems] == ["/data/missing.txt", "s3://bucket/x.txt"]  # once per change
    assert "does not exist" in problems[0]["error"] and "no S3 credential" in problems[1]["error"]
    assert all(e["object"] == "default/d1" and e["log_level"] == "warning" for e in problems)
    # each problem is reported once, for the Dataset's condition; the count clears it
    assert [(r[3]["numberOfSamples"], (r[3]["error"] or {}).get("reason")) for r in reports] == [
        (0, "URLNotFound"), (0, "CredentialInvalid"), (1, None)]


def test_lc_log_lines_are_json_objects_carrying_the_node():
    stream = io.StringIO()
    with restored_process_logging():
        configure_logging("edge-1", "info", "json", stream=stream)
        structlog.get_logger("sedna-lc.test").info("hello", object="default/d1")
        logging.getLogger("websockets.client").warning("a library line")
        structlog.get_logger("sedna-lc.test").info("forwarded", node="edge-2")  # the line's own node wins
    entries = json_log_lines(stream.getvalue())
    assert [(e["event"], e["node"]) for e in entries] == [
        ("hello", "edge-1"), ("a library line", "edge-1"), ("forwarded", "edge-2")]
    assert entries[0]["object"] == "default/d1" and entries[0]["level"] == "info" and "timestamp" in entries[0]


def test_the_last_reported_count_survives_a_restart(dataset_env, tmp_path):
    manager, rootfs, reports, store = dataset_env
    (rootfs / "data/a.txt").write_text("1\n2\n")
    manager.insert(dataset_obj())
    manager.check("default/d1")
    again = DatasetManager(ManagerContext(manager.ctx.config, store, reports))
    again.insert(dataset_obj())
    again.check("default/d1")
    assert len(reports) == 1  # unchanged: not reported again
    (rootfs / "data/a.txt").write_text("1\n2\n3\n")
    again.check("default/d1")
    assert [r[3]["numberOfSamples"] for r in reports] == [2, 3]
    again.delete(dataset_obj())
    assert store.get_state("dataset/default/d1/numberOfSamples") is None


def test_the_monitor_counts_a_new_dataset_at_once(dataset_env):
    from testkit import wait_for

    manager, rootfs, reports, _ = dataset_env
    (rootfs / "data/a.txt").write_text("1\n")
    stop = threading.Event()
    manager.start(stop)
    try:
        manager.insert(dataset_obj())  # the check period is an hour: only the insert can trigger this
        wait_for("the first count", lambda: reports == [("default", "Dataset", "d1", {"numberOfSamples": 1})])
    finally:
        stop.set()


def test_the_model_manager_keeps_what_the_gm_sent(tmp_path):
    store = Store(str(tmp_path / "lc.db"))
    models = ModelManager(ManagerContext(LCConfig(), store, Reports()))
    model = {"kind": "Model", "metadata": {"namespace": "default", "name": "m"}, "spec": {"url": "/m.pb"}}
    models.insert(model)
    assert models.get("default", "m") == model
    models.delete(model)
    assert models.get("default", "m") is None
    store.close()
