"""Reports from the edge about IL/LL jobs: what is accepted and how it is recorded (Go's condition data), what is
refused (and counted), LL's knowledge base, a resent report applied once, and reports racing GM status writes."""

from __future__ import annotations

import itertools
import json
import threading
from typing import Any

import pytest
from learningjob_test_helpers import (
    EVAL_READY,
    IL_KIND,
    LL_KIND,
    TRAIN_READY,
    LearningHarness,
    condition,
    dispatch,
    il_job,
    ll_job,
    refs_for,
)
from sedna_test_helpers import NOW, NS

from apis import errors, meta
from apis import resources as r
from globalmanager.controllers.learningjob.conditions import parse_report, reported_condition
from globalmanager.controllers.lifelonglearning.upstream import knowledge_base
from globalmanager.messagelayer.dispatcher import Outcome
from globalmanager.runtime.edge import InvalidReport, UpstreamMessage


@pytest.fixture
def harness(make_learning_harness):
    def make(kind: str = IL_KIND, *extra: dict[str, Any]) -> LearningHarness:
        job = il_job() if kind == IL_KIND else ll_job()
        h = make_learning_harness(kind, job, *refs_for(kind), *extra)
        h.set_conditions(meta.name(job), condition("Train", "Waiting"))
        h.refresh()
        return h
    return make


# -- parsing ---------------------------------------------------------------------------------------------------------
def test_a_report_becomes_go_s_condition():
    content = {"phase": "Train", "status": "READY", "extra": 1, "input": {
        "models": [{"url": "/m/base.pb", "format": "pb", "extra": True, "metrics": {"recall": [0.5], "acc": 1.0},
                    "device_soc_versions": ["x86"], "history_metric": 0.1234567891, "number_of_model": 2}],
        "dataURL": "/out/data.txt", "dataIndexURL": "", "outputDir": "/out/train/1", "unknown": "x"}}
    report = parse_report(content)
    assert (report.stage, report.type) == ("Train", "Ready")
    cond = reported_condition(report, NOW)
    assert cond == {"type": "Ready", "status": "True", "stage": "Train", "lastHeartbeatTime": NOW,
                    "lastTransitionTime": NOW, "message": "reported by lc", "data": cond["data"]}
    # Go's struct order, maps sorted, float32, classes null, integral floats as integers, empty strings omitted
    assert cond["data"] == ('{"input":{"models":[{"format":"pb","url":"/m/base.pb","device_soc_versions":["x86"],'
                            '"metrics":{"acc":1,"recall":[0.5]},"history_metric":0.12345679,"classes":null,'
                            '"number_of_model":2}],"dataURL":"/out/data.txt","outputDir":"/out/train/1"}}')


@pytest.mark.parametrize("content,data", [
    ({"phase": "deploy", "status": "completed"}, "{}"),
    ({"phase": "eval", "status": "failed", "input": None, "output": {}}, '{"output":{}}'),
    ({"phase": "train", "status": "waiting", "output": {"model": {"url": "u", "classes": ["a"]}, "models": []}},
     '{"output":{"model":{"format":"","url":"u","classes":["a"]}}}'),
    ({"phase": "eval", "status": "completed", "output": {"models": [{"format": "pkl", "url": "s3://o/i.pkl",
      "current_metric": {"task2": {"f1": 0.75, "acc": 0.5}}, "number_of_labeled_unseen_sample": 3}]}},
     '{"output":{"models":[{"format":"pkl","url":"s3://o/i.pkl","current_metric":{"task2":{"acc":0.5,"f1":0.75}},'
     '"classes":null,"number_of_labeled_unseen_sample":3}]}}'),
])
def test_accepted_reports(content, data):
    assert reported_condition(parse_report(content), NOW)["data"] == data


@pytest.mark.parametrize("content,why", [
    ({"phase": "inference", "status": "running"}, "invalid condition stage"),
    ({"phase": "train", "status": "running"}, "invalid condition type"),
    ({"status": "ready"}, "invalid condition stage"),
    ({"phase": "train"}, "invalid condition type"),
    ({"phase": 1, "status": "ready"}, "invalid condition stage"),
    ({"phase": "train", "status": "ready", "input": []}, "input must be an object"),
    ({"phase": "train", "status": "ready", "input": {"dataURL": 5}}, "input.dataURL must be a string"),
    ({"phase": "train", "status": "ready", "input": {"models": {}}}, "input.models must be a list"),
    ({"phase": "train", "status": "completed", "output": {"models": [{"url": 1}]}}, r"output\.models\[0\]\.url must be a string"),
    ({"phase": "train", "status": "completed", "output": {"models": [{"number_of_model": 2.0}]}}, "integer"),
    ({"phase": "train", "status": "completed", "output": {"models": [{"current_metric": {"t": {"a": "x"}}}]}},
     "must be a number"),
])
def test_refused_reports(harness, content, why):
    with pytest.raises(InvalidReport, match=why):
        parse_report(content)
    h = harness()
    with pytest.raises(InvalidReport):  # through the registered handler: refused, not swallowed
        h.report("il", "ds-node", content)
    assert h.states("il") == [("Train", "Waiting")]


