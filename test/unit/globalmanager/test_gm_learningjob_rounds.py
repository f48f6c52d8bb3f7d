"""A learning job that learns for a year: its status keeps what the next round and the LCs read and nothing of the
finished rounds (each becomes an Event), so the object stays small and every round still trains from the model the
last one deployed (issue 43)."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from learningjob_test_helpers import (
    IL_KIND,
    IL_REFS,
    LL_KIND,
    LearningHarness,
    condition,
    il_job,
    ll_job,
    refs_for,
)
from sedna_test_helpers import NS

from apis import meta
from apis import resources as r
from apis.sedna.constants import condition_offset
from globalmanager.controllers.learningjob.rounds import MAX_EVENT_MESSAGE, carried_conditions, start_round
from localcontroller.managers.learning.conditions import condition_models, current_stage

MAX_OBJECT_BYTES = 64 * 1024
ROUNDS = 1000
DEPLOY_MODEL = {"format": "pb", "url": "/models/deploy.pb"}


def lc_models(job: dict[str, Any], stage: str) -> list[dict[str, Any]]:
    """What an LC reads from the job (ours: ``condition_models``; Go's ``getModelsFromJobConditions`` walks the same
    way): the output models of the latest ``<stage>/Completed`` with an output."""
    return condition_models(job, stage, "Completed") or []


class RoundDriver:
    """Plays the LCs and the workers of one IL job (cold deploy) around the GM's controller, one round at a time."""

    def __init__(self, h: LearningHarness, name: str = "il") -> None:
        self.h, self.name = h, name
        h.refresh()  # every cache once (the Models and the Dataset do not change)

    def refresh(self, *gvrs: Any) -> None:
        """The informer caches of what a round changes (the job, its pods) as the fake API server has them."""
        for gvr in gvrs or (self.h.job_resource, r.PODS):
            indexer = self.h.factory.for_resource(gvr).informer().get_indexer()
            indexer.replace(self.h.cs.resource(gvr, "").list()["items"], "")

    def step(self) -> None:
        self.refresh()
        self.h.sync(self.name)

    def newest_pod(self, worker: str) -> dict[str, Any]:
        return max(self.h.pods(worker), key=lambda p: int(meta.annotations(p)["sedna.io/condition-count"]))

    def pod_phase(self, worker: str, phase: str) -> dict[str, Any]:
        pod = self.newest_pod(worker)
        return self.h.set_status(r.PODS, meta.name(pod), {"phase": phase})

    def report(self, node: str, content: dict[str, Any]) -> None:
        self.refresh(self.h.job_resource)
        self.h.edge.report(node, NS, self.h.job_resource.resource[:-1], self.name, content)

    def round(self, n: int) -> str:
        """Round ``n`` (each worker reports before its pod ends, as Sedna's SDK does); returns the base model its
        train pod was given."""
        job = self.h.job(self.name)
        base = [m for m in lc_models(job, "Train") if m.get("format") == "pb"][:1] or [{"format": "pb",
                                                                                        "url": "/models/initial.pb"}]
        self.report("ds-node", {"phase": "train", "status": "ready", "input": {
            "models": base, "dataURL": f"/output/data/train/{n}/data.txt", "outputDir": f"/output/train/{n}"}})
        self.step()  # Train/Starting: the train pod
        trained = {"format": "pb", "url": f"/output/train/{n}/model.pb"}
        self.report("train-node", {"phase": "train", "status": "completed", "output": {"models": [trained]}})
        train = self.pod_phase("train", "Succeeded")
        self.step()  # Eval/Waiting
        (new,) = lc_models(self.h.job(self.name), "Train")
        self.report("ds-node", {"phase": "eval", "status": "ready", "input": {
            "models": [new, DEPLOY_MODEL], "dataURL": f"/output/data/eval/{n}/data.txt"}})
        self.step()  # Eval/Starting: the eval pod
        metrics = [{**new, "metrics": {"precision": [0.5 + n / 10000], "recall": [0.5]}},
                   {**DEPLOY_MODEL, "metrics": {"precision": [0.5], "recall": [0.5]}}]
        self.report("eval-node", {"phase": "eval", "status": "completed", "output": {"models": metrics}})
        self.pod_phase("eval", "Succeeded")
        self.step()  # Deploy/Waiting
        evaluated = lc_models(self.h.job(self.name), "Eval")  # the LC's deploy decision reads both evaluations
        assert [m["url"] for m in evaluated] == [trained["url"], DEPLOY_MODEL["url"]]
        self.report("eval-node", {"phase": "deploy", "status": "ready", "input": {"models": [new, DEPLOY_MODEL]}})
        self.step()  # Deploy/Completed: the inference pod restarted
        self.step()  # the next round's Train/Waiting
        env = {e["name"]: e.get("value") for e in train["spec"]["containers"][0].get("env") or []}
        return str(env.get("BASE_MODEL_URL"))


