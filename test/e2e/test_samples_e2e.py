"""End to end: every sample of ``charts/sedna/samples/`` run by ``python -m hack.local_up --sample FILE`` (all of them
in one local_up, on its topology: the sandbox, ``sedna-gm``, an LC on each of the samples' edge nodes, the worker
simulator), each to where its kind ends, the reports of its edge workers arriving:

* a Dataset counted by the LC of its node; a Model created;
* FederatedLearningJob ``Succeeded``, its training workers' round reports shown (the ``Training`` condition);
* IncrementalLearningJob and LifelongLearningJob through one round Train → Eval → Deploy, the LC's reports in it;
* JointInferenceService ``Running`` with the edge worker's reported metrics; the other services ``Running``;
* ReidJob, VideoAnalyticsJob, ElasticAIJob ``Succeeded`` (the ElasticAIJob sample as shipped, applied as is);

no worker report lost (``workersim`` reached an LC for every worker), every process stopped with exit code 0."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from testkit import REPO, json_log_lines

from apis import yamlutil

pytestmark = pytest.mark.e2e

SAMPLES = REPO / "charts" / "sedna" / "samples"


def _samples() -> dict[str, dict[str, Any]]:
    return {obj["kind"]: obj for path in sorted(SAMPLES.glob("*.yaml")) for obj in yamlutil.load_all(path.read_text())}


def _lines(out: str, label: str) -> list[str]:
    return [line.strip() for line in out.splitlines() if line.strip().startswith(label + " ")]


def _fl_rounds(out: str, label: str) -> bool:
    # each of the two trainers (one per edge LC) reports rounds 1..3 with its own updateTime: a report is recorded
    # once per (round, updateTime), so the two trainers' reports of a round merge only when sent in the same second
    rounds = [int(m) for line in _lines(out, label) for m in re.findall(r"Training DoTraining Round (\d+) ", line)]
    return set(rounds) == {1, 2, 3} and len(rounds) <= 6


def _learning_round(out: str, label: str) -> bool:
    stages = [line.split()[1] for line in _lines(out, label)]
    reported = [line.split()[1] for line in _lines(out, label) if line.endswith("reported by lc")]
    return "Deploy/Completed" in stages and {"Train/Ready", "Train/Completed", "Eval/Completed"} <= set(reported)


def _ji_metrics(out: str, label: str) -> bool:
    return any(re.search(r"metrics=.*inferenceNumber=\d+", line) for line in _lines(out, label))


def _count(out: str, label: str) -> bool:
    return any(re.fullmatch(rf"{label} numberOfSamples=\d+", line) for line in _lines(out, label))


# kind → (its end line's text, the reports that had to arrive, if its workers report)
ENDS: dict[str, tuple[str, Callable[[str, str], bool] | None]] = {
    "Dataset": ("numberOfSamples=", _count),
    "Model": ("created", None),
    "FederatedLearningJob": ("Succeeded after", _fl_rounds),
    "IncrementalLearningJob": ("one round Train → Eval → Deploy done", _learning_round),
    "LifelongLearningJob": ("one round Train → Eval → Deploy done", _learning_round),
    "JointInferenceService": ("Running, the edge worker's reports in status.metrics", _ji_metrics),
    "FeatureExtractionService": ("Running", None),
    "ObjectSearchService": ("Running", None),
    "ObjectTrackingService": ("Running", None),
    "ReidJob": ("Succeeded", None),  # the SDK's multi-edge inference workers never report
    "VideoAnalyticsJob": ("Succeeded", None),
    "ElasticAIJob": ("Succeeded", None),  # not a Sedna worker: nothing reports
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    workdir = tmp_path_factory.mktemp("local-up-samples")
    argv = [sys.executable, "-m", "hack.local_up", "--workdir", str(workdir), "--timeout", "60"]
    for path in sorted(SAMPLES.glob("*.yaml")):
        argv += ["--sample", str(path)]
    # from another directory than the repository's: local_up finds its CRDs and samples beside its package
    done = subprocess.run(argv, cwd=workdir, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          text=True, timeout=400)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    return done.stdout, workdir


def test_every_sample_kind_has_an_end():
    assert sorted(_samples()) == sorted(ENDS)


@pytest.mark.parametrize("kind", sorted(ENDS))
def test_the_sample_reaches_its_end_with_its_reports(run, kind):
    out, _workdir = run
    sample = _samples()[kind]
    name = sample["metadata"]["name"]
    end, reports = ENDS[kind]
    assert any(line.startswith(f"==> {kind} default/{name}: {end}") for line in out.splitlines()), out[-4000:]
    if reports is not None:
        assert reports(out, f"{kind.lower()}/{name}"), out[-4000:]


def test_no_worker_report_was_lost_and_everything_stopped_cleanly(run):
    out, workdir = run
    events = [e.get("event") for e in json_log_lines((workdir / "workersim.log").read_text())]
    assert "worker report sent" in events
    assert "worker report lost" not in events and "cannot reach the LC" not in events
    for child in ("workersim", "edge-node-2", "edge-node-1", "sedna-gm", "sandbox API server"):
        assert f"==> {child} stopped (exit code 0)" in out