def test_a_refused_report_is_counted_by_the_edge_link(harness):
    h = harness()
    outcomes = dispatch(h, *(UpstreamMessage("ds-node", NS, "incrementallearningjob", "il", "status", content)
                             for content in ({"phase": "inference", "status": "running"},
                                             {"phase": "train", "status": "ready"})))
    assert outcomes[0].reason == "invalid_report" and "invalid condition stage" in outcomes[0].error
    assert outcomes[1] == Outcome()
    assert h.states("il") == [("Train", "Waiting"), ("Train", "Ready")]


def test_a_report_about_an_unknown_job_is_dropped(harness):
    h = harness()
    h.edge.report("ds-node", NS, "incrementallearningjob", "nope", {"phase": "train", "status": "ready"})
    assert h.jobs.list()["items"][0]["metadata"]["name"] == "il"


def test_the_lcs_reason_for_a_failure_becomes_the_condition_message(harness):
    reason = "copying the trained model to the deploy model failed: /models/deploy.pb: permission denied"
    assert parse_report({"phase": "deploy", "status": "failed", "message": reason}).reason == reason
    # a Go LC sends none; a non-string is ignored (an extension never refuses a report); spaces are squeezed and a
    # long reason is cut
    assert parse_report({"phase": "deploy", "status": "failed"}).reason == ""
    assert parse_report({"phase": "deploy", "status": "failed", "message": {"x": 1}}).reason == ""
    assert parse_report({"phase": "eval", "status": "failed", "message": " no\n  model "}).reason == "no model"
    assert len(parse_report({"phase": "eval", "status": "failed", "message": "x" * 5000}).reason) == 1024

    h = harness()
    h.set_conditions("il", condition("Train", "Waiting"), condition("Deploy", "Waiting"))
    h.report("il", "eval-node", {"phase": "deploy", "status": "failed", "output": None, "message": reason,
                                 "input": {"models": [{"format": "pb", "url": "/out/train/1/model.pb"}]}})
    failed = h.conditions("il")[-1]
    assert (failed["stage"], failed["type"]) == ("Deploy", "Failed")
    assert failed["message"] == f"reported by lc: {reason}"
    assert h.events() == [("Warning", "DeployFailed", reason)]  # where kubectl describe shows it
    h.report("il", "eval-node", {"phase": "deploy", "status": "failed", "message": reason,  # resent: once
                                 "input": {"models": [{"format": "pb", "url": "/out/train/1/model.pb"}]}})
    h.step("il")  # Failed → Train/Waiting; the LC's reason stays on its condition
    assert h.states("il")[-2:] == [("Deploy", "Failed"), ("Train", "Waiting")]
    assert h.conditions("il")[-2]["message"] == f"reported by lc: {reason}"


@pytest.mark.parametrize("reason,shown", [("PathOutsideJob", "PathOutsideJob"), ("not a word", ""), (7, ""),
                                          ("X" * 129, "")])
def test_the_lcs_event_reason_names_the_condition_and_the_warning_event(harness, reason, shown):
    message = "the trained model for the deploy model: '/var/lib/sedna/database.db' is in the LC's own state"
    h = harness()
    h.set_conditions("il", condition("Train", "Waiting"), condition("Deploy", "Waiting"))
    h.report("il", "eval-node", {"phase": "deploy", "status": "failed", "output": None, "message": message,
                                 "reason": reason})
    failed = h.conditions("il")[-1]
    assert (failed["stage"], failed["type"], failed.get("reason", "")) == ("Deploy", "Failed", shown)
    assert failed["message"] == f"reported by lc: {message}"
    assert h.events() == [("Warning", shown or "DeployFailed", message)]


