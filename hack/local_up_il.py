"""``python -m hack.local_up``'s main job: the sample IncrementalLearningJob through one Train → Eval → Deploy round on
two edge nodes, its stages printed as ``kubectl get il -w`` shows them (one line per condition), with the pods the GM
creates for it.

The objects are the chart's samples (``charts/sedna/samples/``): ``dataset.yaml``, ``incrementallearningjob.yaml``
and its deploy Model (``references/models.yaml``); the base Model is a host path here (the sample's is in S3).
Changed for a fast local run: the nodes (the Dataset on ``edge-node-1``, every worker on ``edge-node-2``), the train trigger
(more than 10 new training samples, checked every second, instead of 500 at night), the hot-update poll period (1 s)
and the time the simulated workers take (0.5 s). The Dataset starts with 10 samples (8 for training: not enough);
once the job waits for them, 5 more are appended to its index on edge-node-1 (4 more for training: the trigger fires).
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from apis.sedna.constants import condition_offset

from ._procs import SAMPLES, pause

NS = "default"
DATASET_NODE, WORKER_NODE = "edge-node-1", "edge-node-2"
FIRST, MORE = 10, 5
KIND = "incrementallearningjob"
ROW = "{:<52} {:<8} {:<10} {}"


def _load(path: Path, name: str | None = None) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    obj = next(d for d in docs if name is None or d["metadata"]["name"] == name)
    obj["metadata"].setdefault("namespace", NS)
    return obj


def sample_objects() -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """The Dataset, the Models and the IncrementalLearningJob, from the samples, set up as the module doc says."""
    job = _load(SAMPLES / "incrementallearningjob.yaml")
    spec = job["spec"]
    dataset = _load(SAMPLES / "dataset.yaml")
    dataset["spec"]["nodeName"] = DATASET_NODE
    deploy_model = _load(SAMPLES / "references" / "models.yaml", spec["deploySpec"]["model"]["name"])
    base_model = {"apiVersion": "sedna.io/v1alpha1", "kind": "Model",
                  "metadata": {"name": spec["initialModel"]["name"], "namespace": NS},
                  "spec": {"url": "/data/models/helmet_detection/base/model.pb", "format": "pb"}}
    for part in ("trainSpec", "evalSpec", "deploySpec"):
        template = spec[part]["template"]
        template["spec"]["nodeName"] = WORKER_NODE
        template.setdefault("metadata", {}).setdefault("annotations", {})[
            "sandbox.sedna.io/worker-delay-seconds"] = "0.5"
    spec["trainSpec"]["trigger"] = {"checkPeriodSeconds": 1,
                                    "condition": {"operator": ">", "threshold": 10, "metric": "num_of_samples"}}
    spec["deploySpec"]["model"]["pollPeriodSeconds"] = 1
    return dataset, [base_model, deploy_model], job


def age(since: str, at: str) -> str:
    """kubectl's age (``duration.HumanDuration`` below an hour): ``7s``, ``2m5s``, ``12m``."""
    seconds = max(0, int((_time(at) - _time(since)).total_seconds()))
    if seconds < 120:
        return f"{seconds}s"
    return f"{seconds // 60}m{seconds % 60}s" if seconds < 600 else f"{seconds // 60}m"


def _time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


class Follower:
    """Prints a job's new conditions and new pods in the order they happened: a pod created by the GM carries the
    number of conditions the job had had then (``sedna.io/condition-count``, pruned ones included), so it is printed
    right after those."""

    def __init__(self, cs: Any, name: str, say: Any) -> None:
        self.cs, self.name, self.say = cs, name, say
        self.printed = 0
        self.pods: set[str] = set()
        self.conditions: list[dict[str, Any]] = []

    def poll(self) -> list[dict[str, Any]]:
        """Print what is new; returns the conditions printed so far."""
        job = self.cs.sedna_v1alpha1().incremental_learning_jobs(NS).get(self.name)
        created = job["metadata"]["creationTimestamp"]
        status = job.get("status") or {}
        conditions = status.get("conditions") or []
        offset = condition_offset(status)  # a finished round's conditions leave the status: count them
        selector = f"{KIND}.sedna.io/name={self.name}"
        pods = sorted(self.cs.core_v1().pods(NS).list(label_selector=selector)["items"],
                      key=lambda p: int(p["metadata"].get("annotations", {}).get("sedna.io/condition-count", "0")))
        for index in range(max(self.printed, offset), offset + len(conditions) + 1):
            self._pods(pods, index)
            if index < offset + len(conditions):
                c = conditions[index - offset]
                self.say(ROW.format(f"il/{self.name}", c.get("stage", ""), c.get("type", ""),
                                    age(created, c.get("lastTransitionTime") or created)))
        self.printed = offset + len(conditions)
        self.conditions = conditions
        return conditions

    def _pods(self, pods: list[dict[str, Any]], count: int) -> None:
        for pod in pods:
            md = pod["metadata"]
            if md["name"] in self.pods or int(md.get("annotations", {}).get("sedna.io/condition-count", "0")) != count:
                continue
            self.pods.add(md["name"])
            worker = md["labels"].get(f"{KIND}.sedna.io/worker-type", "?")
            self.say(ROW.format(f"pod/{md['name']}", "", "created", f"({worker} worker on {pod['spec'].get('nodeName')})"))


