"""The incremental learning manager driven through a whole sedna-lc by a GM written from the protocol
(``testkit.FakeGM``, which never acks, so the outbox holds every report the LC ever made): Go-shaped job, Dataset and
Model objects with the conditions the GM appends, every upstream message checked as exact JSON, the files written,
the trigger's check period on a fake clock."""

from __future__ import annotations

import functools
import json
import os
import urllib.request
from collections.abc import Iterator

import pytest
from testkit import FakeGM, wait_for
from testkit.learning import Conditions, LCUnderTest, dataset, deploy_stage, il_job, model
from testkit.learning import grow_dataset as grow
from testkit.learning import reported_model as m
from testkit.learning import sample_lines as lines
from testkit.learning import send_il_objects as setup_objects

from workqueue.clock import FakeClock

KIND = "IncrementalLearningJob"
KEY = "default/il"
DEPLOY_TRIGGER = {"condition": {"operator": "gt", "threshold": 0.1, "metric": "precision_delta[0]"}}
job = functools.partial(il_job, deploy_trigger=DEPLOY_TRIGGER)


@pytest.fixture
def gm() -> Iterator[FakeGM]:
    server = FakeGM(features=["ack", "resync"], auto_ack=False)
    yield server
    server.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def lc(tmp_path, gm, clock) -> Iterator[LCUnderTest]:
    under_test = LCUnderTest(tmp_path, gm, clock=clock)
    yield under_test
    if under_test.thread.is_alive():
        under_test.close()


def settled(lc: LCUnderTest) -> int:
    """Run a step of the job now and return how many job reports exist (a step that reports nothing leaves it)."""
    lc.il.sync(KEY)
    return len(lc.reports(KIND))