# -- recorded once ---------------------------------------------------------------------------------------------------
def test_a_resent_report_is_applied_once(harness):
    h = harness()
    ready = {"phase": "train", "status": "ready", **TRAIN_READY}
    h.report("il", "ds-node", ready)
    h.report("il", "ds-node", ready)  # e.g. an LC resending after a GM restart lost the ack
    assert h.states("il") == [("Train", "Waiting"), ("Train", "Ready")]
    h.step("il")  # the GM moved on: Train/Starting
    h.report("il", "ds-node", ready)  # the same report again: still the same cycle
    assert h.states("il") == [("Train", "Waiting"), ("Train", "Ready"), ("Train", "Starting")]
    # a new cycle (from the next Train/Waiting) records the same report again
    h.set_conditions("il", *h.conditions("il"), condition("Train", "Failed"), condition("Train", "Waiting"))
    h.report("il", "ds-node", ready)
    assert h.states("il")[-2:] == [("Train", "Waiting"), ("Train", "Ready")]
    assert sum(1 for c in h.conditions("il") if c.get("data") == h.conditions("il")[-1]["data"]) == 2


def test_reports_without_data_are_applied_once_per_cycle(harness):
    h = harness()
    h.set_conditions("il", condition("Train", "Waiting"), condition("Deploy", "Waiting"))
    for _ in range(2):
        h.report("il", "eval-node", {"phase": "deploy", "status": "completed"})
    assert h.states("il") == [("Train", "Waiting"), ("Deploy", "Waiting"), ("Deploy", "Completed")]
    assert h.conditions("il")[-1]["data"] == "{}"


# -- racing GM writes ------------------------------------------------------------------------------------------------
def test_a_report_racing_a_gm_write_is_kept(harness):
    """The GM writes the status between the report handler's read and its write: the report's write conflicts,
    is re-applied to the fresh object, and both the GM's and the report's conditions are there."""
    h = harness()
    gm_write = {"done": False}

    def interleave(action: Any) -> tuple[bool, Any, Any]:
        if action.subresource == "status" and not gm_write["done"]:
            gm_write["done"] = True
            fresh = h.cs.tracker.get(r.INCREMENTAL_LEARNING_JOBS, NS, "il")
            fresh["status"]["conditions"].append(condition("Train", "Starting", reason="by the GM"))
            h.cs.tracker.update(r.INCREMENTAL_LEARNING_JOBS, fresh, NS, subresource="status")
        return False, None, None

    h.cs.prepend_reactor("update", "incrementallearningjobs", interleave)
    h.report("il", "train-node", {"phase": "train", "status": "completed", "output": {"models": []}})
    assert h.states("il") == [("Train", "Waiting"), ("Train", "Starting"), ("Train", "Completed")]


def test_a_gm_sync_from_a_stale_cache_never_overwrites_a_report(harness):
    """Go rewrote the whole status from its cache; here the GM appends only after the condition it acted on."""
    h = harness()
    h.set_conditions("il", condition("Train", "Waiting"), condition("Train", "Ready", TRAIN_READY))
    h.refresh()  # the GM's cache: Train/Ready
    h.edge.report("train-node", NS, "incrementallearningjob", "il", {"phase": "train", "status": "failed"})
    assert h.sync("il") is None  # creates the train pod, but Starting is not appended after the report
    h.refresh()
    assert h.states("il") == [("Train", "Waiting"), ("Train", "Ready"), ("Train", "Failed")]
    h.step("il")  # the next sync starts from the report
    assert h.states("il")[-1] == ("Train", "Waiting")


def test_concurrent_reports_and_status_writes_lose_nothing(harness):
    """A thread reporting while another writes the job's status in a loop (as the GM's syncs do): every report's
    condition is in the final status, whatever conflicts the writes met."""
    h = harness()
    stop = threading.Event()
    failures: list[BaseException] = []
    beats = itertools.count()

    def beat(obj: dict[str, Any]) -> bool:
        obj["status"]["conditions"][0]["lastHeartbeatTime"] = f"2026-01-05T09:{next(beats) % 3600 // 60:02d}:00Z"
        return True

    def gm() -> None:
        while not stop.is_set():
            try:
                h.controller.ctx.update_job_status(h.job("il"), beat)
            except errors.ConflictError:
                pass  # requeued in production
            except BaseException as exc:  # pragma: no cover - reported below
                failures.append(exc)
                return

    runner = threading.Thread(target=gm)
    runner.start()
    try:
        for i in range(20):  # reports a stage waiting for its answer may get (a Go LC's "waiting")
            h.edge.report("train-node", NS, "incrementallearningjob", "il",
                          {"phase": "train", "status": "waiting", "output": {"models": [{"url": f"/m/{i}"}]}})
    finally:
        stop.set()
        runner.join(10)
    assert not failures
    reported = [json.loads(c["data"])["output"]["models"][0]["url"] for c in h.conditions("il")
                if c.get("message") == "reported by lc"]
    assert reported == [f"/m/{i}" for i in range(20)]


