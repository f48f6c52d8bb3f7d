"""``python -m sandbox`` (and its old name ``python -m apis.fake.apiserver``) as a real process: prints its URL,
serves, logs JSON lines on stderr (its library loggers, configured by ``apis.logs.configure_process_logging``),
exits 0 on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml
from testkit import json_log_lines, minimal_crd

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CRD = minimal_crd("example.org", "things", "Thing", scope="Cluster", version="v1beta1")


def _start(*args: str, module: str = "sandbox") -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


@pytest.mark.parametrize("module", ["sandbox", "apis.fake.apiserver"])
def test_cli_serves_loads_crds_and_exits_cleanly_on_sigterm(tmp_path: Path, module: str) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "thing.yaml").write_text("# a comment-only document is skipped\n---\n" + yaml.safe_dump(CRD))
    kubeconfig = tmp_path / "kubeconfig"
    proc = _start("--port", "0", "--no-kubelet", "--crds", str(crds), "--kubeconfig-out", str(kubeconfig), "--seed", "1",
                  module=module)
    try:
        line = proc.stdout.readline()  # bounded: the process prints it once listening, or exits
        assert line.startswith("listening on http://127.0.0.1:"), (line, proc.stderr.read() if proc.poll() else "")
        url = line.split()[-1]
        assert yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"] == url
        with urllib.request.urlopen(url + "/apis/example.org/v1beta1", timeout=5) as resp:
            resources = json.loads(resp.read())["resources"]
        assert [(r["name"], r["namespaced"]) for r in resources] == [("things", False)]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert code == 0
    entries = json_log_lines(proc.stderr.read())  # not a terminal: JSON by default
    assert {(e["event"], e.get("name") or e.get("url")) for e in entries} >= {
        ("sandbox loaded CRD", "things.example.org"), ("sandbox API server listening", url),
        ("sandbox API server stopped", url)}
    assert all(e["level"] == "info" and e["logger"].startswith(("sandbox.", "apis.fake.")) for e in entries)


def test_cli_logs_key_value_lines_on_request() -> None:
    proc = _start("--port", "0", "--no-kubelet", "--log-format", "console", "--log-level", "warning")
    try:
        assert proc.stdout.readline().startswith("listening on ")
    finally:
        proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0 and err == ""  # nothing at warning or above
    proc = _start("--port", "0", "--no-kubelet", "--log-format", "console")
    try:
        url = proc.stdout.readline().split()[-1]
    finally:
        proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert "sandbox API server listening" in err and f"url={url}" in err and not err.lstrip().startswith("{")


def test_cli_rejects_a_missing_crd_dir(tmp_path: Path) -> None:
    proc = _start("--port", "0", "--crds", str(tmp_path / "missing"))
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2 and "does not exist" in err


@pytest.mark.parametrize("value", ["-1", "nan", "soon"])
def test_cli_rejects_a_bad_event_ttl(value: str) -> None:
    proc = _start("--port", "0", "--event-ttl", value)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2 and "--event-ttl" in err


@pytest.mark.parametrize(("flags", "named"), [
    (["--node", "Edge_1"], "--node"),
    (["--node", "edge-1,-bad"], "--node"),
    (["--pod-start-delay", "-1"], "--pod-start-delay"),
    (["--pod-start-delay", "nan"], "--pod-start-delay"),
])
def test_cli_rejects_bad_node_and_pod_flags(flags: list[str], named: str) -> None:
    proc = _start("--port", "0", *flags)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2 and named in err


def test_cli_pods_spend_a_kubelets_start_up_time_creating_their_containers(tmp_path: Path) -> None:
    from testkit import wait_for

    from apis.clientset import Clientset

    kubeconfig = tmp_path / "kubeconfig"
    proc = _start("--port", "0", "--kubeconfig-out", str(kubeconfig), "--log-level", "warning")
    try:
        assert proc.stdout.readline().startswith("listening on ")
        with Clientset.from_kubeconfig(str(kubeconfig)) as cs:
            pods = cs.core_v1().pods("default")
            pods.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"containers": [{"name": "c", "image": "x"}]}})

            def waiting() -> str:
                statuses = pods.get("p").get("status", {}).get("containerStatuses") or [{}]
                return ((statuses[0].get("state") or {}).get("waiting") or {}).get("reason", "")

            assert wait_for("containers being created", waiting) == "ContainerCreating"
            assert pods.get("p")["status"]["phase"] == "Pending"
            wait_for("running", lambda: pods.get("p")["status"]["phase"] == "Running")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