def test_a_thousand_rounds_keep_the_object_small_and_train_from_the_last_deployed_model(make_learning_harness):
    h = make_learning_harness(IL_KIND, il_job(), *IL_REFS)
    driver = RoundDriver(h)
    driver.step()  # Train/Waiting, the inference pod
    driver.pod_phase("inference", "Running")
    largest = 0
    for n in range(1, ROUNDS + 1):
        base = driver.round(n)
        assert base == ("/home/data/models/initial.pb" if n == 1 else f"/home/data/output/train/{n - 1}/model.pb")
        job = h.job("il")
        largest = max(largest, len(orjson.dumps(job)))
        status = job["status"]
        assert status["round"] == n + 1
        assert [(c["stage"], c["type"]) for c in status["conditions"]] == [
            ("Train", "Completed"), ("Eval", "Completed"), ("Deploy", "Completed"), ("Train", "Waiting")]
        h.cs.clear_actions()
        h.edge.sent.clear()
    assert largest < MAX_OBJECT_BYTES, largest
    status = h.job("il")["status"]
    assert status["prunedConditions"] == ROUNDS * 11 + 1 - 4  # every condition ever appended but the four kept
    assert json.loads(status["conditions"][0]["data"])["output"]["models"][0]["url"] == f"/output/train/{ROUNDS}/model.pb"
    rounds = [e for e in h.events() if e[1] == "RoundCompleted"]
    assert len(rounds) == ROUNDS and rounds[-1][0] == "Normal"
    assert rounds[-1][2] == (f'round {ROUNDS} completed: Train Completed (model /output/train/{ROUNDS}/model.pb); '
                             f'Eval Completed (/output/train/{ROUNDS}/model.pb {{"precision":[{0.5 + ROUNDS / 10000:g}],'
                             '"recall":[0.5]}, /models/deploy.pb {"precision":[0.5],"recall":[0.5]}); '
                             f'Deploy Completed (deployed /output/train/{ROUNDS}/model.pb)')
    assert len(h.pods()) == 3  # the inference pod, the last round's train and eval pods


@pytest.mark.parametrize("kind", [IL_KIND, LL_KIND])
def test_a_stage_whose_latest_end_has_no_output_keeps_the_one_with_the_model(make_learning_harness, kind):
    """The GM ended a Train from its pod (no report: no output) after an earlier round's Train/Completed with the
    model: both stay, so an LC still finds the model (the latest Train/Completed with an output) and LL's train pod
    still knows the initial training is done."""
    job = il_job() if kind == IL_KIND else ll_job()
    name = meta.name(job)
    h = make_learning_harness(kind, job, *refs_for(kind))
    with_model = condition("Train", "Completed", {"output": {"models": [{"format": "pb", "url": "/out/1/m.pb"}]}})
    h.set_conditions(name, condition("Train", "Waiting"), with_model, condition("Eval", "Waiting"),
                     condition("Eval", "Failed"), condition("Train", "Waiting"), condition("Train", "Completed"),
                     condition("Eval", "Waiting"), condition("Eval", "Failed"))
    h.step(name)
    job = h.job(name)
    assert [(c["stage"], c["type"]) for c in job["status"]["conditions"]] == [
        ("Train", "Completed"), ("Train", "Completed"), ("Train", "Waiting")]
    assert lc_models(job, "Train") == [{"format": "pb", "url": "/out/1/m.pb"}]
    assert (job["status"]["round"], job["status"]["prunedConditions"]) == (3, 6)
    assert h.events()[-1] == ("Warning", "RoundFailed", "round 2 failed at Eval: Train Completed; Eval Failed")


def test_the_lc_tells_every_stage_instance_apart_across_pruning():
    """Our LC answers each stage instance once (position over the job's life and transition time): a new round's
    Train/Waiting at the same list position and second as the last round's is still a new instance."""
    status: dict[str, Any] = {}
    start_round(status, condition("Train", "Waiting"))
    first = current_stage({"status": status})
    for stage in ("Train", "Eval", "Deploy"):
        status["conditions"].append(condition(stage, "Completed"))
    start_round(status, condition("Train", "Waiting"))
    second = current_stage({"status": status})
    assert first is not None and second is not None
    assert len(status["conditions"]) == 4 and condition_offset(status) == 1
    assert (second.stage, second.type) == (first.stage, first.type) and second.instance != first.instance
    start_round(status, condition("Train", "Waiting"))  # a round with nothing in it: only its Train/Waiting goes
    assert condition_offset(status) == 2 and status["round"] == 3 and len(status["conditions"]) == 4


def test_a_round_event_fits_the_event_note_limit():
    status = {"conditions": [condition("Train", "Waiting"), condition("Train", "Completed", {"output": {"models": [
        {"format": "pb", "url": f"/output/train/{i}/model.pb", "metrics": {"m": [0.1] * 50}} for i in range(40)]}})]}
    finished = start_round(status, condition("Eval", "Waiting"))
    assert finished is not None and len(finished.message) == MAX_EVENT_MESSAGE and finished.message.endswith("…")
    assert carried_conditions([]) == []
