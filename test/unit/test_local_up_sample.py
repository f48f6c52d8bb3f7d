"""``sedna-local-up --sample``'s pure parts, on files and the fake clientset: where the objects a sample names are found
(a sample copied elsewhere alone takes them from the bundled samples, and says so; a name found nowhere names the
places looked in), demo data written only for the bundled samples' Datasets, and which reasons end a run at once
(a missing node, Model or Dataset file, an invalid spec, a pod bound to a node that does not exist) while one the API
server contradicts (the GM's cache was late) does not."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path
from typing import Any

import pytest

from apis.fake import FakeClientset
from hack._procs import SAMPLES
from hack.local_up_follow import Follower, Problem, Warnings, follow_all
from hack.local_up_sample import Found, catalog, key_of, load, named_by, seed_datasets, with_references

IL = "helmet-detection-incremental"


def copied(tmp_path: Path, name: str = "incrementallearningjob.yaml") -> Path:
    target = tmp_path / "mine" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(SAMPLES / name, target)
    return target


def test_a_sample_copied_elsewhere_takes_what_it_names_from_the_bundled_samples_and_says_which_file(tmp_path):
    sample = copied(tmp_path)
    said: list[str] = []
    objects = with_references([Found(obj, sample) for obj in load(sample)], catalog(sample), said.append)
    by_key = {key_of(f.obj): f for f in objects}
    assert by_key[("Model", "default", "helmet-detection-deploy-model")].path == SAMPLES / "references" / "models.yaml"
    assert by_key[("Dataset", "default", "helmet-detection-dataset")].path == SAMPLES / "dataset.yaml"
    assert f"==> incrementallearningjob.yaml names Model default/helmet-detection-deploy-model: not beside it, taken " \
           f"from {SAMPLES / 'references' / 'models.yaml'}" in said
    assert [f.obj["kind"] for f in objects] == ["Secret", "Model", "Model", "Dataset", "IncrementalLearningJob"]


def test_a_file_beside_the_sample_wins_over_the_bundled_one(tmp_path):
    sample = copied(tmp_path)
    shutil.copy(SAMPLES / "dataset.yaml", sample.parent / "dataset.yaml")
    said: list[str] = []
    objects = with_references([Found(obj, sample) for obj in load(sample)], catalog(sample), said.append)
    dataset = next(f for f in objects if f.obj["kind"] == "Dataset")
    assert dataset.path == sample.parent / "dataset.yaml" and not dataset.bundled
    assert not any("Dataset" in line for line in said)


def test_a_name_found_nowhere_is_said_with_every_place_looked_in(tmp_path):
    sample = copied(tmp_path)
    sample.write_text(sample.read_text().replace("helmet-detection-deploy-model", "helmet-detection-deploy-modle"))
    said: list[str] = []
    objects = with_references([Found(obj, sample) for obj in load(sample)], catalog(sample), said.append)
    assert ("Model", "default", "helmet-detection-deploy-modle") not in {key_of(f.obj) for f in objects}
    [line] = [line for line in said if "deploy-modle" in line]
    for place in (sample.parent, sample.parent / "references", SAMPLES, SAMPLES / "references"):
        assert f"{place}/*.yaml" in line
    assert "put a file that defines it beside the sample, or create it yourself" in line


def test_demo_data_is_written_only_for_a_bundled_samples_dataset(tmp_path):
    rootfs = {"edge-node-1": tmp_path / "edge-node-1"}
    index = rootfs["edge-node-1"] / "data/helmet_detection/train_data/train_data.txt"
    own = copied(tmp_path, "dataset.yaml")
    said: list[str] = []
    seed_datasets([Found(obj, own) for obj in load(own)], rootfs, said.append)
    assert not index.exists()
    assert said == [f"==> Dataset default/helmet-detection-dataset (from {own}) indexes "
                    f"/data/helmet_detection/train_data/train_data.txt on edge-node-1, which is not there ({index}): "
                    "local_up writes demo data only for the bundled samples' Datasets; write that file (one sample a "
                    "line), or the LC reports URLNotFound"]
    said.clear()
    seed_datasets([Found(obj, SAMPLES / "dataset.yaml") for obj in load(SAMPLES / "dataset.yaml")], rootfs, said.append)
    assert len(index.read_text().splitlines()) == 10
    assert said == [f"==> wrote {index} on edge-node-1: 10 samples for Dataset default/helmet-detection-dataset "
                    "(demo data of a bundled sample)"]


# -- what ends a run --------------------------------------------------------------------------------------------------
def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def il_job(status: dict[str, Any] | None = None) -> dict[str, Any]:
    job = load(SAMPLES / "incrementallearningjob.yaml")[0]
    job["metadata"]["uid"] = "job-uid"
    if status is not None:
        job["status"] = status
    return job


def warning(reason: str, message: str, involved: dict[str, Any], n: int = 1) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "type": "Warning", "reason": reason, "message": message,
            "metadata": {"name": f"ev-{reason.lower()}-{n}", "namespace": "default", "uid": f"ev-{n}"},
            "involvedObject": involved}


@functools.cache
def bundled() -> dict[tuple[str, str, str], Found]:
    return catalog(SAMPLES / "incrementallearningjob.yaml")


def follower(job: dict[str, Any]) -> Follower:
    named = named_by(job, bundled())
    return Follower(job, lambda _: None, named, [bundled()[k].obj for k in named if k[0] == "Dataset"])


def references() -> list[dict[str, Any]]:
    """The IncrementalLearningJob sample's Models, Dataset and Secret."""
    return [bundled()[k].obj for k in named_by(il_job(), bundled())]


