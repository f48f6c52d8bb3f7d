"""Where the worker simulator must behave as Sedna's SDK in a real pod (issue 25 item 6) and never outlive its stop
(issue 27 item 14): the hot-update directory seen through the mount the pod got at start, the joint-inference
reporter that dies after one give-up, requests without a timeout that stop() still ends, each pod's own log lines,
no import of the sandbox."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading

from testkit import REPO, wait_for
from testkit.workers import sedna_worker_pod

from workersim import LCClient
from workersim.sdkmode import rewrite_env

IL = "incrementallearningjob"
JI = "jointinferenceservice"
HOT_DIR = "var/lib/sedna/model-hot-update/default/incrementallearningjob/helmet"


def hot_update_pod():
    env = {"NAMESPACE": "default", "JOB_NAME": "helmet", "WORKER_NAME": "inferworker-h", "MODEL_HOT_UPDATE": "true",
           "MODEL_POLL_PERIOD_SECONDS": "60", "MODEL_HOT_UPDATE_CONFIG": "/model-hot-update/model_config.json"}
    return sedna_worker_pod(IL, "inference", "helmet", env, annotations={
        "sandbox.sedna.io/worker-period-seconds": "0.05"},
        host_mounts={f"/{HOT_DIR}": "/model-hot-update"})


def write_config(directory, version):
    (directory / "model.pb").write_bytes(b"model")
    (directory / "model_config.json").write_text(json.dumps(
        {"model_config": {"model_path": "/model-hot-update/model.pb", "model_update_time": version}}))


def test_a_hot_update_directory_replaced_after_the_pod_started_is_invisible_to_it(make_simulator, run_pod, lc,
                                                                                  rootfs, tmp_path):
    make_simulator(pod_logs_dir=tmp_path / "logs")
    pod = run_pod(hot_update_pod())
    directory = rootfs / HOT_DIR
    log = tmp_path / "logs" / "default" / f"{pod['metadata']['name']}.log"
    # its mounts are open once it logs its start (the directory alone shows up before the pod opened it)
    wait_for("the worker's start", lambda: log.read_text() if log.exists() else "",
             check=lambda t: "worker started" in t)
    assert directory.is_dir()
    # the node replaces the directory: the pod keeps the one it mounted (moved away here, so it can still be written)
    mounted = directory.with_name("helmet.mounted")
    directory.rename(mounted)
    directory.mkdir()
    write_config(directory, "v1")
    wait_for("the SDK's complaint about the config it cannot read",
             lambda: log.read_text() if log.exists() else "", check=lambda t: "fail to parse model hot update" in t)
    write_config(mounted, "v2")
    wait_for("the deploy report", lc.bodies, check=lambda b: len(b) == 1)
    assert lc.bodies()[0]["kind"] == "deploy" and lc.bodies()[0]["status"] == "completed"
    assert "hot update of the model version=v2" in log.read_text()
    assert "version=v1" not in log.read_text()


def test_a_hot_update_config_not_written_yet_is_waited_for_without_an_error(make_simulator, run_pod, lc, rootfs,
                                                                            tmp_path):
    """Before the first deploy the LC has written no config: the normal wait of a healthy job (the SDK logs an error
    there; the simulator says it at info level), then the first config is loaded."""
    make_simulator(pod_logs_dir=tmp_path / "logs")
    pod = run_pod(hot_update_pod())
    log = tmp_path / "logs" / "default" / f"{pod['metadata']['name']}.log"
    waiting = wait_for("the wait for the config", lambda: log.read_text() if log.exists() else "",
                       check=lambda t: "no model hot update config yet" in t)
    # the poll that found no config logged that line, where the SDK's complaint would have been
    assert " info no model hot update config yet" in waiting and " error " not in waiting, waiting
    write_config(rootfs / HOT_DIR, "v1")
    wait_for("the deploy report", lc.bodies, check=lambda b: len(b) == 1)
    assert lc.bodies()[0]["kind"] == "deploy" and lc.bodies()[0]["status"] == "completed"
    assert " error " not in log.read_text()


def ji_pod(name, period="0.05"):
    env = {"NAMESPACE": "default", "SERVICE_NAME": "ji", "JOB_NAME": "ji", "WORKER_NAME": name}
    return sedna_worker_pod(JI, "edge", "ji", env, name=f"ji-edge-{name}", annotations={
        "sandbox.sedna.io/worker-period-seconds": period})


def test_the_joint_inference_reporter_dies_after_one_give_up(make_simulator, run_pod, lc, phase, tmp_path):
    make_simulator(lc_client=LCClient(attempts=2, retry_wait=0.01), pod_logs_dir=tmp_path / "logs")
    lc.fail_next = 2  # both tries of the first report
    dead = run_pod(ji_pod("edgeworker-dead"))
    log = tmp_path / "logs" / "default" / f"{dead['metadata']['name']}.log"
    wait_for("the reporter's death", lambda: log.read_text() if log.exists() else "",
             check=lambda t: "joint-inference reporter died" in t)
    # a later pod reports period after period to the same LC; the dead reporter never again
    run_pod(ji_pod("edgeworker-live"))
    wait_for("three reports of the live worker", lambda: lc.bodies("edgeworker-live"), check=lambda b: len(b) >= 3)
    assert lc.bodies("edgeworker-dead") == [] and lc.refused == 2
    assert phase(dead) == "Running"  # the service itself runs on


def test_a_request_has_no_timeout_and_stop_still_ends_it(make_simulator, run_pod, cs):
    hanging = socket.socket()
    hanging.bind(("127.0.0.1", 0))
    hanging.listen(8)  # accepts connections, never answers
    try:
        simulator = make_simulator(default_lc=f"http://127.0.0.1:{hanging.getsockname()[1]}",
                                   lc_client=LCClient(attempts=5, retry_wait=0.01))
        run_pod(ji_pod("edgeworker-hang"))
        wait_for("the report under way", simulator.lc_client.in_flight, timeout=10)
        simulator.stop()
        assert simulator.worker_threads() == []
    finally:
        hanging.close()


def test_each_pod_gets_its_own_log_lines(make_simulator, run_pod, lc, phase, tmp_path):
    make_simulator(pod_logs_dir=tmp_path / "logs")
    env = {"NAMESPACE": "default", "JOB_NAME": "helmet", "WORKER_NAME": "train-worker-log",
           "MODEL_URL": "/home/data/il/output/train/1"}
    pod = run_pod(sedna_worker_pod(IL, "train", "helmet", env, name="helmet-train-log", host_dirs=["/il/output/train"],
                                   annotations={"sandbox.sedna.io/worker-delay-seconds": "0"}))
    wait_for("the pod to succeed", lambda: phase(pod), check=lambda p: p == "Succeeded")
    lines = (tmp_path / "logs/default/helmet-train-log.log").read_text().splitlines()
    events = [" ".join(line.split()[2:5]) for line in lines]
    assert events[0].startswith("worker started") and any(e.startswith("worker report sent") for e in events)
    assert events[-1].startswith("worker exited")


def test_the_simulator_never_imports_the_sandbox():
    code = ("import sys, workersim, workersim.__main__, workersim.sdkmode; "
            "print([m for m in sys.modules if m.startswith('apis.fake')])")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_sdk_sees_its_mounts_where_the_pod_has_them(tmp_path):
    env = {"MODEL_URL": "/home/data/il/output/train/1", "DATA_PATH_PREFIX": "/home/data",
           "MODEL_URLS": "/downloads/a/model.pb;/home/data/il/output/train/1/m.pb", "NAMESPACE": "default",
           "MODEL_HOT_UPDATE_CONFIG": "/model-hot-update/model_config.json"}
    mounts = [("/model-hot-update", "/proc/1/fd/7"), ("/home/data/il/output/train", "/rootfs/il/output/train")]
    assert rewrite_env(env, mounts, tmp_path / "rootfs", tmp_path / "private") == {
        "MODEL_URL": "/rootfs/il/output/train/1", "DATA_PATH_PREFIX": str(tmp_path / "rootfs"),
        "MODEL_URLS": f"{tmp_path}/private/downloads/a/model.pb;/rootfs/il/output/train/1/m.pb",
        "NAMESPACE": "default", "MODEL_HOT_UPDATE_CONFIG": "/proc/1/fd/7/model_config.json"}


def test_a_200_whose_body_is_not_json_is_retried_as_the_sdk_does():
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    posts = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server API
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            posts.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"OK")

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server API
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        assert LCClient(attempts=3, retry_wait=0).send(url, "w", {"name": "w"}) is False
        assert posts == ["/sedna/workers/w/info"] * 3
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_a_pod_log_stops_at_its_bound_saying_so(tmp_path, monkeypatch):
    from workersim import podlogs

    monkeypatch.setattr(podlogs, "MAX_POD_LOG_BYTES", 200)
    problems = []
    log = podlogs.PodLog(tmp_path, "default", "p", lambda event, **kw: problems.append(event))
    for i in range(20):
        log.append(f"line {i} " + "x" * 20)
    lines = (tmp_path / "default" / "p.log").read_text().splitlines()
    assert lines[0].startswith("line 0 ") and "later lines are dropped" in lines[-1]
    assert len(lines) < 20 and problems == []
