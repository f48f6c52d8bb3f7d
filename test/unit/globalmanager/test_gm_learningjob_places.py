"""Issue 38, the GM's half: a Train/Eval pod is built from the LC's Ready input only when every path in it lies
inside the job's places (``spec.outputDir`` and its Models' directories, judged lexically); otherwise the stage is
Failed (``PathOutsideJob``, a Warning Event naming the path and the rule) and no pod is created. The paths our LC and
Go's LC report pass."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from learningjob_test_helpers import (
    EVAL_READY,
    IL_KIND,
    IL_REFS,
    LL_EVAL_READY,
    LL_KIND,
    LL_REFS,
    LL_TRAIN_READY,
    TRAIN_READY,
    condition,
    il_job,
    ll_job,
)
from sedna_test_helpers import dataset, model

from globalmanager.controllers.learningjob.places import RULE

WORKER = {"Train": "train", "Eval": "eval"}
S3_IL_REFS = (model("initial-model", "s3://models/il/initial.pb"), model("deploy-model", "s3://models/il/deploy.pb"),
              dataset("ds", "s3://data/train.txt", "ds-node"))
S3_IL_READY = {"input": {"models": [{"url": "s3://models/il/initial.pb"}],
                         "dataURL": "s3://out/il/data/train/1/data.txt", "outputDir": "s3://out/il/train/1"}}
S3_IL_TRAIN = (IL_KIND, il_job(output="s3://out/il"), S3_IL_REFS, "Train", S3_IL_READY)


@pytest.fixture
def harness(make_learning_harness):
    return make_learning_harness


def with_input(data: dict[str, Any], field: str, url: str) -> dict[str, Any]:
    """``data`` with ``input.<field>`` (``models[i]``: that model's URL) set to ``url``."""
    changed = copy.deepcopy(data)
    inp = changed["input"]
    if field.startswith("models["):
        inp["models"][int(field[7:-1])]["url"] = url
    else:
        inp[field] = url
    return changed


def ready(h: Any, name: str, stage: str, data: dict[str, Any]) -> None:
    h.set_conditions(name, condition("Train", "Waiting"), *(
        [condition("Train", "Completed", {"output": {}}), condition("Eval", "Waiting")] if stage == "Eval" else []),
        condition(stage, "Ready", data))


REFUSED = [
    # kind, job, refs, stage, the LC's input, field, path, what the message says of it
    (IL_KIND, il_job(), IL_REFS, "Train", TRAIN_READY, "outputDir", "/", "outside the job's places"),
    (IL_KIND, il_job(), IL_REFS, "Train", TRAIN_READY, "dataURL", "/etc/shadow", "outside the job's places"),
    (IL_KIND, il_job(), IL_REFS, "Train", TRAIN_READY, "dataIndexURL", "/var/lib/sedna/database.db", "outside"),
    (IL_KIND, il_job(), IL_REFS, "Train", TRAIN_READY, "outputDir", "/output/../etc", "(normalised: /etc)"),
    # the place itself: its parent would be mounted (a file's directory is)
    (IL_KIND, il_job(), IL_REFS, "Train", TRAIN_READY, "outputDir", "/output/train/..",
     "(normalised: /output) is one of the job's places itself"),
    (IL_KIND, il_job(), IL_REFS, "Train", TRAIN_READY, "dataURL", "/output-other/data/train/1/data.txt", "outside"),
    (IL_KIND, il_job(), IL_REFS, "Train", TRAIN_READY, "dataURL", "etc/shadow", "(normalised: /etc/shadow)"),
    (IL_KIND, il_job(), IL_REFS, "Train", TRAIN_READY, "dataURL", "file:///etc/shadow", "is no storage URL"),
    (IL_KIND, il_job(), IL_REFS, "Train", TRAIN_READY, "models[0]", "/root/.ssh/id_rsa", "outside"),
    (IL_KIND, il_job(), IL_REFS, "Eval", EVAL_READY, "models[0]", "/other-job/train/1/model.pb", "outside"),
    (IL_KIND, il_job(), IL_REFS, "Eval", EVAL_READY, "dataURL", "/data/eval/1/data.txt", "outside"),
    (*S3_IL_TRAIN, "dataURL", "s3://out/il-other/data.txt", "outside"),
    (*S3_IL_TRAIN, "outputDir", "s3://other/il/train/1", "outside"),
    (*S3_IL_TRAIN, "dataURL", "s3://out/il/../x/data.txt", "'..' in its key"),
    (*S3_IL_TRAIN, "models[0]", "s3://models/other/m.pb", "outside"),
    (LL_KIND, ll_job(), LL_REFS, "Train", LL_TRAIN_READY, "dataURL", "/data/train/1/data.txt", "outside"),
    (LL_KIND, ll_job(), LL_REFS, "Eval", LL_EVAL_READY, "models[0]", "s3://out/other-ll/index.pkl", "outside"),
    (LL_KIND, ll_job(), LL_REFS, "Eval", LL_EVAL_READY, "outputDir", "/", "outside"),
]


@pytest.mark.parametrize("kind,job,refs,stage,data,field,path,why", REFUSED,
                         ids=[f"{r[0][:2]}-{r[3]}-{r[5]}={r[6]}" for r in REFUSED])
def test_a_path_outside_the_job_fails_the_stage_and_creates_no_pod(harness, kind, job, refs, stage, data, field,
                                                                   path, why):
    h = harness(kind, job, *refs)
    name = job["metadata"]["name"]
    ready(h, name, stage, with_input(data, field, path))
    h.step(name)
    assert h.pods() == []
    last = h.conditions(name)[-1]
    assert (last["stage"], last["type"], last["reason"]) == (stage, "Failed", "PathOutsideJob")
    assert f"{stage}/Ready input.{field}" in last["message"] and repr(path) in last["message"]
    assert why in last["message"] and RULE in last["message"]
    assert last["message"].endswith(f"no {WORKER[stage]} pod was created")
    assert [e for e in h.events() if e[0] == "Warning"] == [("Warning", "PathOutsideJob", last["message"])]
    h.step(name)  # a failed stage starts the next round, as a failed pod does
    assert h.states(name)[-1] == ("Train", "Waiting") and h.pods() == []


ALLOWED = [
    # ours: the data files under <out>/data/{train,eval}/<round>/, outputDir <out>/{train,eval}/<round>, the Models
    ("our LC, host paths", IL_KIND, il_job(), IL_REFS, "Train", TRAIN_READY),
    ("our LC, the trained model", IL_KIND, il_job(), IL_REFS, "Eval", EVAL_READY),
    ("our LC, S3", IL_KIND, il_job(output="s3://out/il"), S3_IL_REFS, "Train",
     {"input": {"models": [{"format": "pb", "url": "s3://models/il/initial.pb"}],
                "dataURL": "s3://out/il/data/train/2/data.txt", "dataIndexURL": "s3://out/il/data/train/2/dataIndex.txt",
                "outputDir": "s3://out/il/train/2"}}),
    ("our LC, an initial eval Model", IL_KIND, il_job(initial_eval="eval-model"),
     (*IL_REFS, model("eval-model", "/eval-models/e.pb")), "Eval",
     {"input": {"models": [{"url": "/output/train/1/model.pb"}, {"url": "/eval-models/e.pb"}],
                "dataURL": "/output/data/eval/1/data.txt"}}),
    ("our LC, LL on S3", LL_KIND, ll_job(), LL_REFS, "Train", LL_TRAIN_READY),
    ("our LC, LL's knowledge base", LL_KIND, ll_job(), LL_REFS, "Eval", LL_EVAL_READY),
    ("our LC, LL on a host path", LL_KIND, ll_job(output="/ll/out"), LL_REFS, "Eval",
     {"input": {"models": [{"format": "pkl", "url": "/ll/out/train/1/index.pkl"}],
                "dataURL": "/ll/out/data/eval/1/data.txt", "outputDir": "/ll/out/eval/1"}}),
    # Go's: the rootfs prefix trimmed from filepath.Join(rootfs, outputDir) (so a trailing "/" of outputDir is
    # gone, and a ROOTFS_MOUNT_DIR ending in "/" leaves relative paths), round 2 trains from the trained model
    ("Go's LC, outputDir with a trailing /", IL_KIND, il_job(output="/output/"), IL_REFS, "Train",
     {"input": {"models": [{"format": "pb", "url": "/output/train/1/model.pb"}],
                "dataURL": "/output/data/train/2/data.txt", "outputDir": "/output/train/2"}}),
    ("Go's LC, ROOTFS_MOUNT_DIR ending in /", IL_KIND, il_job(), IL_REFS, "Train",
     {"input": {"models": [{"format": "pb", "url": "/models/initial.pb"}],
                "dataURL": "output/data/train/1/data.txt", "outputDir": "output/train/1"}}),
    ("Go's LC, a single model", IL_KIND, il_job(), IL_REFS, "Train",
     {"input": {"model": {"format": "pb", "url": "/models/initial.pb"},
                "dataURL": "/output/data/train/1/data.txt", "outputDir": "/output/train/1"}}),
]


@pytest.mark.parametrize("what,kind,job,refs,stage,data", ALLOWED, ids=[a[0] for a in ALLOWED])
def test_the_paths_our_lc_and_gos_lc_report_build_the_pod(harness, what, kind, job, refs, stage, data):
    h = harness(kind, job, *refs)
    name = job["metadata"]["name"]
    ready(h, name, stage, data)
    h.step(name)
    assert len(h.pods(WORKER[stage])) == 1
    assert h.states(name)[-1] == (stage, "Starting") and "reason" not in h.conditions(name)[-1]
    assert [e for e in h.events() if e[0] == "Warning"] == []