def post_worker(lc: LCUnderTest, body: dict) -> dict:
    request = urllib.request.Request(f"{lc.url}/sedna/workers/{body['name']}/info", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def test_two_rounds_train_eval_deploy_with_exact_reports_and_files(lc, gm):
    setup_objects(lc)
    conds = Conditions().add("Train", "Waiting")
    lc.send("insert", job(conditions=conds.list))

    train1 = {"phase": "Train", "status": "Ready",
              "input": {"models": [m("/models/initial.pb")], "dataURL": "/output/il/data/train/1/data.txt",
                        "outputDir": "/output/il/train/1"},
              "output": None}
    assert lc.wait_reports(KIND, 1) == [train1]
    _, header, content = gm.next_frame(lambda h, c: h["resourceKind"] == KIND)
    assert {k: v for k, v in header.items() if k != "id"} == {
        "namespace": "default", "resourceKind": KIND, "resourceName": "il", "operation": "status"}
    assert content == train1
    assert lc.path("/output/il/data/train/1/data.txt").read_text().splitlines() == lines(0, 8)
    assert not lc.path("/output/il/data/train/1/dataIndex.txt").exists()  # the Dataset is local
    assert all(lc.path(f"/output/il/{d}").is_dir() for d in ("data/train", "data/eval", "train", "eval"))
    lc.send("insert", job(conditions=conds.list))  # the GM resends the same object: nothing new
    assert settled(lc) == 1

    trained1 = {"format": "pb", "url": "/output/il/train/1/model.pb", "metrics": None}
    conds.add("Train", "Ready", train1["input"]).add("Train", "Starting").add("Train", "Running")
    conds.add("Train", "Completed", output={"models": [trained1, {"format": "ckpt", "url": "/output/il/train/1"}]})
    conds.add("Eval", "Waiting")
    lc.send("insert", job(conditions=conds.list))
    eval1 = {"phase": "Eval", "status": "Ready",
             "input": {"models": [m("/output/il/train/1/model.pb"), m("/models/deploy.pb")],
                       "dataURL": "/output/il/data/eval/1/data.txt"},
             "output": None}
    assert lc.wait_reports(KIND, 2)[1] == eval1
    assert lc.path("/output/il/data/eval/1/data.txt").read_text().splitlines() == lines(8, 10)

    results = [{"format": "pb", "url": "/output/il/train/1/model.pb", "metrics": {"precision": [0.9]}},
               {"format": "pb", "url": "/models/deploy.pb", "metrics": {"precision": [0.7]}}]
    worker = {"name": "eval-worker-abcde", "namespace": "default", "ownerName": "il",
              "ownerKind": "incrementallearningjob", "kind": "eval", "status": "completed", "results": results}
    assert post_worker(lc, worker) == {"Status": 200, "Message": "OK"}
    relayed = {"phase": "eval", "status": "completed", "output": {"models": results, "ownerInfo": None}}
    assert lc.wait_reports(KIND, 3)[2] == relayed

    lc.path("/output/il/train/1").mkdir()
    lc.path("/output/il/train/1/model.pb").write_bytes(b"trained in round 1")
    conds.add("Eval", "Ready", eval1["input"]).add("Eval", "Starting").add("Eval", "Running")
    conds.add("Eval", "Completed", output={"models": results}).add("Deploy", "Waiting")
    lc.send("insert", job(conditions=conds.list))
    deploy1 = {"phase": "Deploy", "status": "Ready",
               "input": {"models": [m("/output/il/train/1/model.pb"), m("/models/deploy.pb")]}, "output": None}
    assert lc.wait_reports(KIND, 4)[3] == deploy1
    assert lc.path("/models/deploy.pb").read_bytes() == b"trained in round 1"
    assert settled(lc) == 4

    conds.add("Deploy", "Ready", deploy1["input"]).add("Deploy", "Completed").add("Train", "Waiting")
    grow(lc, 10, 20)
    assert lc.count_dataset() == 20
    lc.send("insert", job(conditions=conds.list))
    train2 = {"phase": "Train", "status": "Ready",
              "input": {"models": [m("/output/il/train/1/model.pb")], "dataURL": "/output/il/data/train/2/data.txt",
                        "outputDir": "/output/il/train/2"},
              "output": None}
    assert lc.wait_reports(KIND, 5)[4] == train2
    assert lc.path("/output/il/data/train/2/data.txt").read_text().splitlines() == lines(10, 18)

    conds.add("Train", "Ready", train2["input"]).add("Train", "Running")
    conds.add("Train", "Completed", output={"models": [{"format": "pb", "url": "/output/il/train/2/model.pb"}]})
    conds.add("Eval", "Waiting")
    lc.send("insert", job(conditions=conds.list))
    eval2 = lc.wait_reports(KIND, 6)[5]
    assert eval2["input"]["models"] == [m("/output/il/train/2/model.pb"), m("/models/deploy.pb")]
    # the kept eval versions, each sample once (Go repeated every older version on each new batch)
    assert lc.path("/output/il/data/eval/2/data.txt").read_text().splitlines() == lines(8, 10) + lines(18, 20)
    assert settled(lc) == 6
    rec = lc.il.record("default", "il")
    assert rec is not None and rec.state.round == 2
    # the LC read past the 10 samples it had split already: it holds only the Dataset's new ones, never all of them
    assert rec.dataset is not None and (rec.dataset.skipped, rec.dataset.samples) == (10, lines(10, 20))


def test_no_deploy_when_the_metric_delta_does_not_fire(lc):
    setup_objects(lc)
    lc.send("insert", job(conditions=deploy_stage(Conditions(), new=0.75, old=0.7).list))
    assert lc.wait_reports(KIND, 1) == [{"phase": "Deploy", "status": "Completed", "output": None}]
    assert not lc.path("/models/deploy.pb").exists()


def test_a_failed_model_copy_is_reported_as_deploy_failed_with_the_reason(lc):
    setup_objects(lc)  # the trained model file was never written
    lc.send("insert", job(conditions=deploy_stage(Conditions(), new=0.9, old=0.7).list))
    report = lc.wait_reports(KIND, 1)[0]
    assert {k: v for k, v in report.items() if k != "message"} == {
        "phase": "Deploy", "status": "Failed",
        "input": {"models": [m("/output/il/train/1/model.pb"), m("/models/deploy.pb")]}, "output": None}
    assert "/output/il/train/1/model.pb" in report["message"] and "does not exist" in report["message"]
    assert settled(lc) == 1


def test_deploy_also_refreshes_the_initial_eval_model(lc):
    setup_objects(lc)
    lc.send("insert", model("evalmodel", "/models/eval.pb"))
    lc.path("/output/il/train/1/model.pb").parent.mkdir(parents=True)
    lc.path("/output/il/train/1/model.pb").write_bytes(b"new")
    lc.send("insert", job(conditions=deploy_stage(Conditions(), new=0.9, old=0.7).list,
                          initial_eval_model="evalmodel"))
    assert lc.wait_reports(KIND, 1)[0]["status"] == "Ready"
    assert lc.path("/models/deploy.pb").read_bytes() == lc.path("/models/eval.pb").read_bytes() == b"new"


HOT_CONFIG = "/var/lib/sedna/model-hot-update/default/incrementallearningjob/il/model_config.json"


def test_hot_update_writes_the_model_and_its_config_once_and_delete_removes_them(lc, tmp_path, gm, clock):
    setup_objects(lc)
    trained = lc.path("/output/il/train/1/model.pb")
    trained.parent.mkdir(parents=True)
    trained.write_bytes(b"hot")
    hot_job = functools.partial(job, hot_update=True, annotations={"sedna.io/model-hot-update-config": HOT_CONFIG})
    conds = deploy_stage(Conditions(), new=0.9, old=0.7)
    lc.send("insert", hot_job(conditions=conds.list))
    ready = {"phase": "Deploy", "status": "Ready",
             "input": {"models": [m("/output/il/train/1/model.pb"), m("/models/deploy.pb")]}, "output": None}
    assert lc.wait_reports(KIND, 1) == [ready]
    assert not lc.path("/models/deploy.pb").exists()  # with hot update the copy waits for Deploy/Running

    conds.add("Deploy", "Ready", ready["input"]).add("Deploy", "Starting").add("Deploy", "Running")
    lc.send("insert", hot_job(conditions=conds.list))
    config_path = lc.path(HOT_CONFIG)
    config = json.loads(wait_for("model_config.json", lambda: config_path.exists() and config_path.read_text()))
    assert config == {"model_config": {"model_path": "/model-hot-update/model.pb",
                                       "model_update_time": "2026-01-05 09:00:00.000000 " +
                                       config["model_config"]["model_update_time"].split(" ", 2)[2]}}
    assert config_path.read_text().startswith('{\n "model_config": {\n  "model_path"')  # Go's MarshalIndent
    assert lc.path(HOT_CONFIG).with_name("model.pb").read_bytes() == b"hot"
    assert lc.path("/models/deploy.pb").read_bytes() == b"hot"
    written = config_path.read_text()
    assert settled(lc) == 1  # hot update reports nothing itself

    assert lc.close() == 0  # a restart neither writes a new version nor reports
    again = LCUnderTest(tmp_path, gm, clock=clock)
    try:
        wait_for("the job resumed", lambda: again.il.record("default", "il"))
        again.il.sync(KEY)
        assert config_path.read_text() == written and len(again.reports(KIND)) == 1
        again.send("delete", hot_job(conditions=conds.list))  # only taken off this node: the directory stays
        wait_for("the job dropped", lambda: again.il.record("default", "il") is None)
        assert again.store.get_state("incrementallearningjob/default/il/round") is None
        assert config_path.read_text() == written
        deleted = hot_job(conditions=conds.list)
        deleted["metadata"]["deletionTimestamp"] = "2026-01-05T10:00:00Z"
        again.send("delete", deleted)  # deleted for good (the GM says so): removed, though this node no longer held it
        wait_for("the hot-update directory removed", lambda: not config_path.parent.exists())
    finally:
        again.close()


def test_the_train_trigger_is_evaluated_every_check_period_on_the_clock(lc, clock):
    trigger = {"checkPeriodSeconds": 300, "condition": {"operator": ">", "threshold": 10, "metric": "num_of_samples"}}
    setup_objects(lc)
    lc.send("insert", job(conditions=Conditions().add("Train", "Waiting").list, train_prob=1.0,
                          train_trigger=trigger))
    record = wait_for("the first evaluation", lambda: lc.il.record("default", "il"),
                      check=lambda r: r is not None and r.train_checked is not None)
    assert record.state.train_samples == lines(0, 10) and settled(lc) == 0  # 10 > 10 does not fire
    grow(lc, 10, 15)
    lc.count_dataset()
    wait_for("the new samples", lambda: len(record.state.train_samples) == 15)
    assert settled(lc) == 0  # would fire, but the period has not passed
    clock.step(299)
    assert settled(lc) == 0
    clock.step(1)
    assert lc.wait_reports(KIND, 1)[0]["input"]["dataURL"] == "/output/il/data/train/1/data.txt"
    assert lc.path("/output/il/data/train/1/data.txt").read_text().splitlines() == lines(0, 15)


def test_a_timer_window_fires_only_inside_it(lc, clock):
    trigger = {"checkPeriodSeconds": 600, "timer": {"start": "10:00", "end": "10:30"},
               "condition": {"operator": ">=", "threshold": 1, "metric": "num_of_samples"}}
    setup_objects(lc)
    lc.send("insert", job(conditions=Conditions().add("Train", "Waiting").list, train_trigger=trigger))
    wait_for("the first evaluation", lambda: lc.il.record("default", "il"),
             check=lambda r: r is not None and r.train_checked is not None)
    for _ in range(6):  # 09:00 … 09:50: outside the window
        assert settled(lc) == 0
        clock.step(600)
    assert lc.wait_reports(KIND, 1)[0]["phase"] == "Train"  # 10:00


def test_a_missing_dataset_file_waits_and_proceeds_once_it_exists(lc):
    import structlog.testing

    lc.send("insert", dataset())
    lc.send("insert", model("initial", "/models/initial.pb"))
    with structlog.testing.capture_logs() as logs:
        lc.send("insert", job(conditions=Conditions().add("Train", "Waiting").list))
        wait_for("the job", lambda: lc.il.record("default", "il"))
        for _ in range(3):
            assert settled(lc) == 0
    waiting = [e for e in logs if e["event"] == "waiting" and e.get("object") == KEY]
    assert len(waiting) == 1 and "Dataset default/ds has not been counted" in waiting[0]["reason"]
    grow(lc, 0, 10)
    assert lc.count_dataset() == 10
    assert lc.wait_reports(KIND, 1)[0]["status"] == "Ready"


def test_a_bad_train_trigger_is_reported_once_and_nothing_crashes(lc):
    import structlog.testing

    setup_objects(lc)
    bad = {"condition": {"operator": ">", "threshold": 5, "metric": "num_of_samples[x"}}
    conds = Conditions().add("Train", "Waiting")
    with structlog.testing.capture_logs() as logs:
        lc.send("insert", job(conditions=conds.list, train_trigger=bad))
        report = lc.wait_reports(KIND, 1)[0]
        conds.add("Train", "Failed", {}).add("Train", "Waiting")  # the GM: Failed → Train/Waiting
        lc.send("insert", job(conditions=conds.list, train_trigger=bad))
        wait_for("the new condition", lambda: lc.il.record("default", "il").obj["status"]["conditions"],
                 check=lambda c: len(c) == 3)
        assert settled(lc) == 1  # not again for the same problem: that would loop with the GM
    assert report == {"phase": "Train", "status": "Failed", "output": None,
                      "message": "spec.trainSpec.trigger: trigger condition.metric: 'num_of_samples[x' is neither a "
                                 "name nor name[index]"}
    assert [e["log_level"] for e in logs if e["event"] == "stage failed; reported"] == ["error"]
    lc.send("insert", job(conditions=conds.list))  # fixed spec
    assert lc.wait_reports(KIND, 2)[1]["status"] == "Ready"


def test_a_bad_deploy_trigger_fails_the_deploy_stage_with_the_reason(lc):
    setup_objects(lc)
    bad = {"condition": {"operator": "approximately", "threshold": 0.1, "metric": "precision_delta[0]"}}
    lc.send("insert", il_job(conditions=deploy_stage(Conditions(), new=0.9, old=0.7).list, deploy_trigger=bad))
    report = lc.wait_reports(KIND, 1)[0]
    assert (report["phase"], report["status"], report["output"]) == ("Deploy", "Failed", None)
    assert report["message"].startswith("spec.deploySpec.trigger: trigger condition.operator: unsupported operator "
                                        "'approximately'")


def test_a_worker_report_for_a_job_this_node_does_not_hold_is_dropped(lc):
    setup_objects(lc)
    body = {"name": "w", "namespace": "default", "ownerName": "other", "ownerKind": "incrementallearningjob",
            "kind": "train", "status": "completed"}
    assert post_worker(lc, body) == {"Status": 200, "Message": "OK"}
    lc.send("insert", job(conditions=[]))
    wait_for("the job", lambda: lc.il.record("default", "il"))
    assert post_worker(lc, {**body, "ownerName": "il", "ownerInfo": {"x": 1}}) == {"Status": 200, "Message": "OK"}
    assert lc.wait_reports(KIND, 1) == [{"phase": "train", "status": "completed",
                                         "output": {"models": None, "ownerInfo": {"x": 1}}}]


def test_an_unexpected_error_in_a_step_is_logged_without_locals_and_retried(lc, clock, monkeypatch):
    import structlog.testing

    setup_objects(lc)
    real = type(lc.il).evaluate
    calls = []

    def flaky(self, rec, current):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("disk on fire")
        return real(self, rec, current)

    monkeypatch.setattr(type(lc.il), "evaluate", flaky)
    conds = Conditions().add("Train", "Waiting").add("Train", "Completed", output={"models": [
        {"format": "pb", "url": "/output/il/train/1/model.pb"}]}).add("Eval", "Waiting")
    with structlog.testing.capture_logs() as logs:
        credential = '{"s3-endpoint": "127.0.0.1:1", "ACCESS_KEY_ID": "a", "SECRET_ACCESS_KEY": "topsecret"}'
        lc.send("insert", job(conditions=conds.list, annotations={"sedna.io/credential": credential}))
        failed = wait_for("the failure logged", lambda: [e for e in logs if e["event"] == "a job step failed; trying "
                                                                                          "again"])
    assert failed[0]["error"] == "RuntimeError: disk on fire" and "exc_info" not in failed[0]
    assert "disk on fire" in failed[0]["traceback"] and "topsecret" not in str(failed[0])
    wait_for("the retry scheduled", lambda: clock.has_waiters() or len(calls) > 1)
    clock.step(10)
    assert lc.wait_reports(KIND, 1)[0]["phase"] == "Eval"


def test_after_a_failed_first_round_the_next_round_trains_from_the_initial_model(lc):
    setup_objects(lc, samples=20)
    conds = Conditions().add("Train", "Waiting")
    lc.send("insert", job(conditions=conds.list))
    lc.wait_reports(KIND, 1)
    conds.add("Train", "Ready").add("Train", "Failed").add("Train", "Waiting")  # no Train/Completed output yet
    grow(lc, 20, 30)
    lc.count_dataset()
    lc.send("insert", job(conditions=conds.list))
    second = lc.wait_reports(KIND, 2)[1]
    assert second["input"]["models"] == [m("/models/initial.pb")] and second["input"]["outputDir"].endswith("/2")


def test_a_bad_output_dir_is_reported_as_the_reason(lc):
    setup_objects(lc)
    lc.send("insert", job(conditions=Conditions().add("Train", "Waiting").list, output_dir="http://x/out"))
    assert lc.wait_reports(KIND, 1) == [{"phase": "Train", "status": "Failed", "output": None, "message":
                                         "spec.outputDir: unsupported scheme 'http' (want a host path or "
                                         "s3://bucket/key)"}]


def test_a_state_that_holds_across_trigger_checks_is_logged_once(lc, clock):
    """Round 2 has no trained model of round 1 to start from: said once, not on each of the trigger's checks."""
    import structlog.testing

    setup_objects(lc, samples=20)
    conds = Conditions().add("Train", "Waiting")
    lc.send("insert", job(conditions=conds.list))
    lc.wait_reports(KIND, 1)  # round 1 started, then failed without a trained model
    conds.add("Train", "Ready").add("Train", "Failed").add("Train", "Waiting")
    never = {"checkPeriodSeconds": 5, "condition": {"operator": ">", "threshold": 1000, "metric": "num_of_samples"}}
    with structlog.testing.capture_logs() as logs:
        lc.send("insert", job(conditions=conds.list, train_trigger=never))
        wait_for("the first check", lambda: lc.il.record("default", "il").train_checked,
                 check=lambda checked: checked is not None and checked[0].startswith("3/"))
        for _ in range(4):
            clock.step(5)
            assert settled(lc) == 1
    fallback = [e for e in logs if e["event"].startswith("no trained model of an earlier round")]
    assert [(e["log_level"], e["round"], e["object"]) for e in fallback] == [("warning", 2, KEY)]
    assert len([e for e in logs if e["event"] == "train trigger did not fire"]) == 1


def test_the_hot_update_reaches_the_directory_the_inference_pod_mounted(lc):
    """The inference pod started on this node before round 1 (its hostPath mount holds the hot-update directory as
    it was then); train and eval ran here too, and the GM took the job off this node after each. The
    model_config.json written at Deploy/Running is seen through what the pod mounted."""
    setup_objects(lc)
    trained = lc.path("/output/il/train/1/model.pb")
    trained.parent.mkdir(parents=True)
    trained.write_bytes(b"hot")
    mounted = lc.path(HOT_CONFIG).parent
    mounted.mkdir(parents=True)  # the kubelet: hostPath DirectoryOrCreate, when the pod starts
    pod_view = os.open(mounted, os.O_RDONLY | os.O_DIRECTORY)
    try:
        annotations = {"sedna.io/model-hot-update-config": HOT_CONFIG, "sedna.io/Train": "edge-1",
                       "sedna.io/Eval": "edge-1", "sedna.io/Deploy": "edge-1"}
        hot_job = functools.partial(job, hot_update=True, annotations=annotations)
        conds = Conditions().add("Train", "Waiting").add("Train", "Ready").add("Train", "Running")
        lc.send("insert", hot_job(conditions=conds.list))
        conds.add("Train", "Completed", output={"models": [{"format": "pb", "url": "/output/il/train/1/model.pb"}]})
        lc.send("delete", hot_job(conditions=conds.list))  # Train/Completed: not a resident node (Go's GM, round 1)
        wait_for("the job dropped", lambda: lc.il.record("default", "il") is None)
        conds = deploy_stage(Conditions(), new=0.9, old=0.7)
        conds.add("Deploy", "Ready", {}).add("Deploy", "Starting").add("Deploy", "Running")
        lc.send("insert", hot_job(conditions=conds.list))
        wait_for("model_config.json", lambda: lc.path(HOT_CONFIG).exists())

        def through_the_mount(name: str) -> bytes:
            fd = os.open(name, os.O_RDONLY, dir_fd=pod_view)
            try:
                return os.read(fd, 1 << 16)
            finally:
                os.close(fd)

        config = json.loads(through_the_mount("model_config.json"))
        assert config["model_config"]["model_path"] == "/model-hot-update/model.pb"
        assert through_the_mount("model.pb") == b"hot"
    finally:
        os.close(pod_view)


@pytest.mark.parametrize("extra,annotation", [
    ((), "sedna.io/Eval"),  # Deploy/Waiting: the eval node decides
    (("Ready", "Starting", "Running"), "sedna.io/Deploy"),  # Deploy/Running: the deploy node hot-updates
])
def test_a_copy_at_a_deploy_stage_named_for_another_node_is_left_alone(lc, extra, annotation):
    """A GM restart sends each resident node (this Dataset's node too) the job's current copy: the Deploy stage is the
    named node's; here it would fail (the trained model is on that node) and report Deploy/Failed."""
    import structlog.testing

    setup_objects(lc)
    conds = deploy_stage(Conditions(), new=0.9, old=0.7)
    for ctype in extra:
        conds.add("Deploy", ctype, {} if ctype == "Ready" else None)
    annotations = {"sedna.io/model-hot-update-config": HOT_CONFIG, "sedna.io/Eval": "edge-2",
                   "sedna.io/Deploy": "edge-2"}
    with structlog.testing.capture_logs() as logs:
        lc.send("insert", job(conditions=conds.list, hot_update=True, annotations=annotations))
        wait_for("the job", lambda: lc.il.record("default", "il"))
        for _ in range(3):
            assert settled(lc) == 0
    assert not lc.path(HOT_CONFIG).parent.exists() and not lc.path("/models/deploy.pb").exists()
    left = [e for e in logs if e["event"] == "the Deploy stage is another node's: leaving it"]
    assert [(e["node"], e["annotation"]) for e in left] == [("edge-2", annotation)]
    # named for this node, the same copy is acted on
    lc.path("/output/il/train/1").mkdir(parents=True)
    lc.path("/output/il/train/1/model.pb").write_bytes(b"trained")
    lc.send("insert", job(conditions=conds.list, hot_update=True, annotations={**annotations, annotation: "edge-1"}))
    if extra:
        wait_for("model_config.json", lambda: lc.path(HOT_CONFIG).exists())
    else:
        assert lc.wait_reports(KIND, 1)[0]["status"] == "Ready"


def test_a_deploy_trigger_on_a_metric_the_eval_did_not_report_says_why_it_does_not_deploy(lc):
    setup_objects(lc)
    trigger = {"condition": {"operator": ">", "threshold": 0.1, "metric": "no_such_metric_delta[0]"}}
    lc.send("insert", il_job(conditions=deploy_stage(Conditions(), new=0.9, old=0.7).list, deploy_trigger=trigger))
    assert lc.wait_reports(KIND, 1) == [{
        "phase": "Deploy", "status": "Completed", "output": None,
        "message": "spec.deploySpec.trigger: metric 'no_such_metric_delta[0]' is not among the evaluated metrics "
                   "(precision, precision_delta, recall, recall_delta); not deploying"}]


def test_eval_waits_for_a_train_report_that_comes_after_the_gms_own_train_completed(lc, clock):
    """Go's GM completes Train from the train pod's phase (a condition with no model) and appends the train worker's
    report, with the model, when it arrives: later, after Eval/Waiting. The dataset node waits for that copy (as Go's
    LC does) instead of failing Eval; past ``TRAINED_MODEL_WAIT_SECONDS`` it fails the stage saying why."""
    import structlog.testing

    setup_objects(lc)
    # counted first: a job synced before its Dataset is counted waits for that instead (another "waiting" line)
    wait_for("the Dataset counted", lambda: lc.lc.ctx.managers["dataset"].count("default", "ds") is not None)
    train_input = {"models": [m("/models/initial.pb")], "dataURL": "/output/il/data/train/1/data.txt",
                   "outputDir": "/output/il/train/1"}
    conds = Conditions().add("Train", "Waiting").add("Train", "Ready", train_input).add("Train", "Running")
    conds.add("Train", "Completed").add("Eval", "Waiting")  # Go's GM: from the pod's phase, no data
    with structlog.testing.capture_logs() as logs:
        lc.send("insert", job(conditions=conds.list))
        wait_for("the job", lambda: lc.il.record("default", "il"))
        for _ in range(3):
            assert settled(lc) == 0
    waiting = [e for e in logs if e["event"] == "waiting" and e.get("object") == KEY]
    assert len(waiting) == 1 and "waiting for the train worker's report" in waiting[0]["reason"]

    trained = {"format": "pb", "url": "/output/il/train/1/model.pb"}
    conds.add("Train", "Completed", output={"models": [trained]}).add("Eval", "Waiting")
    lc.send("insert", job(conditions=conds.list))
    report = lc.wait_reports(KIND, 1)[0]
    assert (report["phase"], report["status"]) == ("Eval", "Ready")
    assert report["input"]["models"] == [m("/output/il/train/1/model.pb"), m("/models/deploy.pb")]


def test_eval_without_a_trained_model_fails_once_the_wait_is_over(lc, clock):
    setup_objects(lc)
    conds = Conditions().add("Train", "Waiting").add("Train", "Completed").add("Eval", "Waiting")
    lc.send("insert", job(conditions=conds.list))
    wait_for("the job", lambda: lc.il.record("default", "il"))
    assert settled(lc) == 0
    clock.step(lc.il.TRAINED_MODEL_WAIT_SECONDS)
    report = lc.wait_reports(KIND, 1)[0]
    assert (report["phase"], report["status"]) == ("Eval", "Failed")
    assert report["message"] == ("no output model of the last Train/Completed condition has the eval model's format "
                                 f"'pb' after waiting {int(lc.il.TRAINED_MODEL_WAIT_SECONDS)} s for the train "
                                 "worker's report")
