"""The worker simulator as a process, with the sandbox API server (and its pod simulator) and a real ``sedna-lc``
(connected to a GM written from the protocol, ``FakeGM``):

* an incremental-learning train worker pod shaped as Sedna's GM builds it goes Running, the simulator saves the model
  under the LC's rootfs, posts the SDK's report to that LC's worker API, which accepts it, and the pod ends
  ``Succeeded``; a joint-inference edge worker reports every period and keeps running;
* the simulator's logs are JSON lines, SIGTERM exits 0, a bad flag exits 2 naming it.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from testkit import REPO, FakeGM, json_log_lines, metric_value, start_lc, start_workersim, wait_for
from testkit.workers import sedna_worker_pod

pytestmark = pytest.mark.e2e


def _reports(lc_url: str, result: str) -> float:
    return metric_value(lc_url + "/metrics", "sedna_lc_worker_reports_total", result=result) or 0.0


def test_workers_report_to_the_real_lc_and_their_pods_end(procs, cluster, tmp_path):
    kubeconfig, cs = cluster
    gm = FakeGM(features=["ack"])
    try:
        rootfs = tmp_path / "rootfs-edge-1"
        _, lc_url = start_lc(procs, "edge-1", gm.address, rootfs)
        wait_for("the LC to connect", gm.connected.is_set, timeout=30)
        sim = start_workersim(procs, kubeconfig, {"edge-1": lc_url}, {"edge-1": rootfs})
        pods = cs.core_v1().pods("default")
        train = pods.create(sedna_worker_pod(
            "incrementallearningjob", "train", "helmet", {
                "NAMESPACE": "default", "JOB_NAME": "helmet", "WORKER_NAME": "train-worker-e2e",
                "LC_SERVER": "http://localhost:9100", "DATA_PATH_PREFIX": "/home/data",
                "MODEL_URL": "/home/data/il/output/train/1"},
            name="helmet-train-e2e", host_dirs=["/il/output/train"],
            annotations={"sandbox.sedna.io/worker-delay-seconds": "0.2"}))
        edge = pods.create(sedna_worker_pod(
            "jointinferenceservice", "edge", "ji", {
                "NAMESPACE": "default", "SERVICE_NAME": "ji", "WORKER_NAME": "edgeworker-e2e",
                "LC_SERVER": "http://localhost:9100"},
            name="ji-deployment-edge-e2e", annotations={"sandbox.sedna.io/worker-period-seconds": "0.2"}))

        wait_for("the train pod to succeed", lambda: pods.get(train["metadata"]["name"])["status"].get("phase"),
                 check=lambda p: p == "Succeeded", timeout=30)
        model = rootfs / "il/output/train/1/model_finetune_tensorflow.pb"
        assert model.is_file()
        # the LC accepted every report as a valid SDK body (handled, kept for a job it does not hold yet, or dropped
        # for want of a manager of that kind)
        wait_for("train + edge reports at the LC",
                 lambda: sum(_reports(lc_url, result) for result in ("ok", "pending", "unhandled")),
                 check=lambda n: n >= 3, timeout=30)
        assert _reports(lc_url, "bad_request") == 0
        assert pods.get(edge["metadata"]["name"])["status"]["phase"] == "Running"

        sim.send_signal(signal.SIGTERM)
        assert sim.wait(15) == 0
        lines = json_log_lines(procs.log("workersim"))
        events = {line["event"] for line in lines}
        assert {"worker simulator ready", "worker started", "worker report sent", "worker exited"} <= events
        started = [line for line in lines if line["event"] == "worker started"]
        assert {line["pod"] for line in started} == {"default/helmet-train-e2e", "default/ji-deployment-edge-e2e"}
        assert all(line["lc"] == lc_url for line in started)
    finally:
        gm.close()


@pytest.mark.parametrize("argv, setting", [
    (["--kubeconfig", "/nonexistent"], "--kubeconfig"),
    (["--kubeconfig", __file__, "--lc", "Edge_1=http://127.0.0.1:1"], "--lc"),
    (["--kubeconfig", __file__, "--lc", "edge-1=ftp://x"], "--lc"),
    (["--kubeconfig", __file__, "--rootfs", "edge-1=/nonexistent"], "--rootfs"),
    (["--kubeconfig", __file__, "--report-attempts", "0"], "--report-"),
])
def test_a_bad_setting_exits_2_naming_it(argv, setting):
    done = subprocess.run([sys.executable, "-m", "workersim", *argv], cwd=REPO, capture_output=True,
                          timeout=60, text=True)
    assert done.returncode == 2
    assert f"invalid setting {setting}" in done.stderr
