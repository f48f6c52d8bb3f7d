"""README's main command, ``python -m hack.local_up``, as a user runs it: the sandbox, ``sedna-gm``, two ``sedna-lc``
and the worker simulator come up, the sample IncrementalLearningJob goes through a whole Train → Eval → Deploy round
(printed one line per condition, with the pods created for it), everything stops with exit code 0."""

from __future__ import annotations

import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import REPO, json_log_lines, log_event
from testkit.learning import IL_HOT_UPDATE_ROUND, assert_stages

pytestmark = pytest.mark.e2e

JOB = "helmet-detection-incremental"


def test_local_up_runs_the_il_job_through_a_round(tmp_path):
    done = subprocess.run([sys.executable, "-m", "hack.local_up", "--workdir", str(tmp_path), "--timeout", "60"],
                          cwd=REPO, capture_output=True, text=True, timeout=240)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    rows = [line.split() for line in out.splitlines() if line.startswith(("il/", "pod/"))]
    assert_stages([f"{r[1]}/{r[2]}" for r in rows if r[0] == f"il/{JOB}"], ["Train/Waiting", *IL_HOT_UPDATE_ROUND])
    # each pod is shown once, after the condition it was created from, on the worker node
    order = [r[0] if r[0].startswith("pod/") else f"{r[1]}/{r[2]}" for r in rows]
    pods = [(i, name) for i, name in enumerate(order) if name.startswith("pod/")]
    assert [re.sub(r"-[a-z0-9]{5}$", "", name) for _, name in pods] == [
        f"pod/{JOB}-inference", f"pod/{JOB}-train", f"pod/{JOB}-eval"]
    assert [order[i + 1] for i, _ in pods] == ["Train/Waiting", "Train/Starting", "Eval/Starting"]
    assert all(line.endswith("worker on edge-node-2)") for line in out.splitlines() if line.startswith("pod/"))
    counts = re.findall(r"helmet-detection-dataset numberOfSamples=(\d+) \(reported by the LC on edge-node-1\)", out)
    assert counts == ["10", "15"]
    trained_by = re.search(r"is the model trained by (pod/\S+),", out)
    assert trained_by and trained_by.group(1) == pods[1][1]
    for child in ("workersim", "edge-node-2", "edge-node-1", "sedna-gm", "sandbox API server"):
        assert f"==> {child} stopped (exit code 0)" in out
    logs = ("apiserver.log", "sedna-gm.log", "edge-node-1.log", "edge-node-2.log", "workersim.log")
    assert set(logs) <= {p.name for p in tmp_path.iterdir()}
    # a happy run logs nothing that looks like a failure: no line at error level in any program's log
    lines = [(name, line) for name in logs for line in (tmp_path / name).read_text().splitlines()
             if not line.startswith("listening on ")]  # the sandbox announces its address; all else is JSON
    errors = [(name, entry) for name, line in lines for entry in json_log_lines(line)
              if entry.get("level") in ("error", "critical")]
    assert errors == []
    assert_edge_auth_by_node_tokens(tmp_path, out)


def assert_edge_auth_by_node_tokens(workdir: Path, out: str) -> None:
    """Issue 38 item 7: the main job shows the secure path: the GM takes a token per node (generated into the
    workdir, owner-only) and each LC connected with its own; no token is in a log or the output."""
    listening = log_event((workdir / "sedna-gm.log").read_text(), "listening", server="edge")
    assert listening is not None and listening["auth"] == "node-token", listening
    tokens = workdir / "edge-node-tokens"
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o700
    for node in ("edge-node-1", "edge-node-2"):
        assert stat.S_IMODE((tokens / node).stat().st_mode) == 0o600
        token = (tokens / node).read_text().strip()
        assert len(token) == 48
        logs = [p.read_text() for p in workdir.glob("*.log")] + [out]
        assert not [text for text in logs if token in text]
    assert f"edge link: each LC proves its node with its own token ({tokens}/<node>)" in out
    assert re.search(r"try: curl -si -H 'Node-Name: edge-node-1' http://127\.0\.0\.1:\d+/ ", out)


def test_local_up_with_edge_auth_off_runs_the_edge_link_open(tmp_path):
    done = subprocess.run([sys.executable, "-m", "hack.local_up", "--workdir", str(tmp_path), "--timeout", "60",
                           "--edge-auth", "off", "--sample", str(REPO / "charts/sedna/samples/dataset.yaml")],
                          cwd=REPO, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    listening = log_event((tmp_path / "sedna-gm.log").read_text(), "listening", server="edge")
    assert listening is not None and listening["auth"] == "off", listening
    assert not (tmp_path / "edge-node-tokens").exists()
    assert "edge link: auth off (--edge-auth off): any local process can connect as any node" in done.stdout


@pytest.mark.parametrize(("content", "problem"), [
    (None, "no such file"),
    ("kind: [unclosed", "not a YAML manifest"),
    ("kind: Dataset\n", "every object needs apiVersion, kind and metadata.name"),
    ("apiVersion: sedna.io/v1alpha1\nkind: Nope\nmetadata: {name: x}\n", "unknown kind 'Nope'"),
])
def test_a_sample_that_cannot_run_is_refused_before_anything_starts(tmp_path, content, problem):
    sample = tmp_path / "sample.yaml"
    if content is not None:
        sample.write_text(content)
    done = subprocess.run([sys.executable, "-m", "hack.local_up", "--sample", str(sample)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and f"--sample {sample}: {problem}" in done.stderr, done.stderr
    assert "starting" not in done.stdout


def test_the_main_job_is_a_console_script_of_the_base_install():
    """README's first command installs the base package only and runs ``sedna-local-up``: the script and the
    ``hack`` package are declared, and nothing local_up imports needs a test extra."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    scripts = dict(line.split(" = ") for line in cfg["options.entry_points"]["console_scripts"].split("\n")
                   if " = " in line)
    assert scripts["sedna-local-up"] == "hack.local_up:main"
    assert {"hack", "hack.*"} <= set(cfg["options.packages.find"]["include"].split())
    probe = ("import sys, hack.local_up, hack.local_up_il, hack.local_up_sample, hack.local_up_eaijob, "
             "hack.local_up_elasticdl; bad = sorted({'pytest', 'moto', 'ruff', 'kopf'} & set(sys.modules)); "
             "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
