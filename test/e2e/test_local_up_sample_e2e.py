"""``sedna-local-up --sample FILE`` with a file of the user's own, as a newcomer makes one (issue 41 items 3 and 4):

* a sample with a mistyped node ends at once with exit 1, naming the reason and the field, not at its timeout;
* a bundled sample copied alone into another directory runs: the Models it names come from the bundled samples,
  and the output says from which file;
* a Dataset of the user's own whose index file is missing gets no demo data: the output names the file to write, and
  the run ends with the LC's ``URLNotFound``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import REPO

pytestmark = pytest.mark.e2e

SAMPLES = REPO / "charts" / "sedna" / "samples"


def local_up(workdir: Path, sample: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hack.local_up", "--workdir", str(workdir), "--timeout", "60",
                           "--sample", str(sample)], cwd=REPO, capture_output=True, text=True, timeout=240)


def copy(tmp_path: Path, name: str, text: str | None = None) -> Path:
    target = tmp_path / "mine" / name
    target.parent.mkdir(exist_ok=True)
    if text is None:
        shutil.copy(SAMPLES / name, target)
    else:
        target.write_text(text)
    return target


def test_a_mistyped_node_ends_the_run_at_once_naming_the_reason_and_the_field(tmp_path):
    text = (SAMPLES / "incrementallearningjob.yaml").read_text()
    sample = copy(tmp_path, "incrementallearningjob.yaml", text.replace("nodeName: edge-node-1", "nodeName: edge-nod-1", 1))
    done = local_up(tmp_path / "work", sample)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "==> IncrementalLearningJob default/helmet-detection-incremental: NodeNotFound: node edge-nod-1 " \
           "(spec.trainSpec.template.spec.nodeName) not found" in out, out[-4000:]
    assert "timed out" not in out
    assert "==> sedna-gm stopped (exit code 0)" in out


def test_a_sample_copied_alone_elsewhere_runs_with_the_bundled_samples_references(tmp_path):
    sample = copy(tmp_path, "jointinferenceservice.yaml")
    done = local_up(tmp_path / "work", sample)
    out = done.stdout
    assert done.returncode == 0, out[-4000:] + done.stderr
    assert "==> jointinferenceservice.yaml names Model default/helmet-detection-little-model: not beside it, taken " \
           f"from {SAMPLES / 'references' / 'models.yaml'}" in out
    assert "==> JointInferenceService default/helmet-detection-inference: Running, the edge worker's reports in " \
           "status.metrics" in out


def test_a_dataset_of_your_own_gets_no_demo_data_and_its_missing_file_ends_the_run(tmp_path):
    sample = copy(tmp_path, "dataset.yaml")
    workdir = tmp_path / "work"
    done = local_up(workdir, sample)
    out = done.stdout
    index = workdir / "edge-node-1" / "data" / "helmet_detection" / "train_data" / "train_data.txt"
    assert done.returncode == 1, out[-4000:] + done.stderr
    assert not index.exists()
    assert f"on edge-node-1, which is not there ({index}): local_up writes demo data only for the bundled samples' " \
           "Datasets; write that file" in out
    assert "==> Dataset default/helmet-detection-dataset: URLNotFound: node edge-node-1: " \
           "/data/helmet_detection/train_data/train_data.txt" in out, out[-4000:]
