"""The lifelong learning manager through a whole sedna-lc and a GM written from the protocol (exact reports, csv
data files with the header, the knowledge base index deployed), and the helpers both learning managers share."""

from __future__ import annotations

import functools
from collections.abc import Iterator

import pytest
from testkit import FakeGM, wait_for
from testkit.learning import Conditions, LCUnderTest, dataset, il_job, ll_job, reported_model

from localcontroller.managers.learning import (
    EVAL_VERSIONS_KEPT,
    RoundState,
    condition_models,
    current_stage,
    dataset_index,
    eval_metrics,
    go_model,
    matching_model,
    upstream_message,
)
from workqueue.clock import FakeClock

KIND = "LifelongLearningJob"
ROWS = [f"{i},{i * 2},label{i % 2}" for i in range(10)]
AT_LEAST_5 = {"condition": {"operator": ">=", "threshold": 5, "metric": "num_of_samples"}}


@pytest.fixture
def lc(tmp_path) -> Iterator[LCUnderTest]:
    gm = FakeGM(features=["ack", "resync"], auto_ack=False)
    under_test = LCUnderTest(tmp_path, gm, clock=FakeClock())
    yield under_test
    under_test.close()
    gm.close()


def csv_dataset(lc: LCUnderTest) -> None:
    lc.path("/data/ds.csv").parent.mkdir(parents=True)
    lc.path("/data/ds.csv").write_text("x,y,label\n" + "".join(f"{row}\n" for row in ROWS))
    lc.send("insert", dataset(url="/data/ds.csv", fmt="csv"))


def test_a_lifelong_round_with_a_csv_dataset(lc):
    csv_dataset(lc)
    conds = Conditions().add("Train", "Waiting")
    job = functools.partial(ll_job, train_prob=0.5, train_trigger=AT_LEAST_5)
    lc.send("insert", job(conditions=conds.list))
    train = {"phase": "Train", "status": "Ready", "output": None,
             "input": {"dataURL": "/output/ll/data/train/1/data.csv", "outputDir": "/output/ll/train/1"}}
    assert lc.wait_reports(KIND, 1) == [train]
    assert lc.path("/output/ll/data/train/1/data.csv").read_text().splitlines() == ["x,y,label", *ROWS[:5]]

    kb = {"format": "pkl", "url": "/output/ll/train/1/index.pkl", "metrics": None, "classes": ["label0", "label1"],
          "number_of_model": 2, "extra": "dropped"}
    conds.add("Train", "Ready", train["input"]).add("Train", "Running").add("Train", "Completed",
                                                                            output={"models": [kb]})
    lc.send("insert", job(conditions=conds.add("Eval", "Waiting").list))
    evaluation = {"phase": "Eval", "status": "Ready", "output": None, "input": {
        "models": [{"format": "pkl", "url": "/output/ll/train/1/index.pkl", "classes": ["label0", "label1"],
                    "number_of_model": 2}],
        "dataURL": "/output/ll/data/eval/1/data.csv", "outputDir": "/output/ll/eval/1"}}
    assert lc.wait_reports(KIND, 2)[1] == evaluation
    assert lc.path("/output/ll/data/eval/1/data.csv").read_text().splitlines() == ["x,y,label", *ROWS[5:]]

    lc.path("/output/ll/eval/1").mkdir(parents=True)
    lc.path("/output/ll/eval/1/index.pkl").write_bytes(b"knowledge base")
    conds.add("Eval", "Ready", evaluation["input"]).add("Eval", "Completed", output={"models": [
        {"format": "pkl", "url": "/output/ll/eval/1/index.pkl", "metrics": {"precision": [0.8]}}]})
    lc.send("insert", job(conditions=conds.add("Deploy", "Waiting").list))
    assert lc.wait_reports(KIND, 3)[2] == {"phase": "Deploy", "status": "Ready", "output": None,
                                           "input": {"models": [reported_model("/output/ll/eval/1/index.pkl", "pkl")]}}
    assert lc.path("/output/ll/deploy/index.pkl").read_bytes() == b"knowledge base"
    lc.ll.sync("default/ll")
    assert len(lc.reports(KIND)) == 3


def test_deploy_without_eval_output_completes_and_a_failed_copy_fails(lc):
    csv_dataset(lc)
    conds = Conditions().add("Train", "Waiting").add("Train", "Completed").add("Eval", "Waiting")
    conds.add("Eval", "Completed").add("Deploy", "Waiting")
    lc.send("insert", ll_job(conditions=conds.list))
    assert lc.wait_reports(KIND, 1) == [{"phase": "Deploy", "status": "Completed", "output": None}]
    conds.add("Deploy", "Completed").add("Train", "Waiting").add("Train", "Completed").add("Eval", "Waiting")
    conds.add("Eval", "Completed", output={"models": [{"format": "pkl", "url": "/output/ll/eval/2/index.pkl"}]})
    lc.send("insert", ll_job(conditions=conds.add("Deploy", "Waiting").list))
    failed = lc.wait_reports(KIND, 2)[1]
    assert (failed["phase"], failed["status"], failed["input"]) == (
        "Deploy", "Failed", {"models": [reported_model("/output/ll/eval/2/index.pkl", "pkl")]})
    assert "/output/ll/eval/2/index.pkl" in failed["message"]