def stop(cs: FakeClientset, job: dict[str, Any]) -> Problem | None:
    """What ends the run for ``job`` (uid ``job-uid``), as ``follow_all`` decides each time it looks."""
    f = follower(job)
    warnings = Warnings(cs, lambda _: None)
    events = warnings.read(["default"])
    return f.terminal(cs, job.get("status") or {}, warnings.about(f, "job-uid", events))


JOB_REF = {"kind": "IncrementalLearningJob", "namespace": "default", "name": IL, "uid": "job-uid"}


@pytest.mark.parametrize("model_exists", [True, False])
def test_model_not_found_ends_the_run_only_while_the_model_is_missing(model_exists):
    objects = [o for o in references() if model_exists or o["metadata"]["name"] != "helmet-detection-deploy-model"]
    event = warning("ModelNotFound", "model default/helmet-detection-deploy-model (deploySpec.model) not found; "
                    "waiting for it", JOB_REF)
    cs = FakeClientset(*objects, node("edge-node-1"), event)
    found = stop(cs, il_job())
    if model_exists:  # the GM's cache was late: it will see the Model
        assert found is None
    else:
        assert found is not None and found.reason == "ModelNotFound" and "(deploySpec.model)" in found.message


@pytest.mark.parametrize("node_exists", [True, False])
def test_node_not_found_on_the_current_condition_ends_the_run_only_while_the_node_is_missing(node_exists):
    message = "node edge-node-1 (spec.trainSpec.template.spec.nodeName) not found; waiting for it"
    job = il_job({"conditions": [{"stage": "Train", "type": "Waiting", "reason": "NodeNotFound", "message": message}]})
    cs = FakeClientset(*references(), *([node("edge-node-1")] if node_exists else []))
    assert stop(cs, job) == (None if node_exists else Problem("NodeNotFound", message))


def test_an_invalid_spec_or_unknown_metric_ends_the_run_at_once():
    job = il_job({"conditions": [{"stage": "Train", "type": "Waiting", "reason": "UnknownTriggerMetric",
                                  "message": "spec.trainSpec.trigger.condition.metric 'x' is not a metric"}]})
    cs = FakeClientset(*references(), node("edge-node-1"))
    assert stop(cs, job) == Problem("UnknownTriggerMetric", "spec.trainSpec.trigger.condition.metric 'x' is not a metric")


def test_a_pod_of_the_job_bound_to_a_missing_node_ends_the_run_naming_the_field():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": f"{IL}-train-abcde", "namespace": "default", "uid": "pod-uid",
        "labels": {"incrementallearningjob.sedna.io/name": IL}}, "spec": {"nodeName": "edge-nod-1"}}
    job = il_job()
    job["spec"]["trainSpec"]["template"]["spec"]["nodeName"] = "edge-nod-1"
    event = warning("FailedScheduling", '0/3 nodes are available: pod is bound to node "edge-nod-1", which does not '
                    "exist.", {"kind": "Pod", "namespace": "default", "name": f"{IL}-train-abcde", "uid": "pod-uid"})
    cs = FakeClientset(*references(), node("edge-node-1"), pod, event)
    found = stop(cs, job)
    assert found is not None and found.reason == "FailedScheduling"
    assert found.message.startswith(f"pod {IL}-train-abcde: 0/3 nodes are available")
    assert found.message.endswith("(the IncrementalLearningJob's spec.trainSpec.template.spec.nodeName)")


def test_the_run_stops_at_the_first_failure_without_waiting_for_the_others():
    failed = il_job({"conditions": [{"type": "Failed", "reason": "InvalidSpec", "message": "spec.x: bad"}]})
    other = load(SAMPLES / "jointinferenceservice.yaml")[0]
    cs = FakeClientset(*references(), node("edge-node-1"), failed, other)
    said: list[str] = []
    followers = [(Follower(failed, said.append), "job-uid"), (Follower(other, said.append), "other-uid")]
    assert follow_all(cs, followers, 60, said.append, ("edge-node-1",)) is False
    assert f"==> IncrementalLearningJob default/{IL}: InvalidSpec: spec.x: bad" in said
    assert "==> JointInferenceService default/helmet-detection-inference: not followed further (the run stops at " \
           "the first failure)" in said
    assert not any("timed out" in line for line in said)