def _states(conditions: list[dict[str, Any]]) -> list[str]:
    return [f"{c.get('stage')}/{c.get('type')}" for c in conditions]


def create_job(cs: Any, workdir: Path, timeout: float, say: Any) -> tuple[str, Path] | None:
    """Create the Models, the Dataset (its index of ``FIRST`` samples on its node) and, once the LC counted them, the
    IncrementalLearningJob; returns the job's name and the index file (``None`` when the count did not come)."""
    dataset, models, job = sample_objects()
    index = workdir / DATASET_NODE / dataset["spec"]["url"].lstrip("/")
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text("".join(f"images/{i}.jpg\n" for i in range(FIRST)), encoding="utf-8")
    sedna = cs.sedna_v1alpha1()
    for model in models:  # first, so that sedna-gm knows them when the job comes
        sedna.models(NS).create(model)
    say(f"==> created Models {NS}/{models[0]['metadata']['name']} and {NS}/{models[1]['metadata']['name']} "
        f"(host paths on {WORKER_NODE})")
    datasets = sedna.datasets(NS)
    datasets.create(dataset)
    ds_name = dataset["metadata"]["name"]
    say(f"==> created Dataset {NS}/{ds_name} on {DATASET_NODE} (index {index}: {FIRST} samples)")
    if not _wait_count(datasets, ds_name, FIRST, timeout, say):
        return None
    name = job["metadata"]["name"]
    sedna.incremental_learning_jobs(NS).create(job)
    say(f"==> created IncrementalLearningJob {NS}/{name} (workers on {WORKER_NODE}): a round starts once more than "
        f"10 new samples are for training (trainProb 0.8)")
    return name, index


def run_il_job(cs: Any, workdir: Path, timeout: float, say: Any) -> bool:
    """Create the objects, grow the Dataset, follow the job through one round; True once the round is complete."""
    created = create_job(cs, workdir, timeout, say)
    if created is None:
        return False
    name, index = created
    dataset, models, _ = sample_objects()  # their names and the deploy Model's URL
    datasets = cs.sedna_v1alpha1().datasets(NS)
    ds_name = dataset["metadata"]["name"]
    say(ROW.format("NAME", "STAGE", "STATUS", "AGE"))
    follower = Follower(cs, name, say)
    deadline = time.monotonic() + timeout
    appended = False
    while time.monotonic() < deadline:
        states = _states(follower.poll())
        failed = next((c for c in follower.conditions if c.get("type") == "Failed"), None)
        if failed is not None:
            say(f"==> {NS}/{name} failed its {failed.get('stage')} stage: {failed.get('message') or 'no message'}")
            return False
        if not appended and states[-1:] == ["Train/Waiting"]:
            with open(index, "a", encoding="utf-8") as fh:
                fh.writelines(f"images/{i}.jpg\n" for i in range(FIRST, FIRST + MORE))
            appended = True
            say(f"==> appended {MORE} samples to the index on {DATASET_NODE}")
            if not _wait_count(datasets, ds_name, FIRST + MORE, timeout, say):
                return False
        if "Deploy/Completed" in states and states[-1] == "Train/Waiting":
            return _deployed(workdir, follower, models[1], say)
        pause(0.1)
    say(f"==> timed out after {timeout:.0f}s; {NS}/{name} is at {(_states(follower.conditions) or ['-'])[-1]}")
    return False


def _wait_count(datasets: Any, name: str, expected: int, timeout: float, say: Any) -> bool:
    deadline = time.monotonic() + timeout
    count = None
    while time.monotonic() < deadline:
        count = (datasets.get(name).get("status") or {}).get("numberOfSamples")
        if count == expected:
            say(f"    {NS}/{name} numberOfSamples={count} (reported by the LC on {DATASET_NODE})")
            return True
        pause(0.1)
    say(f"==> timed out waiting for numberOfSamples={expected} of {NS}/{name} (last: {count})")
    return False


def _deployed(workdir: Path, follower: Follower, deploy_model: dict[str, Any], say: Any) -> bool:
    """Show that the model trained this round is the deployed one now (on the worker node's disk)."""
    url = deploy_model["spec"]["url"]
    path = workdir / WORKER_NODE / url.lstrip("/")
    try:
        trained_by = json.loads(path.read_text(encoding="utf-8"))["pod"]
    except (OSError, ValueError, KeyError) as exc:
        trained_by, problem = "", f"{type(exc).__name__}: {exc}"
    else:
        problem = "" if trained_by in follower.pods else f"it was saved by pod/{trained_by}, not by this job's"
    if problem:
        say(f"==> the round completed but the deploy Model's file {path} is not the model trained in it: {problem}")
        return False
    say(f"==> one round Train → Eval → Deploy done: {url} on {WORKER_NODE} (the deploy Model)")
    say(f"    is the model trained by pod/{trained_by}, hot-loaded by the inference worker")
    return True