# -- answering the current stage -------------------------------------------------------------------------------------
def edge_reports(h: LearningHarness, result: str) -> float:
    return h.controller.metrics.edge_reports.labels(controller=h.controller.name, result=result)._value.get()


ROUND_TO_EVAL_RUNNING = (condition("Train", "Waiting"), condition("Train", "Ready", TRAIN_READY),
                         condition("Train", "Starting"), condition("Train", "Running"),
                         condition("Train", "Completed", {"output": {"models": [{"url": "/output/train/1/m.pb"}]}}),
                         condition("Eval", "Waiting"), condition("Eval", "Ready", EVAL_READY),
                         condition("Eval", "Starting"), condition("Eval", "Running"))


@pytest.mark.parametrize("conditions,content", [
    # a restarted inference worker re-reads the existing model_config.json: "deploy completed" during Eval
    (ROUND_TO_EVAL_RUNNING, {"phase": "deploy", "status": "completed"}),
    # a late train report after the GM moved on to Eval
    (ROUND_TO_EVAL_RUNNING, {"phase": "train", "status": "completed", "output": {"models": [{"url": "/x"}]}}),
    # a stage that has ended takes no more answers
    ((condition("Train", "Waiting"), condition("Deploy", "Waiting"), condition("Deploy", "Completed", {})),
     {"phase": "deploy", "status": "failed", "message": "late"}),
    # Ready answers Waiting only (an LC acting on an old copy of the job)
    (ROUND_TO_EVAL_RUNNING, {"phase": "eval", "status": "ready", **EVAL_READY}),
    ((), {"phase": "train", "status": "ready", **TRAIN_READY}),
])
def test_a_report_that_does_not_answer_the_current_stage_is_not_applied_and_counted(harness, conditions, content):
    import structlog.testing

    h = harness()
    h.set_conditions("il", *conditions)
    before = h.conditions("il")
    node = "train-node" if content.get("output") else "deploy-node"  # a node entitled to the report
    with structlog.testing.capture_logs() as logs:
        h.report("il", node, content)
    assert h.conditions("il") == before
    assert edge_reports(h, "out_of_stage") == 1 and edge_reports(h, "applied") == 0
    [line] = [e for e in logs if e["event"].startswith("report not applied")]
    last = f"{conditions[-1]['stage']}/{conditions[-1]['type']}" if conditions else "/"
    assert (line["log_level"], line["key"], line["node"], line["current"]) == ("warning", "default/il", node, last)


def test_reports_answering_the_current_stage_are_applied(harness):
    h = harness()
    h.set_conditions("il", *ROUND_TO_EVAL_RUNNING)
    h.report("il", "eval-node", {"phase": "eval", "status": "completed", "output": {"models": [{"url": "/m"}]}})
    h.set_conditions("il", *h.conditions("il"), condition("Deploy", "Waiting"), condition("Deploy", "Ready", {}),
                     condition("Deploy", "Starting"))
    h.report("il", "deploy-node", {"phase": "deploy", "status": "completed"})  # the hot update loaded
    h.report("il", "deploy-node", {"phase": "deploy", "status": "completed"})  # resent
    assert [s for s in h.states("il")[-5:]] == [("Eval", "Completed"), ("Deploy", "Waiting"), ("Deploy", "Ready"),
                                                 ("Deploy", "Starting"), ("Deploy", "Completed")]
    assert (edge_reports(h, "applied"), edge_reports(h, "resent"), edge_reports(h, "out_of_stage")) == (2, 1, 0)


TRAIN_COMPLETED = {"phase": "train", "status": "completed", "input": TRAIN_READY["input"],
                   "output": {"models": [{"format": "pb", "url": "/output/train/1/model.pb"}]}}
ENDED_BY_THE_GM = ROUND_TO_EVAL_RUNNING[:4] + (condition("Train", "Completed"),)  # the pod ended, no report in time


