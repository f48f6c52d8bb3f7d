"""``python -m apis.fake.apiserver`` as a real process: prints its URL, serves, exits 0 on SIGTERM."""

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
from testkit import minimal_crd

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CRD = minimal_crd("example.org", "things", "Thing", scope="Cluster", version="v1beta1")


def _start(*args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen(
        [sys.executable, "-m", "apis.fake.apiserver", *args],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def test_cli_serves_loads_crds_and_exits_cleanly_on_sigterm(tmp_path: Path) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "thing.yaml").write_text("# a comment-only document is skipped\n---\n" + yaml.safe_dump(CRD))
    kubeconfig = tmp_path / "kubeconfig"
    proc = _start("--port", "0", "--no-kubelet", "--crds", str(crds), "--kubeconfig-out", str(kubeconfig), "--seed", "1")
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


def test_cli_rejects_a_missing_crd_dir(tmp_path: Path) -> None:
    proc = _start("--port", "0", "--crds", str(tmp_path / "missing"))
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2 and "does not exist" in err


@pytest.mark.parametrize("value", ["-1", "nan", "soon"])
def test_cli_rejects_a_bad_event_ttl(value: str) -> None:
    proc = _start("--port", "0", "--event-ttl", value)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2 and "--event-ttl" in err