def test_deploy_is_the_dataset_nodes_a_copy_elsewhere_does_nothing(lc):
    """A GM restart sends the resident deploy node the job's current copy: without the Dataset (only its node gets
    it) that node neither deploys nor reports; the Dataset's node does."""
    conds = Conditions().add("Train", "Waiting").add("Train", "Completed").add("Eval", "Waiting")
    conds.add("Eval", "Completed").add("Deploy", "Waiting")
    lc.send("insert", ll_job(conditions=conds.list))
    wait_for("the job", lambda: lc.ll.record("default", "ll"))
    for _ in range(3):
        lc.ll.sync("default/ll")
    assert lc.reports(KIND) == []
    csv_dataset(lc)
    assert lc.wait_reports(KIND, 1) == [{"phase": "Deploy", "status": "Completed", "output": None}]


def test_eval_without_trained_models_fails_the_eval_stage(lc):
    csv_dataset(lc)
    conds = Conditions().add("Train", "Waiting").add("Train", "Completed").add("Eval", "Waiting")
    lc.send("insert", ll_job(conditions=conds.list))
    assert lc.wait_reports(KIND, 1) == [upstream_message(
        "Eval", "Failed", None, "the last Train/Completed condition has no output models to evaluate")]


def test_a_recreated_job_starts_afresh(lc):
    csv_dataset(lc)
    lc.send("insert", il_job(conditions=[]))
    record = wait_for("the job", lambda: lc.il.record("default", "il"))
    wait_for("samples split", lambda: lc.il.record("default", "il").state.previous_numbers == 10)
    lc.send("insert", il_job(conditions=[], uid="uid-il-2"))
    wait_for("the new job", lambda: lc.il.record("default", "il"), check=lambda r: r is not record)
    assert record.deleted and lc.il.record("default", "il").uid == "uid-il-2"


# -- the shared helpers -------------------------------------------------------------------------------------------
def test_samples_split_by_train_prob_without_duplicates_and_at_most_five_eval_versions():
    state = RoundState()
    samples: list[str] = []
    for batch in range(7):
        samples += [f"s{batch}-{i}" for i in range(10)]
        assert state.absorb(samples, 0.7) == (7, 3)
        assert state.absorb(samples, 0.7) == (0, 0)  # nothing new: nothing added
    assert state.previous_numbers == 70 and len(state.train_samples) == 49
    assert state.train_samples[:8] == [f"s0-{i}" for i in range(7)] + ["s1-0"]
    assert len(state.eval_versions) == EVAL_VERSIONS_KEPT
    assert state.eval_samples() == [f"s{b}-{i}" for b in range(2, 7) for i in range(7, 10)]
    assert RoundState.from_dict(state.to_dict(), "") == state
    assert RoundState.from_dict(state.to_dict(), "another-uid") == RoundState(uid="another-uid")


def test_int_truncates_the_train_share_like_go():
    state = RoundState()
    assert state.absorb(["a", "b", "c"], 0.5) == (1, 2)
    assert state.absorb(["a", "b", "c", "d"], 1.0) == (1, 0)


def test_the_data_index_keeps_the_prefix_and_tokens_with_an_extension():
    assert dataset_index(["a/1.jpg 0", "b/2.png c/3.txt", "noext 1", "x  .hidden"], "s3://b/d/") == [
        "s3://b/d/", "a/1.jpg", "b/2.png", "c/3.txt", ".hidden"]


def test_models_render_as_go_marshals_them_and_match_like_go():
    assert go_model({"format": "pb", "url": "/m.pb", "metrics": None, "foo": 1, "device_soc_versions": []}) == {
        "format": "pb", "url": "/m.pb", "classes": None}
    assert go_model({"url": "/m", "metrics": {"a": [1]}, "history_metric": 0.5, "classes": ["x"]}) == {
        "format": "", "url": "/m", "metrics": {"a": [1]}, "history_metric": 0.5, "classes": ["x"]}
    models = [{"format": "ckpt", "url": "/a"}, {"format": "pb", "url": "/b", "device_soc_versions": ["x"]},
              {"format": "pb", "url": "/c", "device_soc_versions": ["y"]}]
    assert matching_model({"format": "pb"}, models)["url"] == "/b"
    assert matching_model({"format": "pb", "device_soc_versions": ["y", "z"]}, models)["url"] == "/c"
    assert matching_model({"format": "onnx"}, models) is None


def test_conditions_give_the_current_stage_instance_and_the_latest_models():
    conds = Conditions().add("Train", "Completed", output={"models": [{"url": "/old"}]}).add("Train", "Completed")
    conds.add("Train", "Completed", output={"models": [{"url": "/new"}, "junk"]}).add("Eval", "Waiting")
    job = ll_job(conditions=conds.list)
    current = current_stage(job)
    assert (current.stage, current.type, current.instance) == ("Eval", "Waiting", "3/2026-01-05T09:00:03Z")
    assert condition_models(job, "Train", "Completed") == [{"url": "/new"}]
    assert condition_models(job, "Eval", "Completed") is None
    assert current_stage(ll_job()) is None
    assert eval_metrics([{"metrics": {"p": [1, 0.5]}}, {}]) == [{"p": [1.0, 0.5]}, {}]
    with pytest.raises(ValueError, match="metric 'p' is not a list of numbers"):
        eval_metrics([{"url": "/m", "metrics": {"p": "high"}}])