@pytest.mark.parametrize("after", [
    (),  # the GM has just completed Train from the pod's end
    (condition("Eval", "Waiting"),),  # and moved on
])
def test_a_train_report_arriving_after_the_gm_ended_the_stage_from_the_pod_keeps_the_trained_model(harness, after):
    """The train LC was cut off when its worker reported (the report waited in its outbox) and the GM completed
    Train from the pod's phase, without the model. The late report must not be dropped: the model is recorded where
    the LCs look for it (the last Train/Completed with an output), and the job's flow does not go back."""
    from localcontroller.managers.learning.conditions import condition_models

    h = harness()
    h.set_conditions("il", *ENDED_BY_THE_GM, *after)
    h.report("il", "train-node", TRAIN_COMPLETED)
    assert h.states("il") == [(c["stage"], c["type"]) for c in (*ENDED_BY_THE_GM, *after)]
    assert [m["url"] for m in condition_models(h.job("il"), "Train", "Completed") or []] == [
        "/output/train/1/model.pb"]
    assert edge_reports(h, "applied") == 1 and edge_reports(h, "out_of_stage") == 0
    recorded = h.conditions("il")
    h.report("il", "train-node", TRAIN_COMPLETED)  # resent after another reconnect: recorded once
    assert h.conditions("il") == recorded and edge_reports(h, "resent") == 1


def test_a_late_report_never_changes_a_stage_end_the_lc_reported_or_another_type(harness):
    h = harness()
    # Train ended by the LC's own report: a different late report of it is not applied
    reported = ROUND_TO_EVAL_RUNNING[:4] + (condition("Train", "Completed", {"output": {"models": [{"url": "/a"}]}}),
                                            condition("Eval", "Waiting"))
    h.set_conditions("il", *reported)
    h.report("il", "train-node", TRAIN_COMPLETED)
    # the pod failed and the GM failed the stage: a "completed" report does not turn it into a success
    failed = ENDED_BY_THE_GM[:-1] + (condition("Train", "Failed"),)
    h.set_conditions("il", *failed)
    h.report("il", "train-node", TRAIN_COMPLETED)
    assert h.conditions("il") == list(failed)
    h.set_conditions("il", *ENDED_BY_THE_GM, condition("Eval", "Waiting"))
    h.report("il", "train-node", {**TRAIN_COMPLETED, "output": None})  # no model to keep: nothing to fill in
    assert h.states("il")[-2:] == [("Train", "Completed"), ("Eval", "Waiting")]
    assert "data" not in h.conditions("il")[-2]
    assert edge_reports(h, "out_of_stage") == 3 and edge_reports(h, "applied") == 0


# -- LL knowledge base -----------------------------------------------------------------------------------------------
LL_OUTPUT = {"models": [
    {"format": "pkl", "url": "s3://kb/index.pkl", "classes": ["car", "person"], "number_of_labeled_unseen_sample": 7,
     "current_metric": {"task-b": {"precision": 0.8125, "recall": 0.5}, "task-a": {"recall": 0.1}}},
    {"format": "pkl", "url": "s3://kb/other.pkl", "number_of_labeled_unseen_sample": 3,
     "current_metric": {"task-c": {}}},
]}


def test_ll_knowledge_base_from_reported_models(harness):
    h = harness(LL_KIND)
    h.report("ll", "train-node", {"phase": "train", "status": "completed", "output": LL_OUTPUT})
    job = h.job("ll")
    assert job["status"]["knowledgeBase"] == {
        "AIModels": {"numberOfAIModels": 3, "listOfAIModels": [
            {"modelID": "task-a", "averagePrecision": 0.1, "numberOfTrainSamples": 7},
            {"modelID": "task-b", "averagePrecision": 0.8125, "numberOfTrainSamples": 7},
            {"modelID": "task-c", "averagePrecision": 0.0, "numberOfTrainSamples": 3}]},
        "AIClasses": {"numberOfAIClasses": 2, "listOfAIClasses": ["car", "person"]},
        "samples": {"numberOfLabeledUnseenSample": 10, "numberOfUnseenSample": 0},
    }
    assert h.states("ll")[-1] == ("Train", "Completed")
    # a report without models leaves the knowledge base as it is
    h.report("ll", "ds-node", {"phase": "deploy", "status": "ready", "input": {"models": [{"url": "s3://kb/x"}]}})
    assert h.job("ll")["status"]["knowledgeBase"] == job["status"]["knowledgeBase"]


def test_ll_knowledge_base_without_classes_or_metrics():
    kb = knowledge_base(parse_report({"phase": "eval", "status": "completed", "output": {"models": [{"url": "u"}]}}))
    assert kb == {"AIModels": {"numberOfAIModels": 0}, "AIClasses": {"numberOfAIClasses": 0},
                  "samples": {"numberOfLabeledUnseenSample": 0, "numberOfUnseenSample": 0}}
    assert knowledge_base(parse_report({"phase": "eval", "status": "completed"})) is None
