"""A path a worker reports is used only inside the job's places (issue 38 item 1): a trained model reported outside
the job's output directory and its Models' directories (an absolute path elsewhere, a ``..`` way out, a symlink out of
a place, the LC's own database) fails the stage that would use it, with ``reason: PathOutsideJob`` and a message
naming the path and the rule, and nothing is copied. The LC runs with its database where the chart puts it:
``<rootfs>/var/lib/sedna/database.db``."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from testkit import FakeGM
from testkit.learning import Conditions, LCUnderTest, deploy_stage, il_job, ll_job
from testkit.learning import send_il_objects as setup_objects

from localcontroller.managers.learning import RULE, JobPlaces
from workqueue.clock import FakeClock

KIND = "IncrementalLearningJob"
DB = "/var/lib/sedna/database.db"
DEPLOY_TRIGGER = {"condition": {"operator": "gt", "threshold": 0.1, "metric": "precision_delta[0]"}}
HOT_CONFIG = "/var/lib/sedna/model-hot-update/default/incrementallearningjob/il/model_config.json"
job = functools.partial(il_job, deploy_trigger=DEPLOY_TRIGGER)


@pytest.fixture
def lc(tmp_path) -> Iterator[LCUnderTest]:
    gm = FakeGM(features=["ack", "resync"], auto_ack=False)
    under_test = LCUnderTest(tmp_path, gm, clock=FakeClock(), db=tmp_path / "rootfs" / DB.lstrip("/"))
    yield under_test
    under_test.close()
    gm.close()


def write(lc: LCUnderTest, host_path: str, data: bytes) -> Path:
    path = lc.path(host_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def link(lc: LCUnderTest, host_path: str, target: str) -> None:
    path = lc.path(host_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(lc.path(target), path)


def outside(lc: LCUnderTest, case: str) -> str:
    """The trained model's URL a worker reports, for each way out of the job's places (set up on the rootfs)."""
    write(lc, "/secrets/key.pem", b"secret")
    if case == "absolute":
        return "/secrets/key.pem"
    if case == "dotdot":
        return "/output/il/train/1/../../../../secrets/key.pem"
    if case == "symlink":
        link(lc, "/output/il/train/1/model.pb", "/secrets/key.pem")
        return "/output/il/train/1/model.pb"
    if case == "symlinked-dir":
        link(lc, "/output/il/train/2", "/var/lib/sedna")
        return "/output/il/train/2/database.db"
    assert case == "database"
    return DB


def assert_path_outside_job(report: dict, url: str, stage: str) -> None:
    assert (report["phase"], report["status"], report["reason"]) == (stage, "Failed", "PathOutsideJob")
    assert repr(url) in report["message"] and RULE in report["message"] and "nothing was copied" in report["message"]


CASES = ["absolute", "dotdot", "symlink", "symlinked-dir", "database"]


@pytest.mark.parametrize("case", CASES)
def test_deploy_copies_nothing_from_a_path_outside_the_job(lc, case):
    setup_objects(lc)
    write(lc, "/models/deploy.pb", b"deployed")
    url = outside(lc, case)
    database = lc.path(DB).read_bytes()
    lc.send("insert", job(conditions=deploy_stage(Conditions(), new=0.9, old=0.7, trained_url=url).list))
    [report] = lc.wait_reports(KIND, 1)
    assert_path_outside_job(report, url, "Deploy")
    assert lc.path("/models/deploy.pb").read_bytes() == b"deployed"
    assert lc.path(DB).read_bytes()[:16] == database[:16]  # still the LC's SQLite file, not overwritten either


def test_the_lcs_state_is_refused_even_inside_a_declared_place(lc):
    setup_objects(lc)
    write(lc, "/models/deploy.pb", b"deployed")
    lc.send("insert", job(conditions=deploy_stage(Conditions(), new=0.9, old=0.7, trained_url=DB).list,
                          output_dir="/var/lib"))  # the output directory contains the LC's state directory
    [report] = lc.wait_reports(KIND, 1)
    assert_path_outside_job(report, DB, "Deploy")
    assert "LC's own state" in report["message"]
    assert lc.path("/models/deploy.pb").read_bytes() == b"deployed"


def test_a_model_inside_the_job_is_still_deployed(lc):
    setup_objects(lc)
    write(lc, "/output/il/train/1/model.pb", b"trained")
    lc.send("insert", job(conditions=deploy_stage(Conditions(), new=0.9, old=0.7).list))
    assert lc.wait_reports(KIND, 1)[0]["status"] == "Ready"
    assert lc.path("/models/deploy.pb").read_bytes() == b"trained"


@pytest.mark.parametrize("case", ["absolute", "database"])
def test_eval_does_not_hand_a_path_outside_the_job_to_the_eval_worker(lc, case):
    setup_objects(lc)
    url = outside(lc, case)
    conds = Conditions().add("Train", "Waiting").add("Train", "Ready").add(
        "Train", "Completed", output={"models": [{"format": "pb", "url": url}]}).add("Eval", "Waiting")
    lc.send("insert", job(conditions=conds.list))
    [report] = lc.wait_reports(KIND, 1)
    assert_path_outside_job(report, url, "Eval")
    assert not lc.path("/output/il/data/eval").joinpath("0").exists()


def test_a_hot_update_copies_nothing_from_a_path_outside_the_job(lc):
    setup_objects(lc)
    write(lc, "/models/deploy.pb", b"deployed")
    hot_job = functools.partial(job, hot_update=True, annotations={"sedna.io/model-hot-update-config": HOT_CONFIG,
                                                                   "sedna.io/Deploy": "edge-1"})
    conds = deploy_stage(Conditions(), new=0.9, old=0.7, trained_url=DB)
    conds.add("Deploy", "Ready").add("Deploy", "Starting").add("Deploy", "Running")
    lc.send("insert", hot_job(conditions=conds.list))
    [report] = lc.wait_reports(KIND, 1)
    assert_path_outside_job(report, DB, "Deploy")
    assert not lc.path(HOT_CONFIG).parent.exists() or not any(lc.path(HOT_CONFIG).parent.iterdir())
    assert lc.path("/models/deploy.pb").read_bytes() == b"deployed"


def test_lifelong_learning_deploys_no_index_from_outside_the_job(lc):
    write(lc, "/data/ds.txt", b"a.jpg 1\n")
    from testkit.learning import dataset
    lc.send("insert", dataset())
    conds = Conditions().add("Train", "Waiting").add("Train", "Ready").add("Train", "Completed").add(
        "Eval", "Waiting").add("Eval", "Ready").add(
        "Eval", "Completed", output={"models": [{"format": "pkl", "url": DB}]}).add("Deploy", "Waiting")
    lc.send("insert", ll_job(conditions=conds.list))
    [report] = lc.wait_reports("LifelongLearningJob", 1)
    assert_path_outside_job(report, DB, "Deploy")
    assert not lc.path("/output/ll/deploy/index.pkl").exists()


@pytest.mark.parametrize("url,inside", [
    ("s3://out/il/train/1/model.pb", True),
    ("s3://models/deploy.pb", False),  # the Model's directory is the bucket "models"' prefix "m/"
    ("s3://models/m/new.pb", True),
    ("s3://other-tenant/il/model.pb", False),
    ("s3://out/il/../secret", False),
    ("s3://out/ilx/model.pb", False),
    ("/models/any.pb", False),  # no local place
])
def test_s3_places_are_a_bucket_and_a_key_prefix(tmp_path, url, inside):
    places = JobPlaces.of(str(tmp_path), str(tmp_path / "lc.db"), "s3://out/il", ["s3://models/m/deploy.pb"])
    assert (places.problem(url) == "") is inside
